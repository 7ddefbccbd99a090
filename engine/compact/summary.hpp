// summary.hpp — the checks a compaction summary must pass before it is
// committed (DESIGN §6, §11 invariants 2, 3, 4), and its normal form.
//
// A summary is JSON (schema/json/compaction_summary.schema.json). The hard
// rules, each reported by name:
//   summary_json     it parses, and is an object
//   summary_schema   it matches the schema
//   current_task     goal.current_task is not empty
//   next_steps       next_steps has a non-empty item
//   files_modified   every file written in the range is in files.modified
//   tool_errors      every tool error in the range has an errors entry
//                    naming its tool_call_id or event_id
//   tool_pair_split  the cut leaves no call in the range with its result
//                    after it
//   pending_call     no call in the range is still pending
//   source_refs      it names at least one event of the range (provenance
//                    source_event_ids, or an item's event_id, source_refs
//                    or evidence_refs)
// A failure of the summarizer itself (it threw, returned nothing, took too
// long) is the check "summarizer".
#pragma once

#include "compact/planner.hpp"
#include "json/json_writer.hpp"

#include <string>
#include <vector>

namespace ctxdb::compact {

struct Check {
  std::string name;
  bool ok = true;
  std::string detail;               // why it failed
  std::vector<std::string> missing; // what it found missing (paths, call ids)
};

struct SummarizerInfo {
  std::string name;
  std::string version;
};

// Runs every check of a summary against its plan; never throws for a bad
// summary (that is what the checks report).
std::vector<Check> check_summary(const Plan &plan, std::string_view summary_json);

bool all_ok(const std::vector<Check> &checks);
// "a, b" — the names of the failed checks.
std::string failed_names(const std::vector<Check> &checks);
void write_checks(json::JsonWriter &w, const std::vector<Check> &checks);

// The summary as committed: as given, with provenance completed by the
// engine (range, summarizer when absent, the previous compaction). The
// summary must have passed summary_json.
std::string normalize_summary(const Plan &plan, std::string_view summary_json,
                              const SummarizerInfo &info);

} // namespace ctxdb::compact
