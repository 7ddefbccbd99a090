#include "project/messages.hpp"

#include "project/tool_calls.hpp"
#include "store/row_inserts.hpp"
#include "json/parse.hpp"

#include <algorithm>

namespace ctxdb::project {

namespace {

const store::RowInsert
    kInsert("INSERT INTO messages(session_no,seq,branch_no,role,tokens,token_counter) VALUES",
            "(?,?,?,?,?,?)");
constexpr char kSelectRange[] =
    "SELECT e.id,m.seq,e.ts,m.role,m.tokens,m.token_counter,e.type,e.payload "
    "FROM messages m JOIN events e ON e.session_no=m.session_no AND e.seq=m.seq "
    "WHERE m.session_no=?1 AND m.seq BETWEEN ?2 AND ?3 ORDER BY m.seq";

// Writes `key` with the object's string field of the same name, if any.
void copy_string(json::JsonWriter &w, simdjson::dom::element obj, const char *key) {
  std::string_view s;
  if (!obj[key].get(s)) w.field(key, s);
}

// The image blocks of a payload's content spilled to artifacts at append
// ({type: image, artifact_id, mime_type, bytes}): what a message shows of
// an image, never its pixels.
bool is_stored_image(simdjson::dom::element b) {
  return string_field(b, "type") == "image" && !string_field(b, "artifact_id").empty();
}
bool has_images(simdjson::dom::element p) {
  simdjson::dom::array content;
  if (p["content"].get(content)) return false;
  return std::any_of(content.begin(), content.end(), is_stored_image);
}
void write_images(json::JsonWriter &w, simdjson::dom::element p) {
  for (simdjson::dom::element b : p["content"].get_array())
    if (is_stored_image(b)) w.element(b);
}

void write_tool_result(json::JsonWriter &w, std::string_view type, simdjson::dom::element p) {
  w.begin_object().field("type", "tool_result");
  copy_string(w, p, "tool_call_id");
  copy_string(w, p, "name");
  w.field("status", result_status(type, p));
  std::string_view output = string_field(p, "output");
  if (type == "ToolCallCancelled")
    w.field("text", Messages::cancelled_text(string_field(p, "reason")));
  else if (!output.empty())
    w.field("text", output);
  copy_string(w, p, "error");
  copy_string(w, p, "artifact_id");
  if (has_images(p)) {
    w.key("content").begin_array();
    write_images(w, p);
    w.end_array();
  }
  w.end_object();
}

// A ContextAdded: one context block (its kind, what it was, its text),
// then its stored images.
void write_context(json::JsonWriter &w, simdjson::dom::element p) {
  w.begin_object().field("type", "context");
  copy_string(w, p, "kind");
  copy_string(w, p, "source");
  w.field("text", string_field(p, "text")).end_object();
  if (has_images(p)) write_images(w, p);
}

void write_summary(json::JsonWriter &w, simdjson::dom::element p) {
  simdjson::dom::element s = p["summary"].value();
  w.begin_object().field("type", "summary");
  if (s.is_string())
    w.field("text", s.get_string().value());
  else
    w.raw_field("summary", json::canonical(s));
  copy_string(w, p, "first_kept_event_id");
  w.end_object();
}

// The role a view shows: a ContextAdded is context whatever its kind (its
// block says which); the table keeps instructions apart for the compile.
const char *view_role(const char *stored) {
  return std::string_view(stored) == "instructions" ? "context" : stored;
}

} // namespace

std::string Messages::cancelled_text(std::string_view reason) {
  std::string text = "[tool call interrupted: no result";
  if (!reason.empty()) text.append(" (").append(reason).append(")");
  return text + "]";
}

std::span<const char *const> Messages::tables() const {
  static const char *const kTables[] = {"messages"};
  return kTables;
}

const char *Messages::role_of(std::string_view type) {
  if (type == "UserPromptSubmitted") return "user";
  if (type == "AssistantMessageCreated") return "assistant";
  if (is_tool_result(type)) return "tool";
  if (type == "CompactionCompleted") return "summary";
  // What an abandoned branch tried (engine/compact/), told to the branch
  // that continues from its fork point: its "text" is read as the user's.
  if (type == "BranchSummarized") return "user";
  if (type == "ContextAdded") return "context";
  return nullptr;
}

const char *Messages::role_of(std::string_view type, simdjson::dom::element payload) {
  const char *role = role_of(type);
  if (type == "ContextAdded" && string_field(payload, "kind") == "instructions")
    return "instructions";
  return role;
}

void Messages::on_append(const log::Event &e) {
  if (!role_of(e.type)) return;
  simdjson::dom::element payload = payloads_.get(e);
  pending_.push_back({e.session_no, e.seq, e.branch_no, role_of(e.type, payload),
                      count_tokens(*counter_, e.type, payload)});
  // A replay is one long transaction: keep what waits in memory bounded.
  if (pending_.size() == kMaxPending) flush();
}

void Messages::bind_row(SQLite::Statement &q, int first, const Row &r) const {
  q.bind(first + 1, r.session_no);
  q.bind(first + 2, r.seq);
  q.bind(first + 3, r.branch_no);
  q.bindNoCopy(first + 4, r.role);
  q.bind(first + 5, r.tokens);
  store::bind_text(q, first + 6, counter_->name());
}

void Messages::flush() {
  store::insert_rows(
      store_, kInsert, std::span<const Row>(pending_),
      [this](SQLite::Statement &q, int first, const Row &r) { bind_row(q, first, r); });
  pending_.clear();
}

// Core payloads passed their schemas, so the fields read below have the
// types they declare. The assistant's blocks are kept as the host wrote
// them (a thinking block's signature, an image's source): they already are
// the typed blocks of the schema.
void Messages::write_blocks(json::JsonWriter &w, std::string_view type,
                            simdjson::dom::element payload) {
  std::string_view role = role_of(type);
  if (role == "assistant") {
    w.element(payload["content"].value());
    return;
  }
  w.begin_array();
  if (role == "user") {
    w.begin_object()
        .field("type", "text")
        .field("text", string_field(payload, "text"))
        .end_object();
    if (has_images(payload)) write_images(w, payload);
  } else if (role == "context") {
    write_context(w, payload);
  } else if (role == "tool")
    write_tool_result(w, type, payload);
  else
    write_summary(w, payload);
  w.end_array();
}

namespace {

// A block's text, or a call's name and args.
int64_t block_tokens(const token::Counter &counter, simdjson::dom::element block) {
  int64_t n =
      counter.count(string_field(block, "text")) + counter.count(string_field(block, "name"));
  simdjson::dom::element args;
  if (block["args"].get(args)) return n;
  if (args.is_string()) return n + counter.count(args.get_string().value());
  return n + counter.count(json::canonical(args));
}

} // namespace

int64_t Messages::count_tokens(const token::Counter &counter, std::string_view type,
                               simdjson::dom::element p) {
  std::string_view role = role_of(type);
  if (role == "user" || role == "context") return counter.count(string_field(p, "text"));
  if (type == "ToolCallCancelled") return counter.count(cancelled_text(string_field(p, "reason")));
  if (role == "tool")
    return counter.count(string_field(p, "output")) + counter.count(string_field(p, "error"));
  if (role == "summary") {
    simdjson::dom::element s = p["summary"].value();
    return counter.count(s.is_string() ? std::string(s.get_string().value()) : json::canonical(s));
  }
  simdjson::dom::array content = p["content"].get_array().value();
  int64_t n = 0;
  for (simdjson::dom::element block : content) n += block_tokens(counter, block);
  return n;
}

std::string Messages::path_json(const BranchPath &path) {
  json::JsonWriter w;
  w.begin_array();
  for_each_row(store_, kSelectRange, path, [&](SQLite::Statement &q, const std::string &branch) {
    w.begin_object()
        .field("event_id", q.getColumn(0).getString())
        .field("seq", q.getColumn(1).getInt64())
        .field("ts", q.getColumn(2).getInt64())
        .field("branch_id", branch)
        .field("role", view_role(q.getColumn(3).getText()))
        .field("tokens", q.getColumn(4).getInt64())
        .field("token_counter", q.getColumn(5).getString());
    std::string payload = q.getColumn(7).getString();
    w.key("blocks");
    write_blocks(w, q.getColumn(6).getString(), read_parser_.parse(payload).value());
    w.end_object();
  });
  w.end_array();
  return w.take();
}

} // namespace ctxdb::project
