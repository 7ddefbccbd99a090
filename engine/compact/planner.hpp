// planner.hpp — the first step of a compaction (DESIGN §6): where to cut a
// branch's conversation, and everything a summary of what lies before the
// cut must know and cover.
//
// The cut keeps the most recent whole turns up to keep_recent_tokens; a
// turn larger than that alone is split after a closed tool pair (its user
// request then goes to the summary). Turns and units come from
// compile::History, so the planner cuts only where the compiler would:
// never between a call and its result, and never before a call the host is
// still running (one in the newest turn with nothing after it). A call the
// conversation moved on from, or a cancelled one, is a closed pair: the cut
// passes it.
//
// The range is what lies between the previous compaction's cut (or the
// session's start) and the new one, on the branch's path: a second
// compaction summarizes the previous summary plus that range. A plan costs
// O(range), not O(session).
#pragma once

#include "compile/compiler.hpp"
#include "project/agent_state.hpp"
#include "json/json_writer.hpp"

#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

namespace ctxdb::compact {

// compaction_policy.schema.json, with its defaults.
struct Policy {
  std::optional<std::string> branch;
  int64_t context_window = 128000;
  int64_t reserve_tokens = 16384;
  double soft_threshold = 0.8;
  std::string soft_threshold_json = "0.8"; // as given, to write it back exactly
  int64_t keep_recent_tokens = 20000;
  int64_t min_reclaim_tokens = 4096;
  int64_t summary_tokens = 2000;
  int64_t timeout_ms = 0;
  int64_t preview_min_tokens = 500;
  int64_t preview_bytes = 800;
  // The transcript's budget; 0 (the default) derives it from the window
  // (see transcript_budget).
  int64_t transcript_max_tokens = 0;
};

// kInvalidJson / kInvalidArg (naming the field); empty text is {}.
Policy parse_policy(std::string_view json);
void write_policy(json::JsonWriter &w, const Policy &p);

// The branch a compaction works on, as of its leaf.
struct Target {
  std::string session_id;
  int64_t session_no = 0;
  log::Branch branch;
  int64_t leaf_seq = 0;
  std::string leaf_id;
  project::BranchPath path;
  project::AgentState state; // at the leaf
  std::optional<project::CompactionRef> previous;
  int64_t from_seq = 1; // the previous compaction's first kept event, else 1
};

// kNotFound for an unknown session, branch or event. With leaf_id, the
// branch is that event's and the target is as of it.
Target resolve(compile::Sources &src, std::string_view session_id,
               const std::optional<std::string> &branch,
               const std::optional<std::string> &leaf_id = std::nullopt);

struct FileTouch {
  std::string path, event_id;
  std::optional<std::string> change_summary;
};

struct ToolError {
  std::string call_id, name, error, event_id;
};

struct ToolResult {
  std::string call_id, name, preview, artifact_id, event_id;
};

struct MemoryCandidate {
  std::string kind; // fact | decision | preference | constraint
  std::string content;
  std::optional<std::string> confidence; // canonical JSON number
  std::string event_id;
};

struct Plan {
  Target target;
  Policy policy;
  bool empty = true; // nothing before the cut: nothing to compact
  std::string reason;
  // The cut: the first kept event (empty when nothing is kept), its seq
  // (leaf_seq + 1 then), and how it was chosen.
  std::string first_kept_event_id;
  int64_t cut_seq = 0;
  std::string cut_kind; // turn | split_turn | all
  std::optional<project::Sourced> split_request;
  // The range [from_seq, to_seq] on the path.
  int64_t from_seq = 0, to_seq = 0;
  std::string from_event_id, to_event_id;
  int64_t range_events = 0, range_messages = 0;
  // Tokens: of the previous summary, the range's messages, the kept ones.
  int64_t previous_summary_tokens = 0, range_tokens = 0, kept_tokens = 0;
  std::string previous_compaction_id;
  std::string previous_summary; // canonical JSON ("" when none)
  // What the range holds that a summary must cover.
  std::vector<project::Sourced> prompts;
  std::vector<FileTouch> files_read, files_modified;
  std::vector<ToolError> tool_errors;
  std::vector<ToolResult> tool_results; // results kept whole in artifacts
  std::vector<project::Decision> decisions;
  std::vector<MemoryCandidate> memory;
  // What a cut must never do: calls in the range answered after it, and
  // calls in the range with no answer yet.
  std::vector<std::string> split_pairs, pending_in_range;
  std::vector<std::string> pending_kept; // calls still running, after the cut
  std::unordered_set<std::string> range_ids;
  // The range as text for a summarizer's prompt, within the budget: when
  // it is larger, its middle is left out (see cap_transcript).
  std::string transcript;
  int64_t transcript_tokens = 0;
  struct Omitted {
    int64_t entries = 0, tokens = 0, from_seq = 0, to_seq = 0;
  };
  std::optional<Omitted> transcript_omitted;

  int64_t tokens_before() const { return previous_summary_tokens + range_tokens + kept_tokens; }
};

// What a summarizer can be given of the range: the policy's
// transcript_max_tokens, else the hard limit (context_window -
// reserve_tokens) less the previous summary and room for the new one
// (summary_tokens): the summarizer is a model with the same window.
int64_t transcript_budget(const Policy &policy, int64_t previous_summary_tokens);

// Chooses the cut by the policy and analyses the range before it.
Plan plan(compile::Sources &src, const std::string &session_id, const Policy &policy);
// The range before a given cut (a plan a host kept): kNotFound when
// first_kept_event_id is not on the path after the previous cut ("" keeps
// nothing).
Plan plan_at(compile::Sources &src, const std::string &session_id, const std::string &leaf_id,
             const std::string &first_kept_event_id, const Policy &policy);

// The range of a target from target.from_seq, cut before first_kept (""
// keeps nothing; nullopt: the cut by the policy). What plan() and
// plan_at() run once they have resolved their target.
Plan plan_target(compile::Sources &src, Target target, const Policy &policy,
                 const std::optional<std::string> &first_kept);

// The plan as compaction_plan.schema.json.
std::string to_json(const Plan &p);
// The plan's range: {"branch_id", "from_seq", "to_seq", "from_event_id",
// "to_event_id", "events", "messages"}.
void write_range(json::JsonWriter &w, const Plan &p);

// Text cut to at most max bytes at a UTF-8 boundary, "…" marking a cut.
std::string shorten(std::string_view s, size_t max);
// The elements of an array field (none when absent or not an array).
std::vector<simdjson::dom::element> items_of(simdjson::simdjson_result<simdjson::dom::element> v);

// The branch's context size and whether compacting pays
// (compaction_advice.schema.json). Reads cached counts only.
std::string should_compact(compile::Sources &src, const std::string &session_id,
                           const Policy &policy);

} // namespace ctxdb::compact
