// Claude Code's session files (~/.claude/projects/<project>/<sessionId>.jsonl
// and <sessionId>/subagents/agent-<agentId>.jsonl) read as ctxdb drafts.
//
// Claude Code publishes no schema; the records were learned from public
// code that writes or reads them:
//  - Claude Code's own session storage as public mirrors of its source
//    reproduce it (utils/sessionStorage.ts: insertMessageChain writes
//    parentUuid, a tool result's parentUuid = sourceToolAssistantUUID, a
//    compact_boundary's parentUuid null and logicalParentUuid = the leaf
//    before it; buildConversationChain walks parentUuid from the leaf, and
//    recoverOrphanedParallelToolResults splices back the sibling records of
//    one message.id and their tool results, sorted by timestamp), and its
//    types/message.ts (system subtypes, CompactMetadata);
//  - michaelschleiss/claude-convos JSONL_SPEC.md (every record type and
//    field, counted over real files: metadata types, toolUseResult shapes,
//    content blocks, the uuid tree and where it branches);
//  - daaain/claude-code-log (claude_code_log/models.py, dag.py: user,
//    assistant, system, summary {summary, leafUuid}, queue-operation,
//    ai-title, attachment and progress records; subagent files linked by
//    toolUseResult.agentId and agent-<id>.meta.json);
//  - ryoppippi/ccusage (usage per message.id, repeated on every line of a
//    message).
//
// What each record becomes (tests/fixtures/transcripts/claude-code/README.md
// lists the fixtures that show it):
//  - assistant lines with one message.id (one API message written a block
//    a line, interleaved with the tool results) → one
//    AssistantMessageCreated, read by the anthropic.messages reader with
//    the last line's usage (each line repeats the usage so far; the last
//    is the whole); isApiErrorMessage → ErrorRaised.
//  - user lines: tool_result blocks → ToolCallFinished / ToolCallFailed
//    (is_error) paired by tool_use_id (a Task / Agent result adds
//    SubagentStarted and SubagentFinished around it); the user's words
//    and images → UserPromptSubmitted; everything else a user line carries
//    → ContextAdded {kind, text, source}: isMeta lines ("meta"),
//    <command-name>/<command-message>/<command-args> ("command"),
//    <local-command-stdout|stderr> ("command_output"),
//    <local-command-caveat> and the caveat text ("caveat"), <bash-input>
//    ("bash_input"), <bash-stdout|stderr> ("bash_output"),
//    <task-notification> ("task_notification"), <system-reminder>
//    ("system_reminder"), "[Request interrupted by user…]"
//    ("interruption"); CLAUDE.md contents are kind "instructions"
//    ("claude_md"); an image on an isMeta line goes with its context.
//    isCompactSummary → CompactionCompleted. A result whose call is not
//    open on its path → claude-code.orphan_tool_result.
//  - content blocks no core event holds (a document, a server tool's
//    blocks) → claude-code.content_block {block}, after their message.
//  - system compact_boundary + the isCompactSummary line after it →
//    CompactionCompleted: Claude keeps nothing before the boundary, so
//    first_kept_event_id is the compaction's own id (a partial compaction's
//    preservedSegment keeps its head on: that head's event); the boundary itself
//    and every other system subtype → claude-code.system.<subtype>,
//    except local_command (a ContextAdded).
//  - calls that got no result when the conversation moved on (a prompt,
//    another message, an interruption, a compaction, a rewind that left
//    their branch) → ToolCallCancelled; one pending at the end of the
//    file stays pending.
//  - attachment lines: a queued_command the user typed while Claude worked
//    → UserPromptSubmitted (task notifications and others' → ContextAdded),
//    nested_memory (a CLAUDE.md) → ContextAdded instructions,
//    hook_additional_context → ContextAdded "hook"; others →
//    claude-code.attachment.
//  - records with no core meaning (file-history-snapshot, queue-operation,
//    summary, custom-title, ai-title, progress, attachment, …) →
//    claude-code.<type> {record, provenance}; a type not listed in
//    kKnownTypes is also counted in Parsed.unknown.
//  - sidechain records of a session file (older versions) and a
//    subagents/ file → their own DraftSession, cc-<sessionId>-<agentId>.
//
// The uuid tree: the path Claude resumes (root → the last message, and on
// to the last record when that one follows it) is emitted first, so it
// becomes the branch `main`; every other branch after it, forking where its
// first record's parent is. Nodes off the path that hold no message (a
// hook's progress) go in line after their parent rather than fork; a
// record without a uuid (a snapshot, a title) goes after the node written
// before it. Every event gives its parent_id.
//
// Ids: a record's main event is <session>-<uuid>; the others it yields add
// -r<n> (its n-th tool result), -s<n> / -f<n> (the subagent around it),
// -c<n> (calls it closed), -x<n> (more context), -k<n> (other blocks); a
// left branch's closed calls <session>-<leaf uuid>-b<n>; a record without
// a uuid <session>-L<line>. The SessionStarted is made from the first
// record with a uuid (cwd, version, git branch), so it never changes as
// the file grows; model and titles come later, as their own events.
#include "transcript/claude_code.hpp"

#include "error.hpp"
#include "provider/answer.hpp"
#include "provider/formats.hpp"
#include "transcript/reader_common.hpp"
#include "transcript/transcript.hpp"
#include "json/json_writer.hpp"
#include "json/parse.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace ctxdb::transcript {

namespace {

using simdjson::dom::element;

constexpr std::string_view kFormat = "claude-code";

// Record types Claude Code writes that have no core meaning: kept as
// custom events, not counted as unknown (JSONL_SPEC.md "All Entry Types").
// clang-format off
const std::set<std::string, std::less<>> kKnownTypes = {
    "file-history-snapshot", "queue-operation", "summary", "custom-title", "ai-title",
    "last-prompt", "tag", "agent-name", "agent-color", "agent-setting", "mode",
    "worktree-state", "pr-link", "attribution-snapshot", "speculation-accept",
    "content-replacement", "marble-origami-commit", "marble-origami-snapshot", "progress",
    "attachment", "permission-mode"};

// System subtypes Claude Code writes (types/message.ts, JSONL_SPEC.md §3).
const std::set<std::string, std::less<>> kKnownSubtypes = {
    "compact_boundary", "microcompact_boundary", "turn_duration", "stop_hook_summary",
    "api_error", "api_retry", "local_command", "informational", "init", "interrupt",
    "away_summary", "memory_saved", "agents_killed", "api_metrics", "bridge_status",
    "file_snapshot", "thinking", "permission_retry", "scheduled_task_fire"};
// clang-format on

// --- small readers ----------------------------------------------------------

std::string_view str(element o, std::string_view key) {
  std::string_view s;
  if (o.at_key(key).get(s)) return {};
  return s;
}

bool flag(element o, std::string_view key) {
  bool b = false;
  if (o.at_key(key).get(b)) return false;
  return b;
}

std::optional<element> child(element o, std::string_view key) {
  element v;
  if (o.at_key(key).get(v) || v.is_null()) return std::nullopt;
  return v;
}

// --- records -----------------------------------------------------------------

struct Record {
  int64_t line = 0;
  std::string_view text;
  size_t end = 0;
  std::string type, subtype, uuid, parent, logical_parent;
  std::string agent_id, source_session, message_id;
  bool sidechain = false, meta = false, compact_summary = false, api_error = false;
  bool stopped = false;        // an assistant line with a stop_reason
  bool conversational = false; // a user or assistant line
  bool tool_results = false;   // a user line with tool_result blocks
  int64_t ts = -1;
  std::string first_text; // a user line's text: a sidechain's task, to find its Task call
  bool chain = false;     // has a uuid: a node of the tree
  int session = 0;
};

// The text of a message's content: a string, or its text blocks joined.
std::string content_text(element content) {
  if (content.is_string()) return std::string(content.get_string().value());
  std::string out;
  simdjson::dom::array a;
  if (content.get(a)) return out;
  for (element b : a) {
    if (str(b, "type") != "text") continue;
    if (!out.empty()) out += "\n";
    out += str(b, "text");
  }
  return out;
}

// A message's content; kInvalidArg naming the line when it has none.
element message_content(element doc, const std::string &at) {
  element c;
  if (doc["message"]["content"].get(c) || c.is_null())
    throw Error(Code::kInvalidArg, at + ": message.content is missing");
  return c;
}

Record read_record(simdjson::dom::parser &parser, const Line &l, const ParseOptions &o) {
  element doc = parse_line(parser, o.file, l);
  Record r;
  r.line = l.number;
  r.text = l.text;
  r.end = size_t(l.end);
  std::string_view type;
  if (doc["type"].get(type)) line_error(o.file, l.number, "the record has no \"type\" string");
  r.type = std::string(type);
  r.subtype = std::string(str(doc, "subtype"));
  r.uuid = std::string(str(doc, "uuid"));
  r.chain = !r.uuid.empty();
  r.parent = std::string(str(doc, "parentUuid"));
  r.logical_parent = std::string(str(doc, "logicalParentUuid"));
  r.agent_id = std::string(str(doc, "agentId"));
  r.source_session = std::string(str(doc, "sessionId"));
  r.sidechain = flag(doc, "isSidechain");
  r.meta = flag(doc, "isMeta");
  r.compact_summary = flag(doc, "isCompactSummary");
  r.api_error = flag(doc, "isApiErrorMessage");
  std::string_view ts = str(doc, "timestamp");
  if (ts.empty())
    if (auto snap = child(doc, "snapshot")) ts = str(*snap, "timestamp");
  r.ts = iso8601_ms(ts).value_or(-1);
  r.conversational = r.chain && (r.type == "user" || r.type == "assistant");
  if (r.conversational) {
    auto m = child(doc, "message");
    if (!m || !m->is_object())
      line_error(o.file, l.number, "a " + r.type + " record needs a \"message\" object");
    if (r.type == "assistant") {
      r.message_id = std::string(str(*m, "id"));
      r.stopped = !str(*m, "stop_reason").empty();
    } else if (auto c = child(*m, "content")) {
      r.first_text = content_text(*c);
      simdjson::dom::array a;
      if (!c->get(a))
        for (element b : a) r.tool_results = r.tool_results || str(b, "type") == "tool_result";
    }
  }
  return r;
}

// --- what a user's text is ---------------------------------------------------

struct Part {
  bool words = false; // the user speaking
  std::string kind;   // ContextAdded: "context" | "instructions"
  std::string source; // ContextAdded source
};

bool starts(std::string_view s, std::string_view p) {
  size_t b = s.find_first_not_of(" \t\r\n");
  return b != std::string_view::npos && s.substr(b).starts_with(p);
}

// What one text block of a user line is (the tags Claude Code wraps its
// own messages in: JSONL_SPEC.md, claude-code-log's user_factory.py).
Part classify(std::string_view text, bool meta) {
  Part p;
  p.kind = "context";
  // Claude Code's own message with a CLAUDE.md ("Contents of <path>:"),
  // never the user's words that mention one.
  if ((meta || starts(text, "<system-reminder>") || starts(text, "Contents of ")) &&
      text.find("Contents of ") != std::string_view::npos &&
      text.find("CLAUDE.md") != std::string_view::npos) {
    p.kind = "instructions";
    p.source = "claude_md";
  } else if (starts(text, "<command-name>") || starts(text, "<command-message>") ||
             starts(text, "<command-args>")) {
    p.source = "command";
  } else if (starts(text, "<local-command-stdout>") || starts(text, "<local-command-stderr>")) {
    p.source = "command_output";
  } else if (starts(text, "<local-command-caveat>") ||
             starts(text, "Caveat: The messages below were generated by the user")) {
    p.source = "caveat";
  } else if (starts(text, "<bash-input>")) {
    p.source = "bash_input";
  } else if (starts(text, "<bash-stdout>") || starts(text, "<bash-stderr>")) {
    p.source = "bash_output";
  } else if (starts(text, "<task-notification>")) {
    p.source = "task_notification";
  } else if (starts(text, "<system-reminder>")) {
    p.source = "system_reminder";
  } else if (starts(text, "[Request interrupted by user")) {
    p.source = "interruption";
  } else if (meta) {
    p.source = "meta";
  } else {
    p.words = true;
  }
  return p;
}

// --- sessions ------------------------------------------------------------------

struct OpenCall {
  std::string id, name, message_id;
  std::string task; // a Task / Agent call's description or prompt
  std::string prompt;
};

struct OtherBlock {
  int64_t line = 0;
  std::string json;
};

void keep_others(element content, std::initializer_list<std::string_view> known, int64_t line,
                 std::vector<OtherBlock> &out);

struct PathState {
  std::vector<OpenCall> open;
  std::string last_event; // the event the next one on this path follows
};

struct SessionInfo {
  std::string id, parent_id, source_session, agent_id;
  std::vector<size_t> records; // indices into the file's records, in file order
};

class SessionReader {
public:
  SessionReader(const std::vector<Record> &recs, const SessionInfo &s, const ParseOptions &o,
                Parsed &out, const std::unordered_map<std::string, std::string> &children)
      : recs_(recs), s_(s), o_(o), out_(out), children_by_prompt_(children) {}

  void run();

private:
  const Record &rec(int i) const { return recs_[s_.records[size_t(i)]]; }
  int size() const { return int(s_.records.size()); }

  void index_tree();
  std::vector<int> path_to(int leaf, int &attach);
  void recover(std::vector<int> &chain);
  void emit_path(int leaf, bool is_main);
  void emit_bookkeeping_under(int i, PathState &st);
  void emit_record(int i, size_t pos, PathState &st); // pos: its place on the path
  void emit_custom(int i, PathState &st, std::string id);
  void emit_assistant(int i, size_t pos, PathState &st);
  void emit_user(int i, PathState &st);
  void emit_results(int i, element doc, const std::vector<element> &blocks, PathState &st);
  void emit_others(PathState &st, const std::string &id, int64_t ts, std::string_view uuid,
                   const std::vector<OtherBlock> &others);
  void emit_system(int i, PathState &st);
  void emit_attachment(int i, PathState &st);
  void add_context(PathState &st, const std::string &id, int i, const Part &p,
                   std::string_view text);
  void emit_compaction(int i, element doc, PathState &st);
  std::string kept_from(int from, std::string_view head);
  void cancel(PathState &st, const std::string &id_base, int64_t line, int64_t ts,
              std::string_view reason, const std::string &keep_message = "");
  void add(PathState &st, const std::string &id, std::string_view type, std::string_view actor,
           int64_t ts, std::string_view payload, int64_t first, int64_t last,
           std::string_view record_id);
  Provenance provenance(int64_t first, int64_t last, std::string_view record_id) const;
  std::string event_id(const Record &r) const { return sanitize_id(s_.id + "-" + r.uuid); }
  std::string group_key(const Record &r) const {
    return r.message_id + (r.line > o_.resume_after_line ? "#2" : "#1");
  }
  int64_t ts_of(int i) const;
  element parse(int i) { return json::parse(parser_, rec(i).text, where(o_.file, rec(i).line)); }

  const std::vector<Record> &recs_;
  const SessionInfo &s_;
  const ParseOptions &o_;
  Parsed &out_;
  const std::unordered_map<std::string, std::string> &children_by_prompt_;
  simdjson::dom::parser parser_;

  std::vector<int> parent_; // effective parent, -1 for a root
  std::vector<std::vector<int>> kids_;
  std::vector<int> latest_;                  // the latest-written record of each subtree
  std::vector<std::vector<int>> meta_after_; // records without uuid, after the one before them
  std::vector<int> meta_first_;              // ... before any node
  std::unordered_map<std::string, std::vector<int>> group_; // message.id (+ side) → lines
  std::vector<bool> emitted_, included_;
  std::unordered_map<std::string, int> by_uuid_;             // node of each uuid
  std::unordered_map<std::string, std::string> first_event_; // uuid → its first event
  std::vector<bool> talks_;       // a subtree holds a user or assistant node
  std::vector<bool> on_path_;     // a node of the path being emitted
  std::vector<size_t> chain_pos_; // ... and its place on that path
  std::vector<PathState> after_;  // the path's state after each node
  PathState start_;
};

int64_t SessionReader::ts_of(int i) const {
  // A record without a time takes the one of the record before it.
  for (int j = i; j >= 0; --j)
    if (rec(j).ts >= 0) return rec(j).ts;
  return 0;
}

void SessionReader::index_tree() {
  int n = size();
  for (int i = 0; i < n; ++i)
    if (rec(i).chain) by_uuid_.emplace(rec(i).uuid, i);
  parent_.assign(size_t(n), -1);
  kids_.assign(size_t(n), {});
  meta_after_.assign(size_t(n), {});
  int last_node = -1;
  for (int i = 0; i < n; ++i) {
    const Record &r = rec(i);
    // A later line with a uuid already seen (a copy) is kept as a record
    // beside the tree, not as a second node.
    bool node = r.chain && by_uuid_.at(r.uuid) == i;
    if (!node) {
      (last_node < 0 ? meta_first_ : meta_after_[size_t(last_node)]).push_back(i);
      continue;
    }
    auto p = by_uuid_.find(r.parent);
    if (r.parent.empty() || p == by_uuid_.end()) p = by_uuid_.find(r.logical_parent);
    if (p != by_uuid_.end() && p->second != i) parent_[size_t(i)] = p->second;
    last_node = i;
    if (r.conversational && r.type == "assistant" && !r.message_id.empty())
      group_[group_key(r)].push_back(i);
  }
  // Break cycles: a walk that meets itself cuts the edge it came by.
  std::vector<char> state(size_t(n), 0); // 0 unseen, 1 on the walk, 2 known to reach a root
  for (int i = 0; i < n; ++i) {
    std::vector<int> walk;
    int c = i;
    while (c >= 0 && state[size_t(c)] == 0) {
      state[size_t(c)] = 1;
      walk.push_back(c);
      c = parent_[size_t(c)];
    }
    if (c >= 0 && state[size_t(c)] == 1) parent_[size_t(walk.back())] = -1;
    for (int w : walk) state[size_t(w)] = 2;
  }
  std::vector<int> order;
  for (int i = 0; i < n; ++i) {
    if (parent_[size_t(i)] >= 0)
      kids_[size_t(parent_[size_t(i)])].push_back(i);
    else if (rec(i).chain && by_uuid_.at(rec(i).uuid) == i)
      order.push_back(i);
  }
  for (size_t k = 0; k < order.size(); ++k)
    for (int c : kids_[size_t(order[k])]) order.push_back(c);
  latest_.assign(size_t(n), -1);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    int i = *it;
    int best = i;
    for (int c : kids_[size_t(i)])
      if (latest_[size_t(c)] > best) best = latest_[size_t(c)];
    latest_[size_t(i)] = best;
  }
  talks_.assign(size_t(n), false);
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    int i = *it;
    talks_[size_t(i)] = rec(i).conversational;
    for (int c : kids_[size_t(i)]) talks_[size_t(i)] = talks_[size_t(i)] || talks_[size_t(c)];
  }
  on_path_.assign(size_t(n), false);
  chain_pos_.assign(size_t(n), 0);
  emitted_.assign(size_t(n), false);
  included_.assign(size_t(n), false);
  after_.assign(size_t(n), {});
}

// The nodes from the first not yet emitted down to `leaf`; `attach` is the
// emitted node it continues (-1: the session's start).
std::vector<int> SessionReader::path_to(int leaf, int &attach) {
  std::vector<int> chain;
  std::unordered_set<int> seen;
  int c = leaf;
  while (c >= 0 && !emitted_[size_t(c)] && seen.insert(c).second) {
    chain.push_back(c);
    c = parent_[size_t(c)];
  }
  attach = c;
  std::reverse(chain.begin(), chain.end());
  return chain;
}

// Claude's recoverOrphanedParallelToolResults: a message's other lines
// and the tool results under them, off the single-parent walk, go right
// after the last line of that message on the path, in timestamp order.
void SessionReader::recover(std::vector<int> &chain) {
  std::unordered_set<int> on(chain.begin(), chain.end());
  std::unordered_map<std::string, int> anchor;
  for (int i : chain)
    if (rec(i).type == "assistant" && !rec(i).message_id.empty()) anchor[group_key(rec(i))] = i;
  std::unordered_map<int, std::vector<int>> inserts;
  std::set<std::string> done;
  for (int i : chain) {
    if (rec(i).type != "assistant" || rec(i).message_id.empty()) continue;
    std::string key = group_key(rec(i));
    if (!done.insert(key).second) continue;
    std::vector<int> siblings, results;
    for (int m : group_[key]) {
      if (!on.count(m) && !emitted_[size_t(m)]) siblings.push_back(m);
      for (int k : kids_[size_t(m)])
        if (rec(k).tool_results && !on.count(k) && !emitted_[size_t(k)]) results.push_back(k);
    }
    auto by_time = [&](int a, int b) { return rec(a).ts < rec(b).ts; };
    std::stable_sort(siblings.begin(), siblings.end(), by_time);
    std::stable_sort(results.begin(), results.end(), by_time);
    auto &ins = inserts[anchor[key]];
    for (int x : siblings) on.insert(x), ins.push_back(x);
    for (int x : results)
      if (on.insert(x).second) ins.push_back(x);
  }
  if (inserts.empty()) return;
  std::vector<int> out;
  for (int i : chain) {
    out.push_back(i);
    auto it = inserts.find(i);
    if (it != inserts.end()) out.insert(out.end(), it->second.begin(), it->second.end());
  }
  chain = std::move(out);
}

void SessionReader::run() {
  index_tree();
  // The session itself.
  int first_node = -1;
  for (int i = 0; i < size() && first_node < 0; ++i)
    if (rec(i).chain) first_node = i;
  {
    json::JsonWriter p;
    p.begin_object().field("agent_id", kFormat);
    if (first_node >= 0) {
      simdjson::dom::parser local;
      element d = json::parse(local, rec(first_node).text, where(o_.file, rec(first_node).line));
      if (auto cwd = str(d, "cwd"); !cwd.empty()) p.field("cwd", cwd);
      if (auto v = str(d, "version"); !v.empty()) p.field("version", v);
      if (auto g = str(d, "gitBranch"); !g.empty()) p.field("git_branch", g);
    }
    if (!s_.parent_id.empty()) p.field("parent_session_id", s_.parent_id);
    p.field("source_session_id", s_.source_session);
    if (!s_.agent_id.empty()) p.field("source_agent_id", s_.agent_id);
    int64_t line = first_node >= 0 ? rec(first_node).line : (size() ? rec(0).line : 1);
    p.end_object();
    std::string create =
        session_create_json(s_.id, sanitize_id(s_.id + "-start"), kFormat,
                            size() ? ts_of(first_node >= 0 ? first_node : 0) : int64_t(0), p.str(),
                            provenance(line, line, first_node >= 0 ? rec(first_node).uuid : ""));
    out_.sessions.push_back({s_.id, std::move(create), s_.parent_id});
  }
  start_.last_event = sanitize_id(s_.id + "-start");
  for (int m : meta_first_) emit_custom(m, start_, "");
  // The path Claude resumes ends at the last message written, and runs on
  // to the last node when that one follows it (a turn's duration); a
  // bookkeeping node elsewhere (a hook's progress) does not move it.
  int leaf = -1, last = -1;
  for (int i = size() - 1; i >= 0 && leaf < 0; --i) {
    if (latest_[size_t(i)] < 0) continue;
    if (last < 0) last = i;
    if (rec(i).conversational) leaf = i;
  }
  bool follows = false;
  for (int c = last; c >= 0 && leaf >= 0 && !follows; c = parent_[size_t(c)]) follows = c == leaf;
  if (follows || leaf < 0) leaf = last;
  if (leaf >= 0) emit_path(leaf, true);
  // Then every other branch, in the order its first line was written.
  for (int i = 0; i < size(); ++i) {
    if (!rec(i).chain || emitted_[size_t(i)] || latest_[size_t(i)] < 0) continue;
    int l = latest_[size_t(i)];
    emit_path(emitted_[size_t(l)] ? i : l, false);
    if (!emitted_[size_t(i)]) emit_path(i, false);
  }
}

// Nodes under `i` off the path that hold no message (a hook's progress, a
// system note): in line, right after it, rather than branches of their own.
void SessionReader::emit_bookkeeping_under(int i, PathState &st) {
  for (int k : kids_[size_t(i)]) {
    if (emitted_[size_t(k)] || on_path_[size_t(k)] || talks_[size_t(k)]) continue;
    emitted_[size_t(k)] = true;
    emit_record(k, 0, st); // no message: nothing to group
    for (int m : meta_after_[size_t(k)]) emit_custom(m, st, "");
    emit_bookkeeping_under(k, st);
    after_[size_t(k)] = st;
  }
}

void SessionReader::emit_path(int leaf, bool is_main) {
  int attach = -1;
  std::vector<int> chain = path_to(leaf, attach);
  if (chain.empty()) return;
  recover(chain);
  PathState st = attach >= 0 ? after_[size_t(attach)] : start_;
  for (size_t pos = 0; pos < chain.size(); ++pos) {
    on_path_[size_t(chain[pos])] = true;
    chain_pos_[size_t(chain[pos])] = pos;
  }
  for (size_t pos = 0; pos < chain.size(); ++pos) {
    int i = chain[pos];
    emitted_[size_t(i)] = true;
    emit_record(i, pos, st);
    for (int m : meta_after_[size_t(i)]) emit_custom(m, st, "");
    emit_bookkeeping_under(i, st);
    after_[size_t(i)] = st;
  }
  for (int i : chain) on_path_[size_t(i)] = false;
  bool talks =
      std::any_of(chain.begin(), chain.end(), [&](int i) { return rec(i).conversational; });
  if (is_main || st.open.empty() || !talks) return;
  // A branch the conversation left (a rewind): its pending calls end
  // where a later line shows the conversation went on elsewhere. (A branch
  // of bookkeeping alone, such as a hook's progress, leaves nothing.)
  int last = chain.back();
  for (int i = last + 1; i < size(); ++i)
    if (rec(i).chain) {
      cancel(st, event_id(rec(chain.back())) + "-b", rec(i).line, ts_of(i),
             "the conversation went back to an earlier point and went on from there");
      return;
    }
}

void SessionReader::emit_record(int i, size_t pos, PathState &st) {
  const Record &r = rec(i);
  if (r.type == "assistant" && r.conversational) {
    emit_assistant(i, pos, st);
  } else if (r.type == "user" && r.conversational) {
    emit_user(i, st);
  } else if (r.type == "system") {
    emit_system(i, st);
  } else if (r.type == "attachment") {
    emit_attachment(i, st);
  } else {
    emit_custom(i, st, event_id(r));
  }
}

Provenance SessionReader::provenance(int64_t first, int64_t last,
                                     std::string_view record_id) const {
  return Provenance{kFormat, o_.file, first, last, record_id};
}

void SessionReader::add(PathState &st, const std::string &id, std::string_view type,
                        std::string_view actor, int64_t ts, std::string_view payload, int64_t first,
                        int64_t last, std::string_view record_id) {
  EventHead h{id, std::string(type), std::string(actor), ts, st.last_event};
  out_.events.push_back(
      {s_.id, event_json(h, payload, provenance(first, last, record_id)), first, last});
  if (!record_id.empty()) first_event_.emplace(std::string(record_id), id);
  st.last_event = id;
}

// A record with no core meaning, kept whole.
void SessionReader::emit_custom(int i, PathState &st, std::string id) {
  const Record &r = rec(i);
  std::string type = r.type == "system" ? "system." + r.subtype : r.type;
  bool known = r.type == "system" ? kKnownSubtypes.count(r.subtype) > 0
                                  : kKnownTypes.count(r.type) > 0 || r.conversational;
  if (!known) ++out_.unknown[type];
  if (id.empty()) id = sanitize_id(s_.id + "-L" + std::to_string(r.line));
  element doc = parse(i);
  EventHead h{std::move(id), "", "", ts_of(i), st.last_event};
  out_.events.push_back({s_.id,
                         custom_event_json(h.id, kFormat, type, h.ts, h.parent_id, doc,
                                           provenance(r.line, r.line, r.uuid)),
                         r.line, r.line});
  st.last_event = h.id;
}

void SessionReader::cancel(PathState &st, const std::string &id_base, int64_t line, int64_t ts,
                           std::string_view reason, const std::string &keep_message) {
  std::vector<OpenCall> kept;
  int n = 0;
  for (const OpenCall &c : st.open) {
    if (!keep_message.empty() && c.message_id == keep_message) {
      kept.push_back(c);
      continue;
    }
    json::JsonWriter p;
    p.begin_object()
        .field("tool_call_id", c.id)
        .field("name", c.name)
        .field("reason", reason)
        .end_object();
    add(st, id_base + std::to_string(++n), "ToolCallCancelled", kFormat, ts, p.take(), line, line,
        "");
  }
  st.open = std::move(kept);
}

// The arguments' field `key` when they are an object.
std::string arg(const std::string &args, std::string_view key) {
  simdjson::dom::parser p;
  element d;
  if (p.parse(args).get(d) || !d.is_object()) return "";
  return std::string(str(d, key));
}

void SessionReader::emit_assistant(int i, size_t pos, PathState &st) {
  if (included_[size_t(i)]) return;
  const Record &r = rec(i);
  std::string at = where(o_.file, r.line);
  if (r.api_error) {
    // Claude Code's own line for a failed request (model "<synthetic>").
    element doc = parse(i);
    json::JsonWriter p;
    p.begin_object().field("message", content_text(message_content(doc, at)));
    if (auto e = str(doc, "error"); !e.empty()) p.field("code", e);
    p.end_object();
    included_[size_t(i)] = true;
    add(st, event_id(r), "ErrorRaised", kFormat, ts_of(i), p.take(), r.line, r.line, r.uuid);
    return;
  }
  // The lines of this message on this path, from here on, in path order:
  // found through the message's group, not by scanning the rest of the
  // path (which made a session's import quadratic in its length).
  std::vector<int> lines{i};
  if (auto g = r.message_id.empty() ? group_.end() : group_.find(group_key(r)); g != group_.end())
    for (int j : g->second)
      if (j != i && on_path_[size_t(j)] && chain_pos_[size_t(j)] > pos &&
          rec(j).type == "assistant" && !rec(j).api_error && !included_[size_t(j)])
        lines.push_back(j);
  std::sort(lines.begin(), lines.end(),
            [&](int a, int b) { return chain_pos_[size_t(a)] < chain_pos_[size_t(b)]; });
  provider::Answer answer;
  int64_t first = r.line, last = r.line;
  std::vector<OtherBlock> others;
  for (int j : lines) {
    element doc = parse(j);
    std::string here = where(o_.file, rec(j).line);
    keep_others(message_content(doc, here), {"text", "tool_use", "thinking", "redacted_thinking"},
                rec(j).line, others);
    provider::Answer part;
    try {
      part = provider::anthropic_message(doc["message"].value());
    } catch (const Error &e) {
      throw Error(e.code(), here + ": " + e.what());
    }
    if (answer.response_id.empty())
      answer = std::move(part);
    else {
      for (auto &b : part.blocks) answer.blocks.push_back(std::move(b));
      if (part.stop_reason) answer.stop_reason = part.stop_reason;
      if (part.usage) answer.usage = part.usage; // each line repeats the usage so far
      if (answer.model.empty()) answer.model = part.model;
    }
    included_[size_t(j)] = true;
    first = std::min(first, rec(j).line);
    last = std::max(last, rec(j).line);
  }
  cancel(st, event_id(r) + "-c", r.line, ts_of(i),
         "the model answered again before this call's result came", r.message_id);
  std::string id = event_id(r);
  if (answer.blocks.empty()) {
    // Nothing the model said that a message could hold (no block, or
    // only blocks kept apart below): the line kept as it was.
    emit_custom(i, st, id);
    return emit_others(st, id, ts_of(i), r.uuid, others);
  }
  add(st, id, "AssistantMessageCreated", "assistant", ts_of(i), provider::write_payload(answer),
      first, last, r.uuid);
  emit_others(st, id, ts_of(i), r.uuid, others);
  for (const provider::Block &b : answer.blocks) {
    if (b.kind != provider::Block::kToolCall) continue;
    OpenCall c{b.id, b.name, r.message_id, "", ""};
    if (b.name == "Task" || b.name == "Agent") {
      c.prompt = arg(b.args, "prompt");
      c.task = arg(b.args, "description");
      if (c.task.empty()) c.task = c.prompt;
    }
    st.open.push_back(std::move(c));
  }
}

// Content blocks of a type no core event holds (a server tool's blocks, a
// document): each kept as claude-code.content_block {block}.
void keep_others(element content, std::initializer_list<std::string_view> known, int64_t line,
                 std::vector<OtherBlock> &out) {
  simdjson::dom::array a;
  if (content.get(a)) return;
  for (element b : a) {
    std::string_view t = str(b, "type");
    if (std::find(known.begin(), known.end(), t) == known.end())
      out.push_back({line, json::canonical(b)});
  }
}

void SessionReader::emit_others(PathState &st, const std::string &id, int64_t ts,
                                std::string_view uuid, const std::vector<OtherBlock> &others) {
  int n = 0;
  for (const OtherBlock &o : others)
    add(st, id + "-k" + std::to_string(++n), "claude-code.content_block", kFormat, ts,
        "{\"block\":" + o.json + "}", o.line, o.line, uuid);
}

// A tool result's output: its text, and its images as blocks.
void result_content(element c, std::string &text, json::JsonWriter &images, int &n_images) {
  if (c.is_string()) {
    text = std::string(c.get_string().value());
    return;
  }
  simdjson::dom::array a;
  if (c.get(a)) return;
  for (element b : a) {
    std::string_view t = str(b, "type");
    if (t == "text") {
      if (!text.empty()) text += "\n";
      text += str(b, "text");
    } else if (t == "image") {
      auto src = child(b, "source");
      if (!src) continue;
      write_image_block(images, str(*src, "data"), str(*src, "media_type"));
      ++n_images;
    } else if (t == "tool_reference") {
      if (!text.empty()) text += "\n";
      text += "tool_reference: " + std::string(str(b, "tool_name"));
    }
  }
}

void SessionReader::emit_user(int i, PathState &st) {
  const Record &r = rec(i);
  element doc = parse(i);
  if (r.compact_summary) return emit_compaction(i, doc, st);
  std::string id = event_id(r);
  int64_t ts = ts_of(i);
  element content = message_content(doc, where(o_.file, r.line));
  std::vector<element> blocks; // a string content is one text
  simdjson::dom::array arr;
  if (!content.get(arr))
    for (element b : arr) blocks.push_back(b);
  // The user's words (one prompt with its images), and the context Claude
  // Code put in the user's turn, each block for what it is.
  struct Ctx {
    Part part;
    std::string text;
    bool before_words;
  };
  std::vector<Ctx> ctx;
  std::string words;
  json::JsonWriter images;
  images.begin_array();
  int n_images = 0;
  auto add_text = [&](std::string_view text) {
    Part p = classify(text, r.meta);
    if (!p.words) {
      ctx.push_back({p, std::string(text), words.empty() && n_images == 0});
    } else {
      if (!words.empty()) words += "\n\n";
      words += text;
    }
  };
  if (content.is_string()) add_text(content.get_string().value());
  for (element b : blocks) {
    std::string_view t = str(b, "type");
    if (t == "text") add_text(str(b, "text"));
    if (t != "image") continue;
    auto src = child(b, "source");
    if (!src) continue;
    write_image_block(images, str(*src, "data"), str(*src, "media_type"));
    ++n_images;
  }
  images.end_array();
  std::vector<OtherBlock> others;
  keep_others(content, {"text", "image", "tool_result"}, r.line, others);
  emit_results(i, doc, blocks, st);
  // The prompt takes the record's id; context blocks the first free one.
  // Images go with the user's words, or with the first context block when
  // Claude Code sent them (an isMeta line).
  bool has_words = !r.meta && (!words.empty() || n_images > 0);
  bool plain_free = !has_words;
  if (!has_words && n_images > 0 && ctx.empty()) ctx.push_back({classify("", true), "", true});
  int contexts = 0;
  auto emit_ctx = [&](const Ctx &c) {
    if (c.part.source == "interruption")
      cancel(st, id + "-c", r.line, ts, "interrupted by the user");
    json::JsonWriter p;
    p.begin_object()
        .field("kind", c.part.kind)
        .field("text", c.text)
        .field("source", c.part.source);
    if (!has_words && n_images > 0 && plain_free) p.raw_field("content", images.str());
    p.end_object();
    std::string cid = plain_free ? id : id + "-x" + std::to_string(++contexts);
    plain_free = false;
    add(st, cid, "ContextAdded", "system", ts, p.take(), r.line, r.line, r.uuid);
  };
  for (const Ctx &c : ctx)
    if (c.before_words || !has_words) emit_ctx(c);
  if (has_words) {
    cancel(st, id + "-c", r.line, ts, "the user spoke before this call's result came");
    json::JsonWriter p;
    p.begin_object().field("text", words);
    if (n_images) p.raw_field("content", images.str());
    p.end_object();
    add(st, id, "UserPromptSubmitted", "user", ts, p.take(), r.line, r.line, r.uuid);
    for (const Ctx &c : ctx)
      if (!c.before_words) emit_ctx(c);
  }
  emit_others(st, id, ts, r.uuid, others);
}

// A user line's tool_result blocks, each paired with the call open on this
// path (a Task / Agent result between SubagentStarted and SubagentFinished).
void SessionReader::emit_results(int i, element doc, const std::vector<element> &blocks,
                                 PathState &st) {
  const Record &r = rec(i);
  std::string id = event_id(r);
  int64_t ts = ts_of(i);
  std::optional<element> tool_result = child(doc, "toolUseResult");
  int result_blocks = 0, results = 0;
  for (element b : blocks) result_blocks += str(b, "type") == "tool_result";
  // The toolUseResult describes the line's one result.
  if (result_blocks != 1 || (tool_result && !tool_result->is_object())) tool_result.reset();
  for (element b : blocks) {
    if (str(b, "type") != "tool_result") continue;
    std::string call_id(str(b, "tool_use_id"));
    std::string rid = id + "-r" + std::to_string(++results);
    auto open = std::find_if(st.open.begin(), st.open.end(),
                             [&](const OpenCall &c) { return c.id == call_id; });
    if (open == st.open.end()) {
      // A result for no call open on this path (its call was before a
      // compaction, or was closed already): kept, not paired.
      json::JsonWriter p;
      p.begin_object().key("record").element(b).end_object();
      add(st, rid, "claude-code.orphan_tool_result", kFormat, ts, p.take(), r.line, r.line, r.uuid);
      continue;
    }
    OpenCall call = std::move(*open);
    st.open.erase(open);
    std::string text;
    json::JsonWriter images;
    images.begin_array();
    int n_images = 0;
    if (auto c = child(b, "content")) result_content(*c, text, images, n_images);
    images.end_array();
    std::string child_id;
    if (call.name == "Task" || call.name == "Agent") {
      std::string agent = tool_result ? std::string(str(*tool_result, "agentId")) : "";
      if (!agent.empty())
        child_id = sanitize_id("cc-" + s_.source_session + "-" + agent);
      else if (auto f = children_by_prompt_.find(call.prompt); f != children_by_prompt_.end())
        child_id = f->second;
    }
    std::string n = std::to_string(results);
    if (!child_id.empty()) {
      json::JsonWriter p;
      p.begin_object().field("child_session_id", child_id).field("tool_call_id", call.id);
      if (!call.task.empty()) p.field("task", call.task);
      p.end_object();
      add(st, id + "-s" + n, "SubagentStarted", kFormat, ts, p.take(), r.line, r.line, r.uuid);
    }
    bool is_error = flag(b, "is_error");
    json::JsonWriter p;
    p.begin_object().field("tool_call_id", call.id).field("name", call.name).field("output", text);
    if (is_error) p.key("is_error").boolean(true).field("error", text);
    if (n_images) p.raw_field("content", images.str());
    int64_t ms = -1;
    if (tool_result)
      for (const char *key : {"durationMs", "totalDurationMs"})
        if (auto d = child(*tool_result, key); d && ms < 0 && d->get(ms)) ms = -1;
    if (ms >= 0) p.field("duration_ms", ms);
    p.end_object();
    add(st, rid, is_error ? "ToolCallFailed" : "ToolCallFinished", "tool", ts, p.take(), r.line,
        r.line, r.uuid);
    if (child_id.empty()) continue;
    json::JsonWriter f;
    f.begin_object()
        .field("child_session_id", child_id)
        .field("tool_call_id", call.id)
        .field("summary", text)
        .end_object();
    add(st, id + "-f" + n, "SubagentFinished", kFormat, ts, f.take(), r.line, r.line, r.uuid);
  }
}

// The first event of `head` when it is an ancestor of node `from`; "" when
// it is not (or gave no event of its own).
std::string SessionReader::kept_from(int from, std::string_view head) {
  auto h = by_uuid_.find(std::string(head));
  if (h == by_uuid_.end()) return "";
  for (int c = from; c >= 0; c = parent_[size_t(c)])
    if (c == h->second) {
      auto e = first_event_.find(rec(c).uuid);
      return e == first_event_.end() ? "" : e->second;
    }
  return "";
}

// The isCompactSummary line: with the compact_boundary before it, Claude's
// compaction. Claude sends nothing from before the boundary, so the
// compaction keeps nothing: its first kept event is itself.
void SessionReader::emit_compaction(int i, element doc, PathState &st) {
  const Record &r = rec(i);
  std::string id = event_id(r);
  std::string summary = content_text(message_content(doc, where(o_.file, r.line)));
  int p = parent_[size_t(i)];
  int64_t tokens_before = -1;
  std::string trigger, first_kept = id;
  if (p >= 0 && rec(p).type == "system" && rec(p).subtype == "compact_boundary") {
    simdjson::dom::parser local;
    element b = json::parse(local, rec(p).text, where(o_.file, rec(p).line));
    if (auto m = child(b, "compactMetadata")) {
      int64_t t;
      if (!(*m)["preTokens"].get(t) && t >= 0) tokens_before = t;
      trigger = std::string(str(*m, "trigger"));
      // A partial compaction keeps the messages from preservedSegment's
      // head on (they stand before the boundary, on its path).
      if (auto seg = child(*m, "preservedSegment"))
        if (std::string kept = kept_from(p, str(*seg, "headUuid")); !kept.empty())
          first_kept = kept;
    }
  }
  json::JsonWriter w;
  w.begin_object()
      .field("summary", summary)
      .field("first_kept_event_id", first_kept)
      .key("range")
      .begin_object()
      .field("from_event_id", sanitize_id(s_.id + "-start"))
      .field("to_event_id", st.last_event)
      .end_object();
  if (tokens_before >= 0) w.field("tokens_before", tokens_before);
  w.key("summarizer").begin_object().field("kind", "foreign").field("agent", kFormat).end_object();
  if (!trigger.empty()) w.field("trigger", trigger);
  w.end_object();
  add(st, id, "CompactionCompleted", kFormat, ts_of(i), w.take(), r.line, r.line, r.uuid);
}

void SessionReader::add_context(PathState &st, const std::string &id, int i, const Part &p,
                                std::string_view text) {
  json::JsonWriter w;
  w.begin_object().field("kind", p.kind).field("text", text).field("source", p.source).end_object();
  add(st, id, "ContextAdded", "system", ts_of(i), w.take(), rec(i).line, rec(i).line, rec(i).uuid);
}

// What Claude Code attaches to a turn and turns into a message when it
// calls the model (its normalizeAttachmentForAPI): a prompt the user typed
// while it worked (queued_command, origin human), a CLAUDE.md it read
// (nested_memory), a hook's added context. Any other attachment is kept as
// claude-code.attachment.
void SessionReader::emit_attachment(int i, PathState &st) {
  const Record &r = rec(i);
  element doc = parse(i);
  std::optional<element> a = child(doc, "attachment");
  std::string_view type = a ? str(*a, "type") : "";
  std::string id = event_id(r);
  if (type == "queued_command") {
    std::string text;
    if (auto prompt = child(*a, "prompt")) text = content_text(*prompt);
    std::string_view origin;
    if (auto o = child(*a, "origin")) origin = str(*o, "kind");
    Part p = classify(text, flag(*a, "isMeta") || (!origin.empty() && origin != "human"));
    if (str(*a, "commandMode") == "task-notification") p = classify(text, true);
    if (!p.words) {
      if (p.source == "meta") p.source = "queued_command";
      return add_context(st, id, i, p, text);
    }
    // Folded into the running turn: its calls still get their results.
    json::JsonWriter w;
    w.begin_object().field("text", text).end_object();
    return add(st, id, "UserPromptSubmitted", "user", ts_of(i), w.take(), r.line, r.line, r.uuid);
  }
  if (type == "nested_memory") {
    std::string_view path = str(*a, "path");
    std::string_view body;
    if (auto c = child(*a, "content")) {
      if (c->is_string())
        body = c->get_string().value();
      else {
        if (path.empty()) path = str(*c, "path");
        body = str(*c, "content");
      }
    }
    Part p;
    p.kind = "instructions";
    p.source = "claude_md";
    return add_context(st, id, i, p,
                       "Contents of " + std::string(path) + ":\n\n" + std::string(body));
  }
  if (type == "hook_additional_context") {
    std::string text;
    if (auto c = child(*a, "content")) {
      simdjson::dom::array lines;
      if (c->is_string())
        text = std::string(c->get_string().value());
      else if (!c->get(lines))
        for (element l : lines)
          if (l.is_string())
            text += (text.empty() ? "" : "\n") + std::string(l.get_string().value());
    }
    Part p;
    p.kind = "context";
    p.source = "hook";
    return add_context(st, id, i, p, text);
  }
  emit_custom(i, st, id);
}

void SessionReader::emit_system(int i, PathState &st) {
  const Record &r = rec(i);
  if (r.subtype == "compact_boundary")
    cancel(st, event_id(r) + "-c", r.line, ts_of(i),
           "the conversation was compacted before this call's result came");
  if (r.subtype != "local_command") return emit_custom(i, st, event_id(r));
  // A command the user ran (/model, !ls): context, never the user's words.
  element doc = parse(i);
  std::string text(str(doc, "content"));
  Part p = classify(text, true);
  if (p.source == "meta") p.source = "command";
  add_context(st, event_id(r), i, p, text);
}

// The file's records, each in the session it belongs to: the file's own,
// then one per sidechain (by agentId; an old sidechain without one by the
// uuid of its first record).
std::vector<SessionInfo> sessions_of(std::vector<Record> &recs, const ParseOptions &o) {
  ClaudeCodeFile file = claude_code_file(o.file);
  std::string source;
  for (const Record &r : recs)
    if (!r.source_session.empty()) {
      source = r.source_session;
      break;
    }
  std::vector<SessionInfo> out(1);
  SessionInfo &own = out[0];
  if (file.kind != ClaudeCodeFile::kNotASession) {
    own.id = file.session_id;
    own.parent_id = file.parent_session_id;
  } else {
    std::string stem = std::filesystem::path(o.file).stem().string();
    own.id = sanitize_id("cc-" + (source.empty() ? stem : source));
  }
  own.source_session = own.parent_id.empty() ? own.id.substr(3) : own.parent_id.substr(3);
  if (file.kind == ClaudeCodeFile::kSubagent)
    own.agent_id = own.id.substr(own.parent_id.size() + 1);
  bool subagent_file = file.kind == ClaudeCodeFile::kSubagent;
  // Sidechains in a session file: grouped by agentId, or by their root.
  std::unordered_map<std::string, std::string> parent_of;
  for (const Record &r : recs)
    if (r.chain && r.sidechain) parent_of.emplace(r.uuid, r.parent);
  std::unordered_map<std::string, int> index;
  for (size_t k = 0; k < recs.size(); ++k) {
    Record &r = recs[k];
    if (subagent_file || !r.sidechain || !r.chain) {
      r.session = 0;
    } else {
      std::string agent = r.agent_id;
      if (agent.empty()) {
        std::string c = r.uuid;
        std::unordered_set<std::string> seen;
        for (auto p = parent_of.find(c); p != parent_of.end() && !p->second.empty() &&
                                         parent_of.count(p->second) && seen.insert(c).second;
             p = parent_of.find(c))
          c = p->second;
        agent = c;
      }
      auto [it, fresh] = index.emplace(agent, int(out.size()));
      if (fresh) {
        // out[0], not `own`: a push_back may have moved it.
        SessionInfo s;
        s.id = sanitize_id("cc-" + out[0].source_session + "-" + agent);
        s.parent_id = out[0].id;
        s.source_session = out[0].source_session;
        s.agent_id = agent;
        out.push_back(std::move(s));
      }
      r.session = it->second;
    }
    out[size_t(r.session)].records.push_back(k);
  }
  return out;
}

// A trailing message that may still grow, while following a live file:
// the first line of the last assistant message when nothing but its own
// tool results and bookkeeping follows it and no line of it has a
// stop_reason; 0 when there is none.
int64_t growing_from(const std::vector<Record> &recs) {
  int last = -1;
  for (int k = int(recs.size()) - 1; k >= 0 && last < 0; --k)
    if (recs[size_t(k)].conversational && recs[size_t(k)].session == 0) {
      const Record &r = recs[size_t(k)];
      if (r.type == "assistant")
        last = k;
      else if (!r.tool_results || !r.first_text.empty())
        return 0; // the user spoke after it
      // a tool result: the message may go on
    }
  if (last < 0) return 0;
  const std::string &id = recs[size_t(last)].message_id;
  int64_t from = recs[size_t(last)].line;
  for (const Record &r : recs)
    if (r.type == "assistant" && r.message_id == id && r.session == 0) {
      if (r.stopped) return 0;
      from = std::min(from, r.line);
    }
  return from;
}

} // namespace

ClaudeCodeFile claude_code_file(std::string_view path) {
  namespace fs = std::filesystem;
  fs::path p{std::string(path)};
  ClaudeCodeFile f;
  if (p.extension() != ".jsonl") return f;
  std::string stem = p.stem().string();
  // <session>/subagents/[workflows/<run>/]agent-<id>.jsonl
  for (fs::path dir = p.parent_path(); !dir.empty() && dir != dir.parent_path();
       dir = dir.parent_path()) {
    if (dir.filename() != "subagents") continue;
    if (!stem.starts_with("agent-") || stem.size() == 6) return f;
    std::string session = dir.parent_path().filename().string();
    if (session.empty()) return f;
    f.kind = ClaudeCodeFile::kSubagent;
    f.parent_session_id = sanitize_id("cc-" + session);
    f.session_id = sanitize_id("cc-" + session + "-" + stem.substr(6));
    return f;
  }
  if (stem.empty()) return f;
  f.kind = ClaudeCodeFile::kSession;
  f.session_id = sanitize_id("cc-" + stem);
  return f;
}

Parsed parse_claude_code(std::string_view bytes, const ParseOptions &options) {
  Parsed out;
  Lines split = split_lines(bytes);
  const std::vector<Line> &lines = split.lines;
  out.lines_consumed = split.consumed_lines;
  out.bytes_consumed = split.consumed_bytes;
  std::vector<Record> recs;
  recs.reserve(lines.size());
  {
    simdjson::dom::parser parser;
    for (const Line &l : lines) recs.push_back(read_record(parser, l, options));
  }
  std::vector<SessionInfo> sessions = sessions_of(recs, options);
  if (!options.final && std::none_of(recs.begin(), recs.end(), [](auto &r) { return r.chain; })) {
    // No conversation yet (a snapshot written before the first prompt):
    // the session is made from its first record, so all of it waits.
    out.lines_consumed = 0;
    out.bytes_consumed = 0;
    return out;
  }
  if (!options.final) {
    // Hold back a message still being written: the lines from its first on
    // wait for the next pass.
    if (int64_t from = growing_from(recs); from > options.resume_after_line && from > 0) {
      while (!recs.empty() && recs.back().line >= from) recs.pop_back();
      out.lines_consumed = recs.empty() ? 0 : recs.back().line;
      out.bytes_consumed = recs.empty() ? 0 : int64_t(recs.back().end);
      sessions = sessions_of(recs, options);
    }
  }
  // A sidechain's first words, to find the Task call that spawned it.
  std::unordered_map<std::string, std::string> children;
  for (size_t s = 1; s < sessions.size(); ++s)
    for (size_t k : sessions[s].records)
      if (recs[k].type == "user" && !recs[k].first_text.empty()) {
        children.emplace(recs[k].first_text, sessions[s].id);
        break;
      }
  for (const SessionInfo &s : sessions) {
    if (s.records.empty() && &s != &sessions[0]) continue;
    SessionReader(recs, s, options, out, children).run();
  }
  return out;
}

} // namespace ctxdb::transcript
