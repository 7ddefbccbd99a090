#include "project/messages.hpp"

#include "project/tool_calls.hpp"
#include "json/json_writer.hpp"
#include "json/parse.hpp"

namespace ctxdb::project {

namespace {

constexpr char kInsert[] = "INSERT INTO messages(session_no,seq,branch_no,event_id,ts,role,blocks,"
                           "tokens,token_counter) VALUES(?,?,?,?,?,?,?,?,?)";
constexpr char kSelectRange[] = "SELECT event_id,seq,ts,role,blocks,tokens,token_counter "
                                "FROM messages WHERE session_no=?1 AND seq BETWEEN ?2 AND ?3 "
                                "ORDER BY seq";

// Writes `key` with the payload's string field of the same name, if any.
void copy_string(json::JsonWriter &w, simdjson::dom::element payload, const char *key) {
  std::string_view s;
  if (!payload[key].get(s)) w.field(key, s);
}

} // namespace

std::span<const char *const> Messages::tables() const {
  static const char *const kTables[] = {"messages"};
  return kTables;
}

void Messages::on_append(const log::Event &e) {
  const std::string &t = e.type;
  bool wanted = t == "UserPromptSubmitted" || t == "AssistantMessageCreated" || is_tool_result(t) ||
                t == "CompactionCompleted";
  if (!wanted) return;
  // Core payloads passed their schemas, so the fields read below have the
  // types they declare.
  simdjson::dom::element p = payloads_.get(e);
  if (t == "UserPromptSubmitted")
    insert(e, user(p));
  else if (t == "AssistantMessageCreated")
    insert(e, assistant(p));
  else if (t == "CompactionCompleted")
    insert(e, summary(p));
  else
    insert(e, tool_result(e, p));
}

Messages::Content Messages::user(simdjson::dom::element payload) const {
  std::string_view text = string_field(payload, "text");
  json::JsonWriter w;
  w.begin_array().begin_object().field("type", "text").field("text", text).end_object().end_array();
  return {"user", w.take(), counter_.count(text)};
}

// The blocks are kept as the host wrote them (a thinking block's signature,
// an image's source): they are already the typed blocks of the schema.
Messages::Content Messages::assistant(simdjson::dom::element payload) const {
  simdjson::dom::array content = payload["content"].get_array().value();
  int64_t tokens = 0;
  for (simdjson::dom::element block : content) tokens += block_tokens(block);
  return {"assistant", json::canonical(payload["content"].value()), tokens};
}

// What the model reads of a block: its text, or a call's name and args.
int64_t Messages::block_tokens(simdjson::dom::element block) const {
  int64_t tokens =
      counter_.count(string_field(block, "text")) + counter_.count(string_field(block, "name"));
  simdjson::dom::element args;
  if (block["args"].get(args)) return tokens;
  if (args.is_string()) return tokens + counter_.count(args.get_string().value());
  return tokens + counter_.count(json::canonical(args));
}

Messages::Content Messages::tool_result(const log::Event &e, simdjson::dom::element payload) const {
  json::JsonWriter w;
  w.begin_array().begin_object().field("type", "tool_result");
  copy_string(w, payload, "tool_call_id");
  copy_string(w, payload, "name");
  w.field("status", result_status(e.type, payload));
  std::string_view output = string_field(payload, "output");
  std::string_view error = string_field(payload, "error");
  if (!output.empty()) w.field("text", output);
  if (!error.empty()) w.field("error", error);
  copy_string(w, payload, "artifact_id");
  w.end_object().end_array();
  return {"tool", w.take(), counter_.count(output) + counter_.count(error)};
}

Messages::Content Messages::summary(simdjson::dom::element payload) const {
  simdjson::dom::element s = payload["summary"].value();
  std::string text = s.is_string() ? std::string(s.get_string().value()) : json::canonical(s);
  json::JsonWriter w;
  w.begin_array().begin_object().field("type", "summary");
  if (s.is_string())
    w.field("text", text);
  else
    w.raw_field("summary", text);
  copy_string(w, payload, "first_kept_event_id");
  w.end_object().end_array();
  return {"summary", w.take(), counter_.count(text)};
}

void Messages::insert(const log::Event &e, const Content &c) {
  auto q = store_.statement(kInsert);
  q->bind(1, e.session_no);
  q->bind(2, e.seq);
  q->bind(3, e.branch_no);
  q->bindNoCopy(4, e.id);
  q->bind(5, e.ts);
  q->bindNoCopy(6, c.role);
  q->bindNoCopy(7, c.blocks);
  q->bind(8, c.tokens);
  store::bind_text(*q, 9, counter_.name());
  q->exec();
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
        .field("role", q.getColumn(3).getString())
        .raw_field("blocks", q.getColumn(4).getString())
        .field("tokens", q.getColumn(5).getInt64())
        .field("token_counter", q.getColumn(6).getString())
        .end_object();
  });
  w.end_array();
  return w.take();
}

} // namespace ctxdb::project
