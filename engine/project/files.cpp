#include "project/files.hpp"

#include "store/row_inserts.hpp"
#include "json/json_writer.hpp"

#include <map>

namespace ctxdb::project {

namespace {

const store::RowInsert kInsert("INSERT INTO file_events(session_no,seq,branch_no,event_id,op,"
                               "path,artifact_id,change_summary,bytes,tool_call_id) VALUES",
                               "(?,?,?,?,?,?,?,?,?,?)");
constexpr char kSelectRange[] = "SELECT path,op,event_id,seq,change_summary,artifact_id "
                                "FROM file_events WHERE session_no=?1 AND seq BETWEEN ?2 AND ?3 "
                                "ORDER BY seq";

// The op a file event type records, or nullptr for any other type.
const char *op_of(std::string_view type) {
  if (type == "FileRead") return "read";
  if (type == "FileWritten") return "write";
  if (type == "DiffApplied") return "diff";
  return nullptr;
}

// What a branch's path says of one file, folded in seq order.
struct FileView {
  std::string last_read;  // {"event_id","seq"} or empty
  std::string last_write; // {"event_id","seq","op"} or empty
  int64_t reads = 0;
  int64_t writes = 0;
  json::JsonWriter changes; // the writes' and diffs' objects, in order
};

std::string event_ref(SQLite::Statement &q, const std::string &branch, bool with_op) {
  json::JsonWriter w;
  w.begin_object().field("event_id", q.getColumn(2).getString());
  w.field("seq", q.getColumn(3).getInt64()).field("branch_id", branch);
  if (with_op) w.field("op", q.getColumn(1).getString());
  w.end_object();
  return w.take();
}

void fold(FileView &f, SQLite::Statement &q, const std::string &branch) {
  if (q.getColumn(1).getString() == "read") {
    ++f.reads;
    f.last_read = event_ref(q, branch, false);
    return;
  }
  ++f.writes;
  f.last_write = event_ref(q, branch, true);
  f.changes.begin_object()
      .field("event_id", q.getColumn(2).getString())
      .field("seq", q.getColumn(3).getInt64())
      .field("op", q.getColumn(1).getString());
  column_field(f.changes, "change_summary", q.getColumn(4));
  column_field(f.changes, "artifact_id", q.getColumn(5));
  f.changes.end_object();
}

void raw_or_null(json::JsonWriter &w, std::string_view key, const std::string &json) {
  w.key(key);
  if (json.empty())
    w.null();
  else
    w.raw(json);
}

} // namespace

std::span<const char *const> Files::tables() const {
  static const char *const kTables[] = {"file_events"};
  return kTables;
}

void Files::on_append(const log::Event &e) {
  const char *op = op_of(e.type);
  if (!op) return;
  simdjson::dom::element p = payloads_.get(e);
  if (pending_size_ == pending_.size()) pending_.emplace_back();
  Row &r = pending_[pending_size_++];
  r.session_no = e.session_no;
  r.seq = e.seq;
  r.branch_no = e.branch_no;
  r.event_id = e.id;
  r.op = op;
  read_field(r.path, p, "path");
  read_field(r.artifact_id, p, "artifact_id");
  read_field(r.change_summary, p, "change_summary");
  read_field(r.bytes, p, "bytes");
  read_field(r.tool_call_id, p, "tool_call_id");
  // A replay is one long transaction: keep what waits in memory bounded.
  if (pending_size_ == kMaxPending) flush();
}

void Files::flush() {
  store::insert_rows(store_, kInsert, std::span<const Row>(pending_.data(), pending_size_),
                     bind_row);
  pending_size_ = 0;
}

// The field `key` of the payload (which passed its schema: a string or an
// integer when present).
void Files::read_field(Field &f, simdjson::dom::element payload, const char *key) {
  simdjson::dom::element v;
  if (payload[key].get(v)) {
    f.kind = Field::Kind::kNull;
  } else if (v.is_string()) {
    f.kind = Field::Kind::kText;
    f.text = v.get_string().value();
  } else {
    f.kind = Field::Kind::kInt;
    f.number = v.get_int64().value();
  }
}

void Files::bind(SQLite::Statement &q, int index, const Field &f) {
  switch (f.kind) {
  case Field::Kind::kNull: q.bind(index); break;
  case Field::Kind::kText: q.bindNoCopy(index, f.text); break;
  case Field::Kind::kInt: q.bind(index, f.number); break;
  }
}

void Files::bind_row(SQLite::Statement &q, int first, const Row &r) {
  q.bind(first + 1, r.session_no);
  q.bind(first + 2, r.seq);
  q.bind(first + 3, r.branch_no);
  q.bindNoCopy(first + 4, r.event_id);
  q.bindNoCopy(first + 5, r.op);
  bind(q, first + 6, r.path);
  bind(q, first + 7, r.artifact_id);
  bind(q, first + 8, r.change_summary);
  bind(q, first + 9, r.bytes);
  bind(q, first + 10, r.tool_call_id);
}

std::string Files::path_json(const BranchPath &path) {
  std::map<std::string, FileView> files; // by path: a stable order
  for_each_row(store_, kSelectRange, path, [&](SQLite::Statement &q, const std::string &branch) {
    FileView &f = files[q.getColumn(0).getString()];
    if (f.reads + f.writes == 0) f.changes.begin_array();
    fold(f, q, branch);
  });
  json::JsonWriter w;
  w.begin_array();
  for (auto &[name, f] : files) {
    w.begin_object().field("path", name);
    raw_or_null(w, "last_read", f.last_read);
    raw_or_null(w, "last_write", f.last_write);
    w.field("reads", f.reads).field("writes", f.writes);
    w.raw_field("changes", f.changes.end_array().str());
    w.end_object();
  }
  w.end_array();
  return w.take();
}

} // namespace ctxdb::project
