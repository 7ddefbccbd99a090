// compactor.hpp — compaction's check-and-commit step, and compact(), which
// runs plan → summarize → check → commit in one call (DESIGN §6).
//
// A commit is one append: a CompactionCompleted at the leaf the plan was
// made at (kConflict if the branch moved meanwhile), in one transaction,
// so a process killed at any point leaves either the whole compaction or
// none of it. The raw events stay (invariant 8); the compiler reads the
// summary and the events from first_kept_event_id on.
//
// A summary that fails a check, a summarizer that throws, returns nothing
// or runs past policy.timeout_ms: nothing is committed, one
// CompactionFailed event records why, and the call throws kCheckFailed
// naming the failed checks. A host summarizer runs on the calling thread
// and cannot be interrupted safely, so "times out" means: its answer came
// later than timeout_ms and is not used.
#pragma once

#include "compact/planner.hpp"
#include "compact/summary.hpp"

#include <functional>
#include <string>

namespace ctxdb::compact {

// A host's summarizer: the plan JSON in, the summary JSON out; it throws
// (any exception) to fail.
using Summarizer = std::function<std::string(std::string_view plan_json)>;

// plan → summarize (the host's, or the built-in extractive one when
// `host` is null) → check → commit. Returns compaction_result.schema.json;
// "nothing_to_compact" when the plan's range is empty (nothing written).
std::string compact(compile::Sources &src, const std::string &session_id, const Policy &policy,
                    const Summarizer *host);

// Checks and commits a summary for a plan a host made earlier
// (plan_compaction's JSON: its leaf_event_id and cut are used).
std::string commit(compile::Sources &src, const std::string &session_id, std::string_view plan_json,
                   std::string_view summary_json);

// A structured summary of the path abandoned at from_leaf since its common
// ancestor with to_event, built by the extractive summarizer and appended
// at to_event as a BranchSummarized event (a fork when to_event is not a
// leaf), so the branch that continues there knows what was tried. Its
// "text" enters compiled contexts as a user message. kInvalidArg when
// from_leaf is on to_event's path (nothing was abandoned).
// (branch_summary.schema.json)
std::string summarize_branch(compile::Sources &src, const std::string &session_id,
                             const std::string &from_leaf, const std::string &to_event);

// The compactions on a branch's path, oldest first
// (compactions.schema.json).
std::string list(compile::Sources &src, const std::string &session_id,
                 const std::optional<std::string> &branch);

} // namespace ctxdb::compact
