// codex.cpp — Codex CLI rollouts read as ctxdb drafts.
//
// Codex keeps a session in ~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl
// (older versions: flat in ~/.codex/sessions/). Written from Codex's own
// types (openai/codex, codex-rs/protocol/src/protocol.rs: RolloutLine,
// RolloutItem, SessionMetaLine, CompactedItem, TurnContextItem, EventMsg;
// codex-rs/protocol/src/models.rs: ResponseItem, ContentItem,
// FunctionCallOutputPayload; codex-rs/core/src/rollout/recorder.rs and
// policy.rs: what is persisted and how a file is read back;
// codex-rs/core/src/codex.rs reconstruct_history_from_rollout and
// codex-rs/core/src/compact.rs: what a resumed session sends the model).
// tests/fixtures/transcripts/codex/README.md lists each rule's source.
//
// Two layouts of a line:
//  - {"timestamp", "type", "payload"} (RolloutLine): type session_meta,
//    response_item, compacted, turn_context or event_msg;
//  - before that wrapper: a first line of session meta fields ({"id",
//    "timestamp", "instructions"?, "git"?}), then bare ResponseItems and
//    {"record_type": "state"} lines.
//
// What the model saw is the ResponseItems, so the conversation comes from
// them:
//  - user messages: the user's words become UserPromptSubmitted (input_image
//    data URLs as image blocks). Messages Codex injects with a user role are
//    ContextAdded: AGENTS.md ("<user_instructions>", "# AGENTS.md
//    instructions for") kind instructions, source agents_md (Codex sends it
//    again after every compaction: it is standing); kind context for
//    <environment_context>, <user_shell_command>, <turn_aborted>
//    (interruption), <skill>, <subagent_notification>, <context_update> and
//    a compaction's summary message. Codex tells them apart the same way
//    (core/src/event_mapping.rs, contextual_user_message.rs).
//  - developer and system messages, session_meta base_instructions and the
//    older session_meta "instructions" (the user instructions of the time):
//    ContextAdded kind instructions.
//  - one model response is ONE AssistantMessageCreated: a run of consecutive
//    assistant-side items (reasoning, assistant message, function_call,
//    custom_tool_call, local_shell_call, web_search_call, tool_search_call,
//    image_generation_call), records with no conversation meaning between
//    them (event_msg echoes, ghost snapshots) not breaking it. A tool output,
//    a user or developer message, a turn_context, a compaction, an aborted
//    turn or the end of the file ends it; so does the response's
//    token_count, whose last_token_usage becomes the message's usage
//    (normalized as engine/provider/answer.hpp does with OpenAI's meaning:
//    input counts the cached part, output the reasoning part). A token_count
//    with no open response is kept as a custom event. (Codex versions that
//    wrote each call's output right after the call give one message per
//    call, which is the order Codex sends them back in.) The provider is
//    "openai"; the model, the latest turn_context's.
//  - reasoning items are Responses reasoning blocks as
//    provider/openai_responses.cpp builds them: summary texts, text (the
//    summary, then any raw reasoning content, joined with blank lines) and
//    encrypted_content, kept byte for byte. Codex does not write a reasoning
//    item's id (models.rs: skip_serializing), so the block has none and
//    goes back to the Responses API by its encrypted_content, as Codex
//    itself sends it.
//  - function_call_output / custom_tool_call_output / tool_search_output:
//    ToolCallFinished, or ToolCallFailed (is_error) when the payload says
//    success: false or a shell result reports a non-zero exit code (Codex's
//    own success flag, which it does not write); exit_code and duration_ms
//    from the shell result's text when it has them; input_image items as
//    image content. A web_search_call runs on the provider's side and has
//    no output item: it gets a ToolCallFinished saying so.
//  - a call with no output when its turn is aborted (event_msg
//    turn_aborted), when the user speaks again or when the conversation is
//    compacted gets a ToolCallCancelled; one pending at the end of the file
//    stays pending.
//  - compacted: CompactionCompleted (summary = its message) that keeps no
//    earlier event: Codex resumes from what the compaction left, which is
//    not a suffix of the log. With replacement_history, each item of it
//    follows as an event of its own (id <compaction>-h<n>): the user's
//    earlier words as ContextAdded kind context, source
//    compaction_user_message (they are not said again), injected messages
//    as above, the summary message not again, other items kept as custom
//    events codex.replacement_history.<type>. Without it, Codex rebuilds the
//    history from the user's messages so far (newest first, at most 20,000
//    tokens of ~4 bytes) and the summary (compact.rs
//    build_compacted_history): those messages follow the same way.
//  - turn_context: custom event codex.turn_context, and its model on the
//    later messages. session_meta: the SessionStarted (agent_id codex, cwd,
//    repo, parent_session_id for a subagent's file) and a custom event
//    codex.session_meta keeping the record; a later session_meta (a fork
//    copies its parent's) only the custom event.
//  - event_msg: user_message, agent_message, agent_reasoning and
//    agent_reasoning_raw_content are echoes of the ResponseItems for the
//    UI; they are kept as custom events codex.event_msg.<type> and never
//    doubled into the conversation. Every other event_msg is a custom event
//    too; ghost_snapshot, compaction and old state lines likewise. A record
//    type this reader does not know is kept the same way and counted in
//    Parsed.unknown.
//
//  - thread_rolled_back {num_turns}: Codex resumes without the newest
//    num_turns user turns (since the last compaction; the first turn and
//    what precedes it when there are fewer), with the injected context
//    just before them. Every event names its parent (the one before it on
//    the session's path), so those turns become a branch: the record
//    itself, kept as a custom event, and what follows continue from the
//    event before them. The path is emitted first and the dropped turns
//    after it, so ctxdb's main branch is what Codex resumes with. A
//    rollback read in a later pass than the turns it drops forks where it
//    is (the importer reports the active branch). A call left open by the
//    dropped turns is cancelled on their branch.
//  - subagents (core/src/tools/handlers/multi_agents/): a spawn_agent
//    result {"agent_id": <thread id>} is followed by SubagentStarted
//    (-s: child_session_id codex-<thread id>, task = the call's message);
//    the child's own rollout names this session as its parent. The child
//    returns at the first final AgentStatus the parent reads of it: a wait
//    / wait_agent result {"status": {<thread id>: …}} (-f<n>, after the
//    result) or a <subagent_notification> (-f1, after its ContextAdded):
//    SubagentFinished with the child's last message ("completed") or how
//    it ended. The collab_* event_msg records, written only in Codex's
//    extended persistence mode, stay custom events.
//
// Ids: the session is codex-<session_meta id>; an event is
// <session>-L<line> (rollouts are append-only), a response's message is
// named after its first line.
#include "transcript/codex.hpp"
#include "transcript/reader_common.hpp"
#include "transcript/transcript.hpp"

#include "error.hpp"
#include "provider/answer.hpp"
#include "json/json_writer.hpp"
#include "json/parse.hpp"

#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace ctxdb::transcript {

namespace {

using simdjson::dom::element;
namespace pv = provider;

constexpr std::string_view kFormat = "codex";
// Codex's compact.rs: COMPACT_USER_MESSAGE_MAX_TOKENS, counted as
// approx_token_count does (4 bytes a token).
constexpr size_t kKeptUserMessageBytes = 20'000 * 4;
// templates/compact/summary_prefix.md, and the older history bridge.
constexpr std::string_view kSummaryPrefixes[] = {
    "Another language model started to solve this problem and produced a summary",
    "You were originally given instructions from a user over one or more turns."};

// Event types Codex persists (core/src/rollout/policy.rs), kept as custom
// events without being counted as unknown.
// clang-format off
const std::set<std::string_view> kKnownEventMsgs = {
    "user_message", "agent_message", "agent_reasoning", "agent_reasoning_raw_content",
    "agent_reasoning_section_break", "token_count", "context_compacted", "entered_review_mode",
    "exited_review_mode", "undo_completed", "turn_aborted", "task_started", "task_complete",
    "turn_started", "turn_complete", "thread_rolled_back", "thread_name_updated",
    "patch_apply_end", "item_completed", "image_generation_end", "error", "warning",
    "stream_error", "web_search_end", "exec_command_end", "mcp_tool_call_end",
    "view_image_tool_call", "plan_update", "background_event", "dynamic_tool_call_request",
    "dynamic_tool_call_response", "guardian_assessment", "collab_agent_spawn_end",
    "collab_agent_interaction_end", "collab_waiting_end", "collab_close_end",
    "collab_resume_end"};
// clang-format on

bool starts_with_nocase(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    char a = text[i], b = prefix[i];
    if (a >= 'A' && a <= 'Z') a = static_cast<char>(a - 'A' + 'a');
    if (b >= 'A' && b <= 'Z') b = static_cast<char>(b - 'A' + 'a');
    if (a != b) return false;
  }
  return true;
}

std::string_view trim_start(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  return b == std::string_view::npos ? std::string_view{} : s.substr(b);
}

bool is_summary_message(std::string_view text) {
  for (std::string_view p : kSummaryPrefixes)
    if (trim_start(text).starts_with(p)) return true;
  return false;
}

// What a user-role message is: "" for the user's own words, else the
// ContextAdded source naming what Codex injected.
std::string_view injected_source(std::string_view text) {
  std::string_view t = trim_start(text);
  struct Marker {
    std::string_view prefix, source;
  } static const kMarkers[] = {
      {"<user_instructions>", "agents_md"},
      {"# AGENTS.md instructions for ", "agents_md"},
      {"<environment_context>", "environment_context"},
      {"<user_shell_command>", "user_shell_command"},
      {"<turn_aborted>", "interruption"},
      {"<skill>", "skill"},
      {"<subagent_notification>", "subagent_notification"},
      {"<context_update>", "context_update"},
  };
  for (const Marker &m : kMarkers)
    if (starts_with_nocase(t, m.prefix)) return m.source;
  if (is_summary_message(t)) return "compaction_summary";
  return "";
}

// A data URL's media type and base64 payload; nullopt for any other URL.
std::optional<std::pair<std::string, std::string>> data_url(std::string_view url) {
  constexpr std::string_view kData = "data:", kBase64 = ";base64,";
  if (!url.starts_with(kData)) return std::nullopt;
  size_t b = url.find(kBase64);
  if (b == std::string_view::npos) return std::nullopt;
  return std::make_pair(std::string(url.substr(kData.size(), b - kData.size())),
                        std::string(url.substr(b + kBase64.size())));
}

// Text and image blocks of a ContentItem list (message content, or a tool
// output's content items).
struct Content {
  std::string text; // input_text / output_text items joined with "\n"
  std::vector<std::pair<std::string, std::string>> images; // mime, base64
  std::vector<std::string> texts;
};

Content read_content(std::string_view what, simdjson::dom::array items, const std::string &path) {
  Content c;
  size_t i = 0;
  for (element part : items) {
    std::string p = pv::index_path(path, i++);
    if (!part.is_object()) pv::wrong_type(what, p, "an object");
    std::string_view type = pv::need_string(what, part, "type", p);
    std::string text;
    if (type == "input_text" || type == "output_text" || type == "text") {
      text = std::string(pv::need_string(what, part, "text", p));
    } else if (type == "refusal") {
      text = std::string(pv::need_string(what, part, "refusal", p));
    } else if (type == "input_image") {
      std::string_view url = pv::need_string(what, part, "image_url", p);
      if (auto d = data_url(url)) {
        c.images.push_back(std::move(*d));
        continue;
      }
      // A remote image has no bytes to keep: its address stays readable.
      text = "[image: " + std::string(url) + "]";
    } else {
      continue;
    }
    if (!c.text.empty()) c.text += '\n';
    c.text += text;
    c.texts.push_back(std::move(text));
  }
  return c;
}

// A message item's role and content.
std::pair<std::string_view, Content> read_message(std::string_view what, element item,
                                                  const std::string &path) {
  std::string_view role = pv::need_string(what, item, "role", path);
  Content c;
  if (auto parts = pv::opt_array(what, item, "content", path))
    c = read_content(what, *parts, pv::join_path(path, "content"));
  return {role, std::move(c)};
}

// The "content" blocks of a prompt or context event: its texts and images.
void write_content_blocks(json::JsonWriter &w, const Content &c) {
  w.key("content").begin_array();
  for (const std::string &t : c.texts)
    w.begin_object().field("type", "text").field("text", t).end_object();
  for (const auto &[mime, data] : c.images) write_image_block(w, data, mime);
  w.end_array();
}

// What a shell tool's output text says of the run: Codex's JSON form
// {"output", "metadata": {"exit_code", "duration_seconds"}}, its freeform
// "Exit code: N\nWall time: S seconds\nOutput:\n…", or exec_command's
// "…\nWall time: S seconds\nProcess exited with code N\n…\nOutput:\n…".
struct ShellRun {
  std::optional<int64_t> exit_code;
  std::optional<int64_t> duration_ms;
};

std::optional<int64_t> seconds_ms(double s) {
  if (!(s >= 0) || s > 1e12) return std::nullopt;
  return static_cast<int64_t>(std::llround(s * 1000));
}

ShellRun shell_run(simdjson::dom::parser &p, std::string_view text) {
  ShellRun r;
  if (text.starts_with("{")) {
    element doc;
    if (p.parse(text).get(doc) || !doc.is_object()) return r;
    element meta;
    if (doc["metadata"].get(meta) || !meta.is_object()) return r;
    int64_t code;
    if (!meta["exit_code"].get_int64().get(code)) r.exit_code = code;
    double secs;
    if (!meta["duration_seconds"].get_double().get(secs)) r.duration_ms = seconds_ms(secs);
    return r;
  }
  // The header of the text: its first lines, before "Output:".
  std::string_view head = text.substr(0, text.find("\nOutput:"));
  auto number_after = [&](std::string_view label) -> std::optional<std::string> {
    size_t at = head.find(label);
    if (at == std::string_view::npos || (at > 0 && head[at - 1] != '\n')) return std::nullopt;
    std::string_view rest = head.substr(at + label.size());
    return std::string(rest.substr(0, rest.find('\n')));
  };
  // "Exit code: N" (shell), "Process exited with code N" (exec_command).
  auto code = number_after("Exit code: ");
  if (!code) code = number_after("Process exited with code ");
  if (code) {
    char *end = nullptr;
    long long n = std::strtoll(code->c_str(), &end, 10);
    if (end != code->c_str() && *end == '\0') r.exit_code = n;
  }
  if (auto secs = number_after("Wall time: ")) {
    char *end = nullptr;
    double s = std::strtod(secs->c_str(), &end);
    if (end != secs->c_str() && std::string_view(end) == " seconds") r.duration_ms = seconds_ms(s);
  }
  return r;
}

// Cut to at most `max` bytes at a UTF-8 boundary.
std::string cut_utf8(std::string_view s, size_t max) {
  if (s.size() <= max) return std::string(s);
  size_t n = max;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return std::string(s.substr(0, n)) + "…";
}

// The id in a rollout file's name, rollout-<time>-<uuid>.jsonl (Codex's
// list.rs reads it from the name the same way).
std::string uuid_from_file_name(std::string_view file) {
  size_t slash = file.find_last_of("/\\");
  std::string_view name = slash == std::string_view::npos ? file : file.substr(slash + 1);
  constexpr size_t kUuid = 36;
  if (!name.starts_with("rollout-") || !name.ends_with(".jsonl")) return "";
  name.remove_suffix(6);
  if (name.size() < 8 + kUuid) return "";
  std::string_view id = name.substr(name.size() - kUuid);
  for (size_t i = 0; i < id.size(); ++i) {
    bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    char c = id[i];
    bool hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
    if (dash ? c != '-' : !hex) return "";
  }
  return std::string(id);
}

struct Call {
  std::string name;
  bool closed = false;
  std::string args; // canonical JSON
};

// A model response being gathered into one AssistantMessageCreated.
struct Response {
  int64_t first_line = 0, last_line = 0;
  std::optional<int64_t> ts;
  pv::Answer answer;
  // web_search_call blocks, answered right after the message.
  std::vector<std::pair<std::string, int64_t>> provider_side_calls; // id, line
};

class Reader {
public:
  explicit Reader(const ParseOptions &o) : opt_(o) {}

  void read(std::string_view bytes);
  Parsed take() { return std::move(out_); }

private:
  // --- the record kinds
  void record(element rec, const Line &l);
  void session_meta(element meta, element record, const Line &l, const std::string &path);
  void response_item(element item, const Line &l, const std::string &path);
  void event_msg(element ev, element record, const Line &l);
  void compacted(element c, const Line &l);
  void turn_context(element tc, element record, const Line &l);

  // --- pieces of the conversation
  void assistant_content(const Content &c, const Line &l);
  bool injected(std::string_view role, const Content &c, const Line &l, const std::string &id);
  void user_message(const Content &c, const Line &l, const std::string &id);
  void context_added(std::string_view kind, std::string_view source, const Content &c,
                     const Line &l, const std::string &id);
  void tool_output(element item, const Line &l, const std::string &path, element record);
  void cancel_open_calls(const Line &l, std::string_view reason);
  void kept_item(element item, const Line &l, const std::string &id, const std::string &path);
  void kept_user_message(std::string text);
  void collab_result(const std::string &call_id, const Call &call, std::string_view output,
                     const Line &l);
  void subagent_notification(std::string_view text, const Line &l);
  void subagent_finished(const std::string &child, element status, const std::string &call_id,
                         const Line &l, const std::string &id);

  // --- the response being gathered
  Response &response(const Line &l);
  void add_call(const Line &l, std::string id, std::string name, std::string args);
  void flush();

  // --- drafts
  void ensure_session(const Line &l);
  Provenance prov(int64_t first, int64_t last = 0) const {
    return Provenance{kFormat, opt_.file, first, last, {}};
  }
  std::string line_id(const Line &l) const { return session_ + "-L" + std::to_string(l.number); }
  void emit(std::string id, std::string_view type, std::string_view actor, std::string_view payload,
            int64_t first, int64_t last);
  void custom(const std::string &id, std::string_view type, element record, const Line &l,
              bool known);
  std::string where(const Line &l) const { return transcript::where(opt_.file, l.number); }

  const ParseOptions &opt_;
  Parsed out_;
  simdjson::dom::parser parser_;        // the current line
  simdjson::dom::parser output_parser_; // a tool output's JSON, while the line's is in use
  std::string session_;
  std::optional<int64_t> ts_; // the current line's time (or the latest one known)
  std::string model_;
  std::optional<Response> response_;
  std::map<std::string, Call> calls_;
  std::vector<std::string> open_calls_;        // in the order they were made
  std::vector<std::string> user_messages_;     // what a compaction would keep
  std::optional<int64_t> context_tokens_;      // the latest response's input + output
  std::string first_event_id_, last_event_id_; // conversation since the last compaction

  // --- the session's path (every event names its parent) and rollbacks
  enum class Step { kOther, kUserTurn, kContext, kRecord };
  struct PathEntry {
    std::string id;
    size_t draft = 0; // its index in out_.events
    Step step = Step::kOther;
    bool conversation = false;
    bool user_message = false; // added to user_messages_
  };
  void on_path(std::string id, Step step, bool conversation);
  void roll_back(int64_t num_turns, const Line &l);
  size_t rollback_cut(int64_t num_turns) const;
  void active_path_first();
  std::string parent_; // the path's last event
  // Since the last compaction (Codex rolls back in the history a
  // compaction left): what a rollback may cut.
  std::vector<PathEntry> path_;
  std::vector<bool> abandoned_;          // per draft: on a turn a rollback dropped
  std::map<std::string, bool> children_; // sessions this one spawned: finished yet
};

// --- drafts ---------------------------------------------------------------

void Reader::ensure_session(const Line &l) {
  if (!session_.empty()) return;
  std::string uuid = uuid_from_file_name(opt_.file);
  if (uuid.empty())
    line_error(opt_.file, l.number,
               "a Codex rollout starts with its session_meta, and the file name "
               "(rollout-<time>-<uuid>.jsonl) has no session id either");
  session_ = "codex-" + sanitize_id(uuid);
  parent_ = session_ + "-start";
  json::JsonWriter w;
  w.begin_object().field("agent_id", kFormat).end_object();
  out_.sessions.push_back(
      {session_,
       session_create_json(session_, session_ + "-start", "system", ts_, w.str(), prov(l.number)),
       ""});
}

void Reader::emit(std::string id, std::string_view type, std::string_view actor,
                  std::string_view payload, int64_t first, int64_t last) {
  EventHead h{id, std::string(type), std::string(actor), ts_, parent_};
  out_.events.push_back(
      {session_, event_json(h, payload, prov(first, last)), first, std::max(first, last)});
  bool conversation = type != "ContextAdded" && !type.starts_with("codex.");
  if (conversation) {
    if (first_event_id_.empty()) first_event_id_ = id;
    last_event_id_ = id;
  }
  Step step = type == "UserPromptSubmitted" ? Step::kUserTurn
              : type == "ContextAdded"      ? Step::kContext
                                            : Step::kOther;
  on_path(std::move(id), step, conversation);
}

void Reader::custom(const std::string &id, std::string_view type, element record, const Line &l,
                    bool known) {
  out_.events.push_back({session_,
                         custom_event_json(id, kFormat, type, ts_, parent_, record, prov(l.number)),
                         l.number, l.number});
  if (!known) ++out_.unknown[std::string(type)];
  on_path(id, Step::kRecord, false);
}

void Reader::on_path(std::string id, Step step, bool conversation) {
  parent_ = id;
  path_.push_back({std::move(id), out_.events.size() - 1, step, conversation, false});
  abandoned_.push_back(false);
}

// --- the response being gathered ------------------------------------------

Response &Reader::response(const Line &l) {
  if (!response_) {
    response_.emplace();
    response_->first_line = l.number;
    response_->ts = ts_;
    response_->answer.family = "openai";
  }
  response_->last_line = l.number;
  return *response_;
}

void Reader::add_call(const Line &l, std::string id, std::string name, std::string args) {
  pv::Block b;
  b.kind = pv::Block::kToolCall;
  b.id = std::move(id);
  b.name = std::move(name);
  b.args = std::move(args);
  response(l).answer.blocks.push_back(std::move(b));
}

void Reader::flush() {
  if (!response_) return;
  Response r = std::move(*response_);
  response_.reset();
  if (r.answer.blocks.empty()) return; // e.g. an assistant message with no text: says nothing
  r.answer.model = model_;
  std::optional<int64_t> now = ts_;
  ts_ = r.ts;
  std::string id = session_ + "-L" + std::to_string(r.first_line);
  emit(id, "AssistantMessageCreated", "assistant", pv::write_payload(r.answer), r.first_line,
       r.last_line);
  for (const pv::Block &b : r.answer.blocks) {
    if (b.kind != pv::Block::kToolCall) continue;
    // A repeated call id answers to the call made first.
    if (calls_.emplace(b.id, Call{b.name, false, b.args}).second) open_calls_.push_back(b.id);
  }
  for (const auto &[call_id, line] : r.provider_side_calls) {
    json::JsonWriter w;
    w.begin_object()
        .field("tool_call_id", call_id)
        .field("name", "web_search")
        .field("output", "(the search ran on the provider's side; its results are not in the "
                         "rollout)")
        .end_object();
    emit(session_ + "-L" + std::to_string(line) + "-r", "ToolCallFinished", "tool", w.str(), line,
         line);
    calls_[call_id].closed = true;
    std::erase(open_calls_, call_id);
  }
  ts_ = now;
}

// --- lines ------------------------------------------------------------------

void Reader::read(std::string_view bytes) {
  Lines lines = split_lines(bytes);
  int64_t held_from = 0;
  for (const Line &l : lines.lines) {
    // No draft groups lines on both sides of what an earlier pass imported.
    if (response_ && response_->first_line <= opt_.resume_after_line &&
        l.number > opt_.resume_after_line)
      flush();
    record(parse_line(parser_, opt_.file, l), l);
  }
  if (response_ && !opt_.final) {
    // A live file: the response may still grow; it waits with what follows it.
    held_from = response_->first_line;
    response_.reset();
  }
  flush();
  active_path_first();
  out_.lines_consumed = lines.consumed_lines;
  out_.bytes_consumed = lines.consumed_bytes;
  if (held_from > 0) {
    // The pass stops after the last line before it (blank lines between
    // wait with the response).
    std::erase_if(out_.events, [&](const Draft &d) { return d.last_line >= held_from; });
    out_.lines_consumed = 0;
    out_.bytes_consumed = 0;
    for (const Line &l : lines.lines) {
      if (l.number >= held_from) break;
      out_.lines_consumed = l.number;
      out_.bytes_consumed = l.end;
    }
  }
}

void Reader::record(element rec, const Line &l) {
  std::string w = where(l);
  auto type = pv::opt_string(w, rec, "type", "");
  auto payload = pv::field(rec, "payload");
  static const std::set<std::string_view> kWrapped = {"session_meta", "response_item", "event_msg",
                                                      "compacted", "turn_context"};
  if (type && kWrapped.contains(*type) && !(payload && payload->is_object()))
    line_error(opt_.file, l.number,
               "a " + std::string(*type) + " line's payload must be an object");
  if (type && payload && payload->is_object()) {
    if (auto t = pv::opt_string(w, rec, "timestamp", "")) {
      if (auto ms = iso8601_ms(*t)) ts_ = ms;
    }
    if (*type == "session_meta") return session_meta(*payload, rec, l, "payload");
    ensure_session(l);
    if (*type == "response_item") return response_item(*payload, l, "payload");
    if (*type == "event_msg") return event_msg(*payload, rec, l);
    if (*type == "compacted") return compacted(*payload, l);
    if (*type == "turn_context") return turn_context(*payload, rec, l);
    return custom(line_id(l), *type, rec, l, false);
  }
  // The layout before the {timestamp, type, payload} wrapper.
  if (auto rt = pv::opt_string(w, rec, "record_type", "")) {
    ensure_session(l);
    return custom(line_id(l), *rt, rec, l, *rt == "state");
  }
  if (!type) {
    if (pv::field(rec, "id") && pv::field(rec, "timestamp")) return session_meta(rec, rec, l, "");
    line_error(opt_.file, l.number, "a rollout line has a \"type\" (or is the session meta)");
  }
  ensure_session(l);
  response_item(rec, l, "");
}

void Reader::session_meta(element meta, element record, const Line &l, const std::string &path) {
  std::string w = where(l);
  if (!session_.empty()) {
    // A fork starts with a copy of its parent's records: the first meta is the session's.
    ensure_session(l);
    return custom(line_id(l), "session_meta", record, l, true);
  }
  std::string_view id = pv::need_string(w, meta, "id", path);
  if (auto t = pv::opt_string(w, meta, "timestamp", path); t && !ts_) ts_ = iso8601_ms(*t);
  session_ = "codex-" + sanitize_id(id);
  parent_ = session_ + "-start";
  std::string parent;
  json::JsonWriter sw;
  sw.begin_object().field("agent_id", kFormat);
  if (auto cwd = pv::opt_string(w, meta, "cwd", path)) sw.field("cwd", *cwd);
  if (auto git = pv::field(meta, "git"); git && git->is_object())
    if (auto url = pv::opt_string(w, *git, "repository_url", pv::join_path(path, "git")))
      sw.field("repo", *url);
  // A subagent's file: source {"subagent": {"thread_spawn": {"parent_thread_id"}}}.
  if (auto src = pv::field(meta, "source"); src && src->is_object())
    if (auto sub = pv::field(*src, "subagent"); sub && sub->is_object())
      if (auto spawn = pv::field(*sub, "thread_spawn"); spawn && spawn->is_object())
        if (auto p = pv::opt_string(w, *spawn, "parent_thread_id", "source.subagent.thread_spawn"))
          parent = "codex-" + sanitize_id(*p);
  if (!parent.empty()) sw.field("parent_session_id", parent);
  sw.end_object();
  out_.sessions.push_back(
      {session_,
       session_create_json(session_, session_ + "-start", "system", ts_, sw.str(),
                           Provenance{kFormat, opt_.file, l.number, 0, id}),
       parent});
  custom(line_id(l), "session_meta", record, l, true);
  // Standing instructions: the model's base instructions, and the user
  // instructions older versions kept here.
  auto instructions = [&](std::string_view text, std::string_view source, const char *suffix) {
    if (text.empty()) return;
    Content c;
    c.text = std::string(text);
    context_added("instructions", source, c, l, line_id(l) + suffix);
  };
  if (auto b = pv::field(meta, "base_instructions")) {
    if (b->is_string())
      instructions(b->get_string().value(), "base_instructions", "-b");
    else if (b->is_object())
      instructions(
          pv::opt_string(w, *b, "text", pv::join_path(path, "base_instructions")).value_or(""),
          "base_instructions", "-b");
  }
  if (auto i = pv::opt_string(w, meta, "instructions", path))
    instructions(*i, "user_instructions", "-u");
}

void Reader::turn_context(element tc, element record, const Line &l) {
  flush(); // a new turn
  if (auto m = pv::opt_string(where(l), tc, "model", "payload")) model_ = std::string(*m);
  custom(line_id(l), "turn_context", record, l, true);
}

void Reader::response_item(element item, const Line &l, const std::string &path) {
  std::string w = where(l);
  std::string_view type = pv::need_string(w, item, "type", path);
  if (type == "message") {
    auto [role, c] = read_message(w, item, path);
    if (role == "assistant") return assistant_content(c, l);
    flush();
    if (injected(role, c, l, line_id(l))) {
      if (injected_source(c.text) == "subagent_notification") subagent_notification(c.text, l);
      return;
    }
    if (role == "user") return user_message(c, l, line_id(l));
    line_error(opt_.file, l.number,
               "message role '" + std::string(role) +
                   "' is none of user, assistant, developer, system");
  }
  if (type == "reasoning") {
    pv::Block b;
    b.kind = pv::Block::kThinking;
    b.id = std::string(pv::opt_string(w, item, "id", path).value_or(""));
    std::vector<std::string> texts;
    if (auto summary = pv::opt_array(w, item, "summary", path)) {
      size_t i = 0;
      for (element s : *summary) {
        std::string p = pv::index_path(pv::join_path(path, "summary"), i++);
        b.summary.emplace_back(pv::need_string(w, s, "text", p));
        texts.push_back(b.summary.back());
      }
    }
    if (auto content = pv::opt_array(w, item, "content", path))
      texts.push_back(read_content(w, *content, pv::join_path(path, "content")).text);
    for (const std::string &t : texts)
      if (!t.empty()) b.text += (b.text.empty() ? "" : "\n\n") + t;
    if (auto e = pv::opt_string(w, item, "encrypted_content", path))
      b.encrypted_content = std::string(*e);
    response(l).answer.blocks.push_back(std::move(b));
    return;
  }
  if (type == "function_call") {
    std::string id(pv::need_string(w, item, "call_id", path));
    return add_call(l, id, std::string(pv::need_string(w, item, "name", path)),
                    pv::arguments_json(pv::need_string(w, item, "arguments", path)));
  }
  if (type == "custom_tool_call") {
    // A freeform tool's input (apply_patch's patch text): a string argument.
    std::string args;
    json::append_quoted(args, pv::need_string(w, item, "input", path));
    return add_call(l, std::string(pv::need_string(w, item, "call_id", path)),
                    std::string(pv::need_string(w, item, "name", path)), std::move(args));
  }
  if (type == "local_shell_call") {
    // call_id on the Responses API, id on Chat Completions (models.rs).
    auto id = pv::opt_string(w, item, "call_id", path);
    if (!id) id = pv::opt_string(w, item, "id", path);
    if (!id) pv::missing(w, pv::join_path(path, "call_id"));
    element action = pv::need_object(w, item, "action", path);
    return add_call(l, std::string(*id), "local_shell", json::canonical(action));
  }
  if (type == "tool_search_call") {
    auto args = pv::field(item, "arguments");
    return add_call(l, std::string(pv::need_string(w, item, "call_id", path)), "tool_search",
                    args ? (args->is_string() ? pv::arguments_json(args->get_string().value())
                                              : json::canonical(*args))
                         : "{}");
  }
  if (type == "web_search_call") {
    std::string id(pv::opt_string(w, item, "id", path).value_or(""));
    if (id.empty()) id = "ws_L" + std::to_string(l.number); // Codex does not write it
    auto action = pv::field(item, "action");
    add_call(l, id, "web_search", action ? json::canonical(*action) : "{}");
    response_->provider_side_calls.emplace_back(id, l.number);
    return;
  }
  if (type == "image_generation_call") {
    Response &r = response(l);
    if (auto result = pv::opt_string(w, item, "result", path)) {
      pv::Block b;
      b.kind = pv::Block::kImage;
      b.data = std::string(*result);
      b.mime_type = "image/png";
      r.answer.blocks.push_back(std::move(b));
    }
    return;
  }
  if (type == "function_call_output" || type == "custom_tool_call_output" ||
      type == "tool_search_output") {
    flush();
    return tool_output(item, l, path, item);
  }
  if (type == "ghost_snapshot" || type == "compaction" || type == "compaction_summary")
    return custom(line_id(l), "response_item." + std::string(type), item, l, true);
  custom(line_id(l), "response_item." + std::string(type), item, l, false);
}

void Reader::assistant_content(const Content &c, const Line &l) {
  Response &r = response(l);
  for (const std::string &t : c.texts) {
    pv::Block b;
    b.text = t;
    r.answer.blocks.push_back(std::move(b));
  }
  for (const auto &[mime, data] : c.images) {
    pv::Block b;
    b.kind = pv::Block::kImage;
    b.mime_type = mime;
    b.data = data;
    r.answer.blocks.push_back(std::move(b));
  }
}

// A developer or system message, or a user-role message Codex injected:
// ContextAdded (true); false for anything else.
bool Reader::injected(std::string_view role, const Content &c, const Line &l,
                      const std::string &id) {
  if (role == "developer" || role == "system") {
    context_added("instructions", role, c, l, id);
    return true;
  }
  if (role != "user") return false;
  std::string_view source = injected_source(c.text);
  if (source.empty()) return false;
  context_added(source == "agents_md" ? "instructions" : "context", source, c, l, id);
  return true;
}

void Reader::user_message(const Content &c, const Line &l, const std::string &id) {
  // The user speaks again: a call still without its output will get none.
  cancel_open_calls(l, "the user spoke again before the call returned");
  json::JsonWriter w;
  w.begin_object().field("text", c.text);
  if (!c.images.empty()) write_content_blocks(w, c);
  w.end_object();
  emit(id, "UserPromptSubmitted", "user", w.str(), l.number, l.number);
  // compact.rs collect_user_messages: an image-only message has no text to keep.
  if (!c.text.empty()) kept_user_message(c.text);
}

void Reader::kept_user_message(std::string text) {
  user_messages_.push_back(std::move(text));
  path_.back().user_message = true;
}

void Reader::context_added(std::string_view kind, std::string_view source, const Content &c,
                           const Line &l, const std::string &id) {
  json::JsonWriter w;
  w.begin_object().field("kind", kind).field("text", c.text).field("source", source);
  if (!c.images.empty()) write_content_blocks(w, c);
  w.end_object();
  emit(id, "ContextAdded", "system", w.str(), l.number, l.number);
  // A user's message a compaction kept is a turn Codex can roll back.
  if (source == "compaction_user_message") path_.back().step = Step::kUserTurn;
}

void Reader::tool_output(element item, const Line &l, const std::string &path, element record) {
  std::string w = where(l);
  std::string call_id(pv::need_string(w, item, "call_id", path));
  auto call = calls_.find(call_id);
  if (call == calls_.end() || call->second.closed) {
    // No call in this file to answer (a copy from another session), or one
    // already closed: kept as it was, outside the conversation.
    return custom(line_id(l),
                  "response_item." + std::string(pv::need_string(w, item, "type", path)), record, l,
                  true);
  }
  Content c;
  std::optional<bool> success;
  std::string out_path = pv::join_path(path, "output");
  auto output = pv::field(item, "output");
  if (pv::need_string(w, item, "type", path) == "tool_search_output") {
    // Its result is the tools it found.
    auto tools = pv::field(item, "tools");
    c.text = tools ? json::canonical(*tools) : "[]";
  } else if (!output) {
    pv::missing(w, out_path);
  } else if (output->is_string()) {
    c.text = std::string(output->get_string().value());
  } else if (output->is_array()) {
    c = read_content(w, output->get_array().value(), out_path);
  } else if (output->is_object()) {
    // FunctionCallOutputPayload as an object: {content, content_items?, success?}.
    if (auto items = pv::opt_array(w, *output, "content_items", out_path))
      c = read_content(w, *items, pv::join_path(out_path, "content_items"));
    else if (auto content = pv::field(*output, "content"); content && content->is_array())
      c = read_content(w, content->get_array().value(), pv::join_path(out_path, "content"));
    else
      c.text = std::string(pv::opt_string(w, *output, "content", out_path).value_or(""));
    if (auto s = pv::field(*output, "success")) {
      bool b;
      if (s->get_bool().get(b)) pv::wrong_type(w, pv::join_path(out_path, "success"), "a boolean");
      success = b;
    }
  } else {
    pv::wrong_type(w, out_path, "a string, an array or an object");
  }
  ShellRun run = shell_run(output_parser_, c.text);
  bool failed = (success && !*success) || (run.exit_code && *run.exit_code != 0);
  json::JsonWriter o;
  o.begin_object()
      .field("tool_call_id", call_id)
      .field("name", call->second.name)
      .field("output", c.text);
  if (failed) o.key("is_error").boolean(true);
  if (run.exit_code) o.field("exit_code", *run.exit_code);
  if (run.duration_ms) o.field("duration_ms", *run.duration_ms);
  if (!c.images.empty()) {
    o.key("content").begin_array();
    for (const auto &[mime, data] : c.images) write_image_block(o, data, mime);
    o.end_array();
  }
  o.end_object();
  emit(line_id(l), failed ? "ToolCallFailed" : "ToolCallFinished", "tool", o.str(), l.number,
       l.number);
  call->second.closed = true;
  std::erase(open_calls_, call_id);
  if (!failed) collab_result(call_id, call->second, c.text, l);
}

// The parent's side of a subagent (core/src/tools/handlers/multi_agents/):
// spawn_agent answers {"agent_id": <the child's thread id>, "nickname"}
// (the child's rollout names this session in its session_meta); wait /
// wait_agent answer {"status": {<thread id>: AgentStatus}, "timed_out"}.
void Reader::collab_result(const std::string &call_id, const Call &call, std::string_view output,
                           const Line &l) {
  if (call.name != "spawn_agent" && call.name != "wait" && call.name != "wait_agent") return;
  element doc;
  if (output_parser_.parse(output).get(doc) || !doc.is_object()) return;
  if (call.name == "spawn_agent") {
    std::string_view agent;
    if (doc["agent_id"].get(agent) || agent.empty()) return;
    std::string child = "codex-" + sanitize_id(agent);
    if (!children_.emplace(child, false).second) return;
    json::JsonWriter w;
    w.begin_object().field("child_session_id", child).field("tool_call_id", call_id);
    // SpawnAgentArgs: the task is its "message" (input items give none).
    simdjson::dom::parser args_parser;
    element args;
    if (!args_parser.parse(call.args).get(args) && args.is_object()) {
      std::string_view message;
      if (!args["message"].get(message) && !message.empty()) w.field("task", message);
    }
    w.end_object();
    return emit(line_id(l) + "-s", "SubagentStarted", "codex", w.str(), l.number, l.number);
  }
  element statuses;
  if (doc["status"].get(statuses) || !statuses.is_object()) return;
  int n = 0;
  for (auto [agent, status] : statuses.get_object())
    subagent_finished("codex-" + sanitize_id(agent), status, call_id, l,
                      line_id(l) + "-f" + std::to_string(++n));
}

// <subagent_notification>{"agent_id", "status"}</subagent_notification>: a
// child told its parent how it ended (core/src/session_prefix.rs).
void Reader::subagent_notification(std::string_view text, const Line &l) {
  constexpr std::string_view kOpen = "<subagent_notification>";
  std::string_view body = trim_start(text).substr(kOpen.size());
  body = body.substr(0, body.find("</subagent_notification>"));
  element doc;
  std::string_view agent;
  if (output_parser_.parse(body).get(doc) || !doc.is_object() || doc["agent_id"].get(agent)) return;
  auto status = pv::field(doc, "status");
  if (status) subagent_finished("codex-" + sanitize_id(agent), *status, "", l, line_id(l) + "-f1");
}

// A child started in this file that reached a final AgentStatus
// ("completed" with its last message, "errored", "shutdown", "not_found"):
// SubagentFinished, once.
void Reader::subagent_finished(const std::string &child, element status, const std::string &call_id,
                               const Line &l, const std::string &id) {
  auto it = children_.find(child);
  if (it == children_.end() || it->second) return;
  std::string summary;
  std::string_view s;
  if (!status.get(s)) {
    if (s == "pending_init" || s == "running") return;
    summary = "the subagent ended: " + std::string(s);
  } else if (status.is_object()) {
    for (auto [state, detail] : status.get_object()) {
      std::string_view text;
      bool has_text = !detail.get(text) && !text.empty();
      if (state == "completed")
        summary = has_text ? std::string(text) : "the subagent completed with no message";
      else
        summary = "the subagent ended: " + std::string(state) +
                  (has_text ? ": " + std::string(text) : "");
      break;
    }
  }
  if (summary.empty()) return;
  it->second = true;
  json::JsonWriter w;
  w.begin_object().field("child_session_id", child);
  if (!call_id.empty()) w.field("tool_call_id", call_id);
  w.field("summary", summary).end_object();
  emit(id, "SubagentFinished", "codex", w.str(), l.number, l.number);
}

void Reader::cancel_open_calls(const Line &l, std::string_view reason) {
  int n = 0;
  for (const std::string &id : open_calls_) {
    Call &call = calls_[id];
    json::JsonWriter w;
    w.begin_object()
        .field("tool_call_id", id)
        .field("name", call.name)
        .field("reason", reason)
        .end_object();
    emit(line_id(l) + "-c" + std::to_string(++n), "ToolCallCancelled", "system", w.str(), l.number,
         l.number);
    call.closed = true;
  }
  open_calls_.clear();
}

// event_msg thread_rolled_back {num_turns}: Codex drops the newest
// num_turns user turns from what it resumes with (rollout_reconstruction.rs
// applies context_manager/history.rs drop_last_n_user_turns where the
// record is). Those turns become a branch off the path: the events after
// the record continue from the event before the first dropped turn.
void Reader::roll_back(int64_t num_turns, const Line &l) {
  size_t cut = rollback_cut(num_turns);
  if (cut == path_.size()) return;
  // A call the dropped turns left open ends with their branch.
  cancel_open_calls(l, "the thread was rolled back before the call returned");
  size_t dropped_messages = 0;
  for (size_t i = cut; i < path_.size(); ++i) {
    abandoned_[path_[i].draft] = true;
    if (path_[i].user_message) ++dropped_messages;
  }
  user_messages_.resize(user_messages_.size() - std::min(dropped_messages, user_messages_.size()));
  path_.resize(cut);
  parent_ = cut == 0 ? session_ + "-start" : path_[cut - 1].id;
  // What a compaction would summarize now ends before the cut.
  auto last =
      std::find_if(path_.rbegin(), path_.rend(), [](const PathEntry &e) { return e.conversation; });
  if (last == path_.rend()) first_event_id_.clear();
  last_event_id_ = last == path_.rend() ? "" : last->id;
}

// Where the path is cut: at the num_turns-th user turn from the end (the
// first one when there are fewer), with the injected context just before
// it (history.rs trim_pre_turn_context_updates), never before the first
// turn; path_.size() when nothing is dropped.
size_t Reader::rollback_cut(int64_t num_turns) const {
  std::vector<size_t> turns;
  for (size_t i = 0; i < path_.size(); ++i)
    if (path_[i].step == Step::kUserTurn) turns.push_back(i);
  if (num_turns <= 0 || turns.empty()) return path_.size();
  size_t n = static_cast<size_t>(num_turns);
  size_t cut = n >= turns.size() ? turns.front() : turns[turns.size() - n];
  for (size_t i = cut; i > turns.front();) {
    Step step = path_[--i].step;
    if (step == Step::kContext)
      cut = i;
    else if (step != Step::kRecord) // records Codex keeps out of its history
      break;
  }
  return cut;
}

// The drafts on the path first, then the dropped turns, each in the order
// they were made (a parent always before its children): ctxdb's main
// branch is the path the first appended children follow, so main is what
// Codex resumes with.
void Reader::active_path_first() {
  std::vector<Draft> ordered;
  ordered.reserve(out_.events.size());
  for (bool second : {false, true})
    for (size_t i = 0; i < out_.events.size(); ++i)
      if (abandoned_[i] == second) ordered.push_back(std::move(out_.events[i]));
  out_.events = std::move(ordered);
}

void Reader::event_msg(element ev, element record, const Line &l) {
  std::string w = where(l);
  std::string type(pv::need_string(w, ev, "type", "payload"));
  std::string custom_name = "event_msg." + type;
  if (type == "token_count") {
    // {"info": {"last_token_usage": {...}, "total_token_usage", ...}} (older
    // versions: the usage fields at the top).
    std::optional<element> usage;
    if (auto info = pv::field(ev, "info"); info && info->is_object())
      usage = pv::field(*info, "last_token_usage");
    else if (pv::field(ev, "input_tokens"))
      usage = ev;
    if (usage && usage->is_object()) {
      std::string p = "payload.info.last_token_usage";
      pv::Usage u;
      int64_t input = pv::count(w, *usage, "input_tokens", p);
      u.cache_read = pv::count(w, *usage, "cached_input_tokens", p);
      u.input = pv::minus_cached(w, input, u.cache_read, pv::join_path(p, "cached_input_tokens"));
      u.output = pv::count(w, *usage, "output_tokens", p);
      u.reasoning = pv::count(w, *usage, "reasoning_output_tokens", p);
      u.provider = json::canonical(*usage);
      context_tokens_ = input + u.output;
      if (response_) {
        response(l).answer.usage = std::move(u);
        flush(); // the response is complete once Codex reports its usage
        return;
      }
    }
    return custom(line_id(l), custom_name, record, l, true);
  }
  if (type == "turn_aborted") {
    flush();
    std::string reason(pv::opt_string(w, ev, "reason", "payload").value_or("aborted"));
    cancel_open_calls(l, "the turn was aborted (" + reason + ") before the call returned");
  }
  if (type == "thread_rolled_back") {
    flush();
    roll_back(pv::count(w, ev, "num_turns", "payload"), l);
  }
  custom(line_id(l), custom_name, record, l, kKnownEventMsgs.contains(type));
}

void Reader::compacted(element c, const Line &l) {
  std::string w = where(l);
  flush();
  cancel_open_calls(l, "the conversation was compacted before the call returned");
  std::string summary(pv::opt_string(w, c, "message", "payload").value_or(""));
  auto replacement = pv::opt_array(w, c, "replacement_history", "payload");
  if (summary.empty())
    // Compacted on the provider's side: the summary is the encrypted
    // compaction item of the replacement history.
    summary = "(Codex compacted the conversation on the provider's side: its summary is "
              "encrypted, kept in the compaction item that follows)";
  std::string id = line_id(l);
  json::JsonWriter p;
  p.begin_object().field("summary", summary).field("first_kept_event_id", id);
  p.key("range").begin_object();
  if (!first_event_id_.empty())
    p.field("from_event_id", first_event_id_).field("to_event_id", last_event_id_);
  p.end_object();
  if (context_tokens_) p.field("tokens_before", *context_tokens_);
  p.key("summarizer").begin_object().field("kind", "foreign").field("agent", kFormat).end_object();
  p.end_object();
  // Codex rolls back within what the compaction left: nothing before it.
  path_.clear();
  emit(id, "CompactionCompleted", "codex", p.str(), l.number, l.number);
  path_.back().conversation = false;
  first_event_id_.clear();
  last_event_id_.clear();

  // What Codex resumes with after it.
  std::vector<std::string> kept;
  int n = 0;
  if (replacement) {
    size_t i = 0;
    user_messages_.clear(); // the history is the replacement now
    for (element item : *replacement) {
      std::string path = pv::index_path("payload.replacement_history", i++);
      if (!item.is_object()) pv::wrong_type(w, path, "an object");
      kept_item(item, l, id + "-h" + std::to_string(++n), path);
    }
  } else {
    // compact.rs build_compacted_history: the newest user messages that fit.
    size_t room = kKeptUserMessageBytes;
    for (auto it = user_messages_.rbegin(); it != user_messages_.rend() && room > 0; ++it) {
      std::string text = cut_utf8(*it, room);
      room -= std::min(room, it->size());
      kept.insert(kept.begin(), std::move(text));
    }
    user_messages_.clear();
    for (const std::string &text : kept) {
      Content k;
      k.text = text;
      k.texts.push_back(text);
      context_added("context", "compaction_user_message", k, l, id + "-h" + std::to_string(++n));
      kept_user_message(text);
    }
  }
}

// One item of a compaction's replacement history.
void Reader::kept_item(element item, const Line &l, const std::string &id,
                       const std::string &path) {
  std::string w = where(l);
  std::string_view type = pv::need_string(w, item, "type", path);
  if (type == "message") {
    auto [role, c] = read_message(w, item, path);
    if (role == "user" && injected_source(c.text) == "compaction_summary")
      return; // the CompactionCompleted's summary
    if (injected(role, c, l, id)) return;
    if (role == "user") {
      context_added("context", "compaction_user_message", c, l, id);
      if (!c.text.empty()) kept_user_message(c.text);
      return;
    }
  }
  // Calls, outputs, reasoning and the encrypted compaction item: copies the
  // conversation has no place for after a summary (their call ids are
  // already answered earlier in the log).
  custom(id, "replacement_history." + std::string(type), item, l, true);
}

} // namespace

bool is_codex_rollout(std::string_view file_name) {
  size_t slash = file_name.find_last_of("/\\");
  std::string_view name = slash == std::string_view::npos ? file_name : file_name.substr(slash + 1);
  return name.starts_with("rollout-") && name.ends_with(".jsonl");
}

Parsed parse_codex(std::string_view bytes, const ParseOptions &options) {
  Reader r(options);
  r.read(bytes);
  return r.take();
}

} // namespace ctxdb::transcript
