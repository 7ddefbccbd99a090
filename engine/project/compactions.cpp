#include "project/compactions.hpp"

#include "error.hpp"

namespace ctxdb::project {

namespace {

constexpr char kInsert[] = "INSERT INTO compactions(session_no,seq,branch_no,event_id,"
                           "first_kept_seq,tokens_before,tokens_after) VALUES(?,?,?,?,?,?,?)";
constexpr char kLatest[] = "SELECT seq,event_id,first_kept_seq FROM compactions "
                           "WHERE session_no=?1 AND seq BETWEEN ?2 AND ?3 ORDER BY seq DESC";
constexpr char kFindEvent[] = "SELECT session_no,seq FROM events WHERE id=?";

} // namespace

std::span<const char *const> Compactions::tables() const {
  static const char *const kTables[] = {"compactions"};
  return kTables;
}

void Compactions::on_append(const log::Event &e) {
  if (e.type != "CompactionCompleted") return;
  simdjson::dom::element p = payloads_.get(e);
  int64_t kept = first_kept_seq(e, string_field(p, "first_kept_event_id"));
  auto q = store_.statement(kInsert);
  q->bind(1, e.session_no);
  q->bind(2, e.seq);
  q->bind(3, e.branch_no);
  q->bindNoCopy(4, e.id);
  q->bind(5, kept);
  bind_field(*q, 6, p, "tokens_before");
  bind_field(*q, 7, p, "tokens_after");
  q->exec();
}

// The log writes what it has queued before a CompactionCompleted (see
// EventLog::enqueue), so every earlier event is in the table here.
int64_t Compactions::first_kept_seq(const log::Event &e, std::string_view kept_id) {
  if (kept_id == e.id) return e.seq;
  auto q = store_.statement(kFindEvent);
  q->bind(1, std::string(kept_id));
  if (q->executeStep() && q->getColumn(0).getInt64() == e.session_no) {
    int64_t seq = q->getColumn(1).getInt64();
    if (seq < e.seq && tree_.on_path(tree_.branch_of(e.session_no, seq), seq, e.branch_no))
      return seq;
  }
  throw Error(Code::kInvalidArg, "CompactionCompleted: first_kept_event_id '" +
                                     std::string(kept_id) +
                                     "' is not an earlier event on the compaction's branch");
}

std::optional<CompactionRef> Compactions::latest(const BranchPath &path) {
  std::optional<CompactionRef> found;
  for_each_row_backward(store_, kLatest, path, [&](SQLite::Statement &q, const std::string &) {
    found = CompactionRef{q.getColumn(0).getInt64(), q.getColumn(1).getString(),
                          q.getColumn(2).getInt64()};
    return false;
  });
  return found;
}

} // namespace ctxdb::project
