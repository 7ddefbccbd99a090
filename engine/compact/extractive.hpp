// extractive.hpp — the built-in summarizer: a compaction summary built
// from the state and the range's events alone, with no model, so the same
// plan always gives the same summary.
//
// It inherits the previous compaction's summary: decisions, facts, files,
// tool results, errors and work done are the union of the previous
// summary's and the range's (the newer entry wins for the same decision,
// fact or path), so what was known before the first compaction is still
// there after the third. Goal, constraints, plan progress and open
// questions come from the state at the leaf, which is already the fold of
// the whole path.
#pragma once

#include "compact/planner.hpp"
#include "compact/summary.hpp"

#include <string>

namespace ctxdb::compact {

inline const SummarizerInfo kExtractive{"ctxdb.extractive", "1"};

// compaction_summary.schema.json.
std::string extractive_summary(const Plan &plan);

} // namespace ctxdb::compact
