#include "project/context_builds.hpp"

namespace ctxdb::project {

namespace {

constexpr char kInsert[] = "INSERT INTO context_builds(session_no,seq,branch_no,event_id,"
                           "used_tokens) VALUES(?,?,?,?,?)";
constexpr char kLatest[] = "SELECT e.payload FROM context_builds c JOIN events e "
                           "ON e.session_no=c.session_no AND e.seq=c.seq "
                           "WHERE c.session_no=?1 AND c.seq BETWEEN ?2 AND ?3 ORDER BY c.seq DESC";

} // namespace

std::span<const char *const> ContextBuilds::tables() const {
  static const char *const kTables[] = {"context_builds"};
  return kTables;
}

void ContextBuilds::on_append(const log::Event &e) {
  if (e.type != "ContextBuilt") return;
  simdjson::dom::element p = payloads_.get(e);
  int64_t used = 0;
  if (p["used_tokens"].get(used)) used = 0; // required by its schema
  auto q = store_.statement(kInsert);
  q->bind(1, e.session_no);
  q->bind(2, e.seq);
  q->bind(3, e.branch_no);
  q->bindNoCopy(4, e.id);
  q->bind(5, used);
  q->exec();
}

std::optional<std::string> ContextBuilds::latest_payload(const BranchPath &path) {
  std::optional<std::string> found;
  for_each_row_backward(store_, kLatest, path, [&](SQLite::Statement &q, const std::string &) {
    found = q.getColumn(0).getString();
    return false;
  });
  return found;
}

} // namespace ctxdb::project
