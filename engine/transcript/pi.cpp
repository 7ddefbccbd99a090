// pi.cpp — Pi coding agent sessions (badlogic/pi-mono, packages/coding-agent:
// docs/session.md, src/core/session-manager.ts, src/core/messages.ts; message
// types in packages/ai/src/types.ts) read as ctxdb events.
//
// A Pi session file is JSONL: a header {"type":"session","version","id",
// "cwd","parentSession"?}, then entries {type, id, parentId, timestamp, …}
// that form a tree; Pi resumes at the last line's entry. Mapping:
//
//   header                  SessionStarted (DraftSession.create_json), id "pi-<header id>";
//                           a later header: custom event pi.session, last
//   message user            UserPromptSubmitted (text, image blocks)
//   message assistant       AssistantMessageCreated (text, thinking + signature,
//                           tool_call, usage as provider/answer.hpp writes it);
//                           "aborted"/"error" turns: ToolCallCancelled per call (-x<n>)
//   message toolResult      ToolCallFinished, or ToolCallFailed when isError
//   message bashExecution   ContextAdded {kind context, source bash_execution}
//                           (pi.message.bashExecution when excludeFromContext)
//   message custom          ContextAdded {kind context, source extension:<customType>}
//     (v2 hookMessage)
//   custom_message          ContextAdded, as message custom
//   compaction              CompactionCompleted (summary, first_kept_event_id: the
//                           kept entry, its own id when it keeps nothing)
//   branch_summary          BranchSummarized (text as Pi sends it to the model)
//   model_change, thinking_level_change, custom, label, session_info
//                           custom events pi.<type> {record}
//   any other type / role   custom event pi.<type> (pi.message.<role>), counted unknown
//
// Ids: events "<session id>-<entry id>"; a tool call keeps Pi's id unless
// an earlier call on its path has it (or it is empty): "<id>-<entry id>".
// A branch_summary's from_leaf_event_id is the entry of the line before it
// when that is off its path (Pi records only where the new branch starts).
//
// Tree: an entry's parentId becomes its parent_id (a root, or an entry
// whose parent is unknown, hangs from the SessionStarted event). The active
// path (root → the last line's entry) is emitted first, then the other
// entries in file order, so ctxdb's main branch is what Pi resumes. A tool
// call whose turn moved on without a result (a later message on its path)
// is closed by ToolCallCancelled events placed just before that message
// (-c<n>); a call left open at the end of a branch that is not the active
// one is closed after it (-x<n>, provenance: the next line, which is what
// showed the branch was left). A call open at the active leaf stays pending.
//
// Old files, migrated as session-manager.ts does: v1 (no version) entries
// have no id/parentId: each is the child of the one before, with id
// "L<line>", and a compaction's firstKeptEntryIndex (an index into the
// file's records, header = 0) names its kept entry; v2's hookMessage role
// is v3's custom. Pi skips malformed lines; ctxdb reports them (file:line).
#include "error.hpp"
#include "provider/answer.hpp"
#include "transcript/reader_common.hpp"
#include "transcript/transcript.hpp"
#include "json/json_writer.hpp"
#include "json/parse.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

namespace ctxdb::transcript {

namespace {

using provider::field;
using provider::opt_string;
using simdjson::dom::element;

constexpr std::string_view kFormat = "pi";

// Pi's texts around summaries it sends as user messages (core/messages.ts).
constexpr std::string_view kBranchSummaryPrefix =
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n";
constexpr std::string_view kBranchSummarySuffix = "</summary>";
constexpr std::string_view kCompactionSummaryPrefix =
    "The conversation history before this point was compacted into the following "
    "summary:\n\n<summary>\n";
constexpr std::string_view kCompactionSummarySuffix = "\n</summary>";

enum class Kind {
  kUser,
  kAssistant,
  kToolResult,
  kContext, // bashExecution, custom (hookMessage), custom_message, summary roles
  kCompaction,
  kBranchSummary,
  kRecord,  // kept as a custom event
  kUnknown, // the same, counted
};

// Looked up by string_view as well as string (no key built per lookup).
struct IdHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
template <class V> using IdMap = std::unordered_map<std::string, V, IdHash, std::equal_to<>>;

struct Call {
  std::string id; // as Pi wrote it
  std::string name;
  std::string sent; // as the events name it (see assign_call_ids)
};

struct Entry {
  int64_t line = 0;
  std::string source_id; // Pi's id ("L<line>" in a v1 file)
  std::string event_id;
  int64_t parent = -1; // index; -1 for a root
  int64_t depth = 0;   // entries above it
  Kind kind = Kind::kRecord;
  std::string custom_type;   // kRecord / kUnknown: the event type's tail
  std::vector<Call> calls;   // an assistant's tool calls
  bool closes_calls = false; // an assistant turn that ended "aborted" / "error"
  bool moves_on = false;     // a message: calls still open before it got no result
  std::string result_for;    // a toolResult's toolCallId
  int64_t children = 0;
};

struct Header {
  int64_t line = 0;
  int64_t version = 1;
  std::string session_id;
};

std::string what_at(const ParseOptions &o, int64_t line) { return where(o.file, line); }

std::string_view string_or(element o, std::string_view key, std::string_view fallback = {}) {
  auto v = field(o, key);
  std::string_view s;
  if (!v || v->get(s)) return fallback;
  return s;
}

// A boolean field; false when absent or of another type (Pi's optional flags).
bool flag(element o, std::string_view key) {
  auto v = field(o, key);
  bool b = false;
  return v && !v->get(b) && b;
}

std::optional<int64_t> int_field(element o, std::string_view key) {
  auto v = field(o, key);
  int64_t n;
  if (!v || v->get_int64().get(n)) return std::nullopt;
  return n;
}

std::optional<int64_t> entry_ts(element o) {
  if (auto t = iso8601_ms(string_or(o, "timestamp"))) return t;
  return std::nullopt;
}

// A token count as Pi stores it (a number); anything else counts 0.
int64_t tokens(element u, std::string_view key) {
  auto v = field(u, key);
  if (!v) return 0;
  int64_t n;
  if (!v->get_int64().get(n)) return n < 0 ? 0 : n;
  double d;
  if (!v->get_double().get(d) && d > 0 && d < 9e18) return static_cast<int64_t>(std::llround(d));
  return 0;
}

// The model family of an assistant message: where its opaque state (a
// thinking signature, an encrypted reasoning item) may be sent back.
struct Family {
  const char *name = "openai";
  bool keeps_signatures = false;
  bool responses = false; // thinkingSignature is a Responses reasoning item
};

Family family_of(std::string_view api, std::string_view provider, std::string_view model) {
  if (api.empty()) { // files written before messages carried their api
    if (provider == "anthropic") return {"anthropic", true};
    if (provider.starts_with("google")) return {"gemini", true};
    return {};
  }
  if (api == "anthropic-messages") return {"anthropic", true};
  if (api.starts_with("google-")) return {"gemini", true};
  if (api == "openai-responses" || api == "azure-openai-responses" ||
      api == "openai-codex-responses")
    return {"openai", true, true};
  if (api == "bedrock-converse-stream" && (model.find("claude") != std::string_view::npos ||
                                           model.find("anthropic") != std::string_view::npos))
    return {"anthropic", true};
  // openai-completions keeps the name of a reasoning field in
  // thinkingSignature, not state; other APIs have none ctxdb can replay.
  return {};
}

// --- content blocks ---------------------------------------------------------

struct Parts {
  std::string text; // the text blocks, joined by newlines
  std::vector<std::pair<std::string_view, std::string_view>> images; // data, mime type
};

void add_text(std::string &to, std::string_view s) {
  if (!to.empty()) to += '\n';
  to += s;
}

// A user / tool result / custom message's content: a string or blocks of
// text and images.
Parts read_parts(std::string_view what, element o, std::string_view path,
                 std::map<std::string, int64_t> &unknown) {
  Parts p;
  auto c = field(o, "content");
  if (!c) return p;
  std::string_view s;
  if (!c->get(s)) {
    p.text = std::string(s);
    return p;
  }
  auto blocks = provider::opt_array(what, o, "content", path);
  size_t i = 0;
  for (element b : *blocks) {
    std::string bp = provider::index_path(provider::join_path(path, "content"), i++);
    std::string_view type = provider::need_string(what, b, "type", bp);
    if (type == "text")
      add_text(p.text, provider::need_string(what, b, "text", bp));
    else if (type == "image")
      p.images.emplace_back(provider::need_string(what, b, "data", bp),
                            provider::need_string(what, b, "mimeType", bp));
    else
      ++unknown["block." + std::string(type)];
  }
  return p;
}

void write_images(json::JsonWriter &w, const Parts &p) {
  if (p.images.empty()) return;
  w.key("content").begin_array();
  for (auto [data, mime] : p.images) write_image_block(w, data, mime);
  w.end_array();
}

void read_thinking(element b, const Family &f, std::vector<provider::Block> &out) {
  std::string_view text = string_or(b, "thinking");
  std::string_view sig = f.keeps_signatures ? string_or(b, "thinkingSignature") : "";
  bool redacted = flag(b, "redacted");
  provider::Block k;
  if (redacted) {
    // The opaque payload is in thinkingSignature (ai/src/types.ts).
    if (sig.empty()) return;
    k.kind = provider::Block::kRedactedThinking;
    k.data = std::string(sig);
    out.push_back(std::move(k));
    return;
  }
  k.kind = provider::Block::kThinking;
  k.text = std::string(text);
  if (f.responses && !sig.empty()) {
    // A Responses reasoning item, serialized whole (openai-responses-shared.ts).
    simdjson::dom::parser parser;
    element item;
    if (!parser.parse(sig).get(item) && item.is_object()) {
      k.id = std::string(string_or(item, "id"));
      if (auto s = field(item, "summary"); s && s->is_array())
        for (element part : s->get_array()) k.summary.emplace_back(string_or(part, "text"));
      if (auto e = opt_string("", item, "encrypted_content", ""))
        k.encrypted_content = std::string(*e);
    }
  } else if (!sig.empty()) {
    k.signature = std::string(sig);
  }
  if (k.text.empty() && !k.signature && k.id.empty() && !k.encrypted_content) return;
  out.push_back(std::move(k));
}

provider::Block read_tool_call(std::string_view what, element b, std::string_view path,
                               const Family &f) {
  provider::Block k;
  k.kind = provider::Block::kToolCall;
  k.id = std::string(opt_string(what, b, "id", path).value_or(""));
  k.name = std::string(provider::need_string(what, b, "name", path));
  auto args = field(b, "arguments");
  std::string_view s;
  if (!args)
    k.args = "{}";
  else if (!args->get(s))
    k.args = provider::arguments_json(s);
  else
    k.args = json::canonical(*args);
  if (f.keeps_signatures)
    if (std::string_view sig = string_or(b, "thoughtSignature"); !sig.empty()) {
      k.signature = std::string(sig);
      k.tagged = true;
    }
  return k;
}

// --- the reader ----------------------------------------------------------------

class Reader {
public:
  Reader(std::string_view bytes, const ParseOptions &o) : bytes_(bytes), o_(o) {}

  Parsed run() {
    Lines lines = split_lines(bytes_);
    out_.lines_consumed = lines.consumed_lines;
    out_.bytes_consumed = lines.consumed_bytes;
    if (lines.lines.empty()) return std::move(out_);
    lines_ = std::move(lines.lines);
    read_header();
    index_entries();
    emit_session();
    for (size_t i : emission_order()) emit(i);
    emit_extra_headers();
    return std::move(out_);
  }

private:
  element parse(size_t line_index) { return parse_line(parser_, o_.file, lines_[line_index]); }
  std::string what(int64_t line) const { return what_at(o_, line); }

  void read_header() {
    element h = parse(0);
    std::string_view type = string_or(h, "type");
    std::string_view id = string_or(h, "id");
    if (type != "session" || id.empty())
      line_error(
          o_.file, lines_[0].number,
          "a Pi session file starts with its header {\"type\":\"session\",\"id\":…}; "
          "this line is " +
              (type.empty() ? std::string("not one") : "a '" + std::string(type) + "' record"));
    header_.line = lines_[0].number;
    header_.session_id = sanitize_id("pi-" + std::string(id));
    header_.version = int_field(h, "version").value_or(1);
    start_id_ = header_.session_id + "-start";
  }

  std::string event_id(std::string_view source_id) const {
    return sanitize_id(header_.session_id + "-" + std::string(source_id));
  }

  // First pass: each entry's place in the tree and what pairing needs.
  void index_entries() {
    IdMap<size_t> &by_id = by_id_;
    by_id.reserve(lines_.size());
    call_users_.reserve(lines_.size());
    entries_.reserve(lines_.size());
    line_of_.reserve(lines_.size());
    for (size_t li = 1; li < lines_.size(); ++li) {
      element e = parse(li);
      int64_t line = lines_[li].number;
      std::string w = what(line);
      std::string_view type = provider::need_string(w, e, "type", "");
      if (type == "session") { // a second header: Pi keeps the first
        extra_headers_.push_back(li);
        continue;
      }
      Entry en;
      en.line = line;
      if (header_.version < 2) {
        en.source_id = "L" + std::to_string(line);
        en.parent = entries_.empty() ? -1 : static_cast<int64_t>(entries_.size() - 1);
      } else {
        en.source_id = std::string(provider::need_string(w, e, "id", ""));
        std::string_view parent = string_or(e, "parentId");
        // An unknown parent is a root, as Pi's getTree() takes it.
        if (auto it = by_id.find(parent); it != by_id.end() && parent != en.source_id)
          en.parent = static_cast<int64_t>(it->second);
      }
      if (auto [it, fresh] = by_id.emplace(en.source_id, entries_.size()); !fresh)
        line_error(o_.file, line,
                   "entry id '" + en.source_id + "' is already the id of line " +
                       std::to_string(entries_[it->second].line));
      en.event_id = event_id(en.source_id);
      classify(w, type, e, en);
      if (en.parent >= 0) {
        ++entries_[en.parent].children;
        en.depth = entries_[en.parent].depth + 1;
      }
      entries_.push_back(std::move(en));
      line_of_.push_back(li);
    }
  }

  void classify(const std::string &w, std::string_view type, element e, Entry &en) {
    en.custom_type = std::string(type);
    if (type == "message") {
      element m = provider::need_object(w, e, "message", "");
      std::string role(provider::need_string(w, m, "role", "message"));
      if (role == "hookMessage" && header_.version < 3) role = "custom";
      en.moves_on = true;
      if (role == "user") {
        en.kind = Kind::kUser;
      } else if (role == "assistant") {
        en.kind = Kind::kAssistant;
        if (auto blocks = provider::opt_array(w, m, "content", "message"))
          for (element b : *blocks)
            if (string_or(b, "type") == "toolCall")
              en.calls.push_back(
                  {std::string(string_or(b, "id")), std::string(string_or(b, "name")), ""});
        std::string_view stop = string_or(m, "stopReason");
        // Pi runs no tool of such a turn (agent/src/agent-loop.ts).
        en.closes_calls = (stop == "aborted" || stop == "error") && !en.calls.empty();
      } else if (role == "toolResult") {
        en.kind = Kind::kToolResult;
        en.moves_on = false;
        en.result_for = std::string(provider::need_string(w, m, "toolCallId", "message"));
      } else if (role == "bashExecution" || role == "custom" || role == "branchSummary" ||
                 role == "compactionSummary") {
        en.kind = Kind::kContext;
        if (flag(m, "excludeFromContext")) {
          en.kind = Kind::kRecord;
          en.moves_on = false;
          en.custom_type = "message." + role;
        }
      } else {
        en.kind = Kind::kUnknown;
        en.moves_on = false;
        en.custom_type = "message." + role;
      }
    } else if (type == "custom_message") {
      en.kind = Kind::kContext;
      en.moves_on = true;
    } else if (type == "compaction") {
      en.kind = Kind::kCompaction;
      en.moves_on = true;
    } else if (type == "branch_summary") {
      en.kind = string_or(e, "summary").empty() ? Kind::kRecord : Kind::kBranchSummary;
      en.moves_on = en.kind == Kind::kBranchSummary;
    } else if (type == "model_change" || type == "thinking_level_change" || type == "custom" ||
               type == "label" || type == "session_info") {
      en.kind = Kind::kRecord;
    } else {
      en.kind = Kind::kUnknown;
    }
  }

  // The active path (root → the last entry) first, then the rest in file
  // order: a parent always precedes its children.
  std::vector<size_t> emission_order() {
    std::vector<size_t> order;
    order.reserve(entries_.size());
    if (entries_.empty()) return order;
    std::vector<bool> on_path(entries_.size(), false);
    active_leaf_ = static_cast<int64_t>(entries_.size() - 1);
    for (int64_t i = active_leaf_; i >= 0; i = entries_[i].parent) {
      on_path[i] = true;
      order.push_back(static_cast<size_t>(i));
    }
    std::reverse(order.begin(), order.end());
    for (size_t i = 0; i < entries_.size(); ++i)
      if (!on_path[i]) order.push_back(i);
    open_.resize(entries_.size());
    tail_.resize(entries_.size());
    return order;
  }

  // --- drafts ---

  Provenance provenance(int64_t line, std::string_view record_id) const {
    return Provenance{kFormat, o_.file, line, 0, record_id};
  }

  void add(std::string json, int64_t line) {
    out_.events.push_back({header_.session_id, std::move(json), line, line});
  }

  void emit_session() {
    std::string model = first_model(); // before the header's parse: one parser
    element h = parse(0);
    json::JsonWriter w;
    w.begin_object().field("agent_id", "pi");
    if (!model.empty()) w.field("model", model);
    if (auto cwd = string_or(h, "cwd"); !cwd.empty()) w.field("cwd", cwd);
    // A fork (/fork) names its source file; ctxdb's parent_session_id is
    // for spawned sessions, which must exist first.
    if (auto p = string_or(h, "parentSession"); !p.empty()) w.field("parent_session_file", p);
    w.field("source_version", header_.version);
    w.end_object();
    DraftSession s;
    s.id = header_.session_id;
    s.create_json = session_create_json(s.id, start_id_, "pi", entry_ts(h), w.str(),
                                        provenance(header_.line, string_or(h, "id")));
    out_.sessions.push_back(std::move(s));
  }

  // Headers after the first, which Pi ignores: kept last, so that the
  // active path is the first child of the SessionStarted event (main).
  void emit_extra_headers() {
    for (size_t li : extra_headers_) {
      element e = parse(li);
      add(custom_event_json(event_id("L" + std::to_string(lines_[li].number)), kFormat, "session",
                            entry_ts(e), start_id_, e, provenance(lines_[li].number, "")),
          lines_[li].number);
    }
  }

  // The model the session starts with: its first model change or answer.
  std::string first_model() {
    for (size_t i = 0; i < entries_.size(); ++i) {
      if (entries_[i].kind != Kind::kAssistant && entries_[i].custom_type != "model_change")
        continue;
      element e = parse(line_of_[i]);
      if (entries_[i].kind == Kind::kAssistant)
        return std::string(string_or(e["message"], "model"));
      return std::string(string_or(e, "modelId"));
    }
    return {};
  }

  void cancel(const Call &c, std::string id, std::string &parent, std::string_view reason,
              int64_t line, std::string_view record_id) {
    json::JsonWriter w;
    w.begin_object().field("tool_call_id", c.sent);
    if (!c.name.empty()) w.field("name", c.name);
    w.field("reason", reason.substr(0, 2000)).end_object();
    add(event_json({id, "ToolCallCancelled", "tool", std::nullopt, parent}, w.str(),
                   provenance(line, record_id)),
        line);
    parent = std::move(id);
  }

  void cancel_all(const std::vector<Call> &calls, const Entry &en, char suffix,
                  std::string_view reason, int64_t line, std::string &parent) {
    int n = 0;
    for (const Call &c : calls)
      cancel(c, en.event_id + "-" + suffix + std::to_string(++n), parent, reason, line,
             en.source_id);
  }

  // A call keeps Pi's id unless ctxdb cannot take it: an empty one, or one
  // an earlier call on its path already has (a call id names one call per
  // path): those get "<id>-<entry id>[-<n>]", which their results follow.
  void assign_call_ids(size_t i) {
    Entry &en = entries_[i];
    std::vector<std::string> here;
    for (size_t n = 0; n < en.calls.size(); ++n) {
      Call &c = en.calls[n];
      std::string base = c.id.empty() ? "call" : c.id;
      c.sent = base;
      auto taken = [&](const std::string &id) {
        if (std::find(here.begin(), here.end(), id) != here.end()) return true;
        auto it = call_users_.find(id);
        if (it == call_users_.end()) return false;
        // Newest first: on a path, the nearest user is the cheapest to reach.
        return std::any_of(it->second.rbegin(), it->second.rend(),
                           [&](size_t a) { return is_ancestor(a, i); });
      };
      if (c.id.empty() || taken(c.sent)) c.sent += "-" + en.source_id;
      if (taken(c.sent)) c.sent += "-" + std::to_string(n + 1);
      here.push_back(c.sent);
      call_users_[c.sent].push_back(i);
      // Listed under the id it was renamed from too: the next call reusing
      // it finds this, its nearest user, in a few steps.
      if (c.sent != base) call_users_[base].push_back(i);
    }
  }

  bool is_ancestor(size_t a, size_t i) const {
    for (int64_t j = entries_[i].parent; j >= 0 && entries_[j].depth >= entries_[a].depth;
         j = entries_[j].parent)
      if (static_cast<size_t>(j) == a) return true;
    return false;
  }

  void emit(size_t i) {
    Entry &en = entries_[i];
    std::string parent = en.parent < 0 ? start_id_ : tail_[en.parent];
    std::vector<Call> open = en.parent < 0 ? std::vector<Call>{} : open_[en.parent];
    if (en.moves_on && !open.empty()) {
      cancel_all(open, en, 'c', "the conversation moved on without a result", en.line, parent);
      open.clear();
    }
    element e = parse(line_of_[i]);
    std::string w = what(en.line);
    Kind kind = en.kind;
    if (kind == Kind::kToolResult) {
      auto it = std::find_if(open.begin(), open.end(),
                             [&](const Call &c) { return c.id == en.result_for; });
      if (it == open.end()) {
        // No call of its own on its path: kept, as Pi keeps it, outside the pairs.
        kind = Kind::kRecord;
        en.custom_type = "message.toolResult";
      } else {
        result_call_id_ = it->sent;
        open.erase(it);
      }
    }
    if (kind == Kind::kAssistant) assign_call_ids(i);
    EventHead head{en.event_id, "", "", entry_ts(e), parent};
    Provenance prov = provenance(en.line, en.source_id);
    switch (kind) {
    case Kind::kUser: user(w, e, head, prov); break;
    case Kind::kAssistant: assistant(w, e, en.calls, head, prov); break;
    case Kind::kToolResult: tool_result(w, e, head, prov); break;
    case Kind::kContext: context(w, e, head, prov); break;
    case Kind::kCompaction: compaction(i, e, head, prov); break;
    case Kind::kBranchSummary: branch_summary(i, e, head, prov); break;
    case Kind::kUnknown: ++out_.unknown[en.custom_type]; [[fallthrough]];
    case Kind::kRecord:
      add(custom_event_json(head.id, kFormat, en.custom_type, head.ts, parent, e, prov), en.line);
      break;
    }
    std::string tail = en.event_id;
    if (kind == Kind::kAssistant) open = en.calls;
    if (kind == Kind::kAssistant && en.closes_calls) {
      cancel_all(en.calls, en, 'x', turn_end_reason(e), en.line, tail);
      open.clear();
    }
    if (en.children == 0 && static_cast<int64_t>(i) != active_leaf_ && !open.empty()) {
      // The line after this leaf is where Pi went elsewhere: a stable place,
      // whatever the file grows to.
      int64_t next = next_line(i);
      cancel_all(open, en, 'x', "the branch was left without a result", next, tail);
      open.clear();
    }
    tail_[i] = std::move(tail);
    open_[i] = std::move(open);
  }

  int64_t next_line(size_t i) const {
    size_t li = line_of_[i] + 1;
    return li < lines_.size() ? lines_[li].number : entries_[i].line;
  }

  static std::string turn_end_reason(element e) {
    element m = e["message"].value();
    if (string_or(m, "stopReason") == "aborted") return "the turn was aborted";
    std::string r = "the turn ended with an error";
    if (auto msg = string_or(m, "errorMessage"); !msg.empty()) r += ": " + std::string(msg);
    return r;
  }

  void user(const std::string &w, element e, EventHead &h, const Provenance &p) {
    Parts parts = read_parts(w, e["message"].value(), "message", out_.unknown);
    json::JsonWriter j;
    j.begin_object().field("text", parts.text);
    write_images(j, parts);
    j.end_object();
    h.type = "UserPromptSubmitted";
    h.actor = "user";
    add(event_json(h, j.str(), p), p.line);
  }

  void assistant(const std::string &w, element e, const std::vector<Call> &calls, EventHead &h,
                 const Provenance &p) {
    element m = e["message"].value();
    std::string_view api = string_or(m, "api"), prov = string_or(m, "provider"),
                     model = string_or(m, "model");
    Family f = family_of(api, prov, model);
    provider::Answer a;
    a.family = f.name;
    a.model = std::string(model);
    if (auto s = string_or(m, "stopReason"); !s.empty()) a.stop_reason = std::string(s);
    if (auto blocks = provider::opt_array(w, m, "content", "message")) {
      size_t i = 0, next_call = 0;
      for (element b : *blocks) {
        std::string bp = provider::index_path("message.content", i++);
        std::string_view type = provider::need_string(w, b, "type", bp);
        if (type == "text") {
          provider::Block k;
          k.text = std::string(provider::need_string(w, b, "text", bp));
          a.blocks.push_back(std::move(k));
        } else if (type == "thinking") {
          read_thinking(b, f, a.blocks);
        } else if (type == "toolCall") {
          a.blocks.push_back(read_tool_call(w, b, bp, f));
          a.blocks.back().id = calls[next_call++].sent;
        } else if (type == "image") {
          provider::Block k;
          k.kind = provider::Block::kImage;
          k.data = std::string(provider::need_string(w, b, "data", bp));
          k.mime_type = std::string(provider::need_string(w, b, "mimeType", bp));
          a.blocks.push_back(std::move(k));
        } else {
          ++out_.unknown["block." + std::string(type)];
        }
      }
    }
    if (auto u = field(m, "usage"); u && u->is_object()) {
      // Pi's usage already has one meaning for every provider: input is
      // uncached, output includes reasoning (ai/src/types.ts Usage).
      provider::Usage usage;
      usage.input = tokens(*u, "input");
      usage.output = tokens(*u, "output");
      usage.cache_read = tokens(*u, "cacheRead");
      usage.cache_write = tokens(*u, "cacheWrite");
      usage.provider = json::canonical(*u);
      a.usage = std::move(usage);
    }
    json::JsonWriter extra;
    extra.begin_object();
    if (!api.empty()) extra.field("api", api);
    if (!prov.empty()) extra.field("source_provider", prov);
    if (auto err = string_or(m, "errorMessage"); !err.empty()) extra.field("error_message", err);
    extra.end_object();
    h.type = "AssistantMessageCreated";
    h.actor = "assistant";
    add(event_json(h, merged(provider::write_payload(a), extra.str()), p), p.line);
  }

  // Two JSON objects' fields in one object.
  static std::string merged(std::string_view a, std::string_view b) {
    if (b.size() <= 2) return std::string(a);
    std::string out(a.substr(0, a.size() - 1));
    if (a.size() > 2) out += ',';
    out += b.substr(1);
    return out;
  }

  void tool_result(const std::string &w, element e, EventHead &h, const Provenance &p) {
    element m = e["message"].value();
    Parts parts = read_parts(w, m, "message", out_.unknown);
    bool is_error = provider::opt_bool(w, m, "isError", "message");
    json::JsonWriter j;
    j.begin_object().field("tool_call_id", result_call_id_);
    if (auto name = string_or(m, "toolName"); !name.empty()) j.field("name", name);
    j.field("output", parts.text);
    if (is_error) j.key("is_error").boolean(true);
    write_images(j, parts);
    if (auto d = field(m, "details")) j.key("details").element(*d);
    j.end_object();
    h.type = is_error ? "ToolCallFailed" : "ToolCallFinished";
    h.actor = "tool";
    add(event_json(h, j.str(), p), p.line);
  }

  // What Pi sends the model as a user message that the user did not type.
  void context(const std::string &w, element e, EventHead &h, const Provenance &p) {
    bool entry = string_or(e, "type") == "custom_message";
    element m = entry ? e : e["message"].value();
    std::string_view role = entry ? "custom" : string_or(m, "role");
    if (role == "hookMessage") role = "custom";
    std::string text, source;
    Parts parts;
    if (role == "bashExecution") {
      text = bash_execution_text(m);
      source = "bash_execution";
    } else if (role == "branchSummary") {
      text = std::string(kBranchSummaryPrefix) + std::string(string_or(m, "summary")) +
             std::string(kBranchSummarySuffix);
      source = "branch_summary";
    } else if (role == "compactionSummary") {
      text = std::string(kCompactionSummaryPrefix) + std::string(string_or(m, "summary")) +
             std::string(kCompactionSummarySuffix);
      source = "compaction_summary";
    } else {
      parts = read_parts(w, m, entry ? "" : "message", out_.unknown);
      text = std::move(parts.text);
      // ContextAdded's source is at most 200 characters.
      source = "extension:" + std::string(string_or(m, "customType").substr(0, 180));
    }
    json::JsonWriter j;
    j.begin_object().field("kind", "context").field("text", text).field("source", source);
    write_images(j, parts);
    // An extension's metadata, which Pi does not send the model.
    if (auto d = field(m, "details"); d && role == "custom") j.key("details").element(*d);
    j.end_object();
    h.type = "ContextAdded";
    h.actor = "system";
    add(event_json(h, j.str(), p), p.line);
  }

  // bashExecutionToText (core/messages.ts).
  static std::string bash_execution_text(element m) {
    std::string text = "Ran `" + std::string(string_or(m, "command")) + "`\n";
    std::string_view output = string_or(m, "output");
    if (!output.empty())
      text += "```\n" + std::string(output) + "\n```";
    else
      text += "(no output)";
    std::optional<int64_t> code = int_field(m, "exitCode");
    if (flag(m, "cancelled"))
      text += "\n\n(command cancelled)";
    else if (code && *code != 0)
      text += "\n\nCommand exited with code " + std::to_string(*code);
    if (auto path = string_or(m, "fullOutputPath"); flag(m, "truncated") && !path.empty())
      text += "\n\n[Output truncated. Full output: " + std::string(path) + "]";
    return text;
  }

  // The kept entry of compaction c (its record e), as buildSessionContext
  // finds it: an entry on c's path before it; nullopt when it keeps nothing.
  std::optional<size_t> first_kept(element e, size_t c) const {
    std::string kept;
    if (auto id = string_or(e, "firstKeptEntryId"); !id.empty()) {
      kept = std::string(id);
    } else if (header_.version < 2) {
      // migrateV1ToV2: firstKeptEntryIndex counts the file's records, header first.
      int64_t index = int_field(e, "firstKeptEntryIndex").value_or(-1);
      if (index >= 1 && static_cast<size_t>(index) < lines_.size())
        kept = "L" + std::to_string(lines_[index].number);
    }
    auto it = by_id_.find(kept);
    if (it == by_id_.end() || !is_ancestor(it->second, c)) return std::nullopt;
    return it->second;
  }

  void compaction(size_t i, element e, EventHead &h, const Provenance &p) {
    const Entry &en = entries_[i];
    std::optional<size_t> kept = first_kept(e, i);
    // What it summarizes: from the previous compaction's kept entry (or the
    // entry after it, or the root) to the entry before its own kept one.
    int64_t from = -1, below = -1;
    std::string previous;
    for (int64_t j = en.parent; j >= 0; below = j, j = entries_[j].parent) {
      if (entries_[j].kind != Kind::kCompaction) continue;
      previous = entries_[j].event_id;
      std::optional<size_t> prev_kept = first_kept(parse(line_of_[j]), static_cast<size_t>(j));
      from = prev_kept ? static_cast<int64_t>(*prev_kept) : below;
      break;
    }
    if (previous.empty()) from = below >= 0 ? below : en.parent;
    int64_t to = kept ? entries_[*kept].parent : en.parent;
    e = parse(line_of_[i]); // first_kept's parse above reused the parser
    json::JsonWriter j;
    j.begin_object().field("summary", provider::need_string(what(p.line), e, "summary", ""));
    j.field("first_kept_event_id", kept ? entries_[*kept].event_id : h.id);
    if (from >= 0 && to >= 0 && entries_[from].depth <= entries_[to].depth)
      j.key("range")
          .begin_object()
          .field("from_event_id", entries_[from].event_id)
          .field("to_event_id", entries_[to].event_id)
          .field("events", entries_[to].depth - entries_[from].depth + 1)
          .end_object();
    if (field(e, "tokensBefore")) j.field("tokens_before", tokens(e, "tokensBefore"));
    j.key("summarizer").begin_object().field("kind", "foreign").field("agent", "pi");
    if (flag(e, "fromHook")) j.key("from_hook").boolean(true);
    j.end_object();
    if (!previous.empty()) j.field("previous_compaction_id", previous);
    if (auto d = field(e, "details")) j.key("details").element(*d);
    j.end_object();
    h.type = "CompactionCompleted";
    h.actor = "pi";
    add(event_json(h, j.str(), p), p.line);
  }

  void branch_summary(size_t i, element e, EventHead &h, const Provenance &p) {
    const Entry &en = entries_[i];
    std::string ancestor = en.parent < 0 ? start_id_ : entries_[en.parent].event_id;
    // Pi records where the new branch starts (fromId), not the leaf it
    // left; that leaf is the entry written just before, when it is not
    // on this entry's own path.
    std::string left = ancestor;
    if (i > 0 && !is_ancestor(i - 1, i)) left = entries_[i - 1].event_id;
    std::string_view summary = string_or(e, "summary");
    json::JsonWriter j;
    j.begin_object().field("text", std::string(kBranchSummaryPrefix) + std::string(summary) +
                                       std::string(kBranchSummarySuffix));
    j.key("summary").begin_object().field("text", summary);
    if (auto d = field(e, "details")) j.key("details").element(*d);
    if (flag(e, "fromHook")) j.key("from_hook").boolean(true);
    j.end_object();
    j.field("from_leaf_event_id", left).field("common_ancestor_event_id", ancestor);
    j.end_object();
    h.type = "BranchSummarized";
    h.actor = "pi";
    add(event_json(h, j.str(), p), p.line);
  }

  std::string_view bytes_;
  const ParseOptions &o_;
  simdjson::dom::parser parser_;
  Parsed out_;
  std::vector<Line> lines_;
  Header header_;
  std::string start_id_;
  std::vector<Entry> entries_;
  std::vector<size_t> line_of_; // entry → its index in lines_
  IdMap<size_t> by_id_;         // Pi's id → entry
  std::vector<size_t> extra_headers_;
  int64_t active_leaf_ = -1;
  std::vector<std::vector<Call>> open_;   // per entry: calls open at its end
  std::vector<std::string> tail_;         // per entry: its last event's id
  IdMap<std::vector<size_t>> call_users_; // call id → its entries
  std::string result_call_id_;            // the call the tool result being written answers
};

} // namespace

Parsed parse_pi(std::string_view bytes, const ParseOptions &options) {
  return Reader(bytes, options).run();
}

} // namespace ctxdb::transcript
