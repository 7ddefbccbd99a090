#include "project/rebuild.hpp"

#include "util/sha256.hpp"

#include <sqlite3.h>

#include <cstring>

namespace ctxdb::project {

namespace {

// Appends one value's bytes, type first, so that 1, 1.0, '1' and x'31' all
// hash apart. Values are gathered and hashed in large pieces: a SHA-256
// update per value costs more than the value.
void append_value(std::string &buf, const SQLite::Column &c) {
  auto put = [&](const void *p, size_t n) { buf.append(static_cast<const char *>(p), n); };
  int type = c.getType();
  uint8_t tag = static_cast<uint8_t>(type);
  put(&tag, 1);
  switch (type) {
  case SQLITE_INTEGER: {
    int64_t v = c.getInt64();
    put(&v, sizeof v);
    break;
  }
  case SQLITE_FLOAT: {
    double v = c.getDouble();
    put(&v, sizeof v);
    break;
  }
  case SQLITE_TEXT:
  case SQLITE_BLOB: {
    int64_t n = c.getBytes();
    put(&n, sizeof n);
    put(c.getBlob(), size_t(n));
    break;
  }
  default: break; // NULL: the tag says it all
  }
}

constexpr size_t kHashChunk = 1 << 16;

} // namespace

// The order rows are hashed in: the primary key when the table declares
// one (its b-tree's own order, so no sort); otherwise every column, since
// a rowid is not part of a row and a replay may insert in another order.
std::string key_order(store::Store &store, const std::string &table) {
  SQLite::Statement q(store.db(), "SELECT name,pk FROM pragma_table_info(?) ORDER BY pk,cid");
  q.bind(1, table);
  std::string key, all;
  while (q.executeStep()) {
    std::string column = "\"" + q.getColumn(0).getString() + "\"";
    all += (all.empty() ? "" : ",") + column;
    if (q.getColumn(1).getInt() > 0) key += (key.empty() ? "" : ",") + column;
  }
  return key.empty() ? all : key;
}

namespace {

// Hashes every row `sql` returns into h; the number of rows.
int64_t hash_rows(store::Store &store, const std::string &sql, util::Sha256 &h) {
  SQLite::Statement q(store.db(), sql);
  std::string buf;
  buf.reserve(kHashChunk + 4096);
  int64_t rows = 0;
  while (q.executeStep()) {
    ++rows;
    for (int i = 0; i < q.getColumnCount(); ++i) append_value(buf, q.getColumn(i));
    if (buf.size() >= kHashChunk) {
      h.update(buf);
      buf.clear();
    }
  }
  h.update(buf);
  return rows;
}

// --- FTS5 tables (search) ---------------------------------------------------
// An FTS5 table's pages depend on how its writes were grouped into
// transactions (each one adds a segment, merged later), which a replay in
// one transaction does not repeat. What it indexes does not: so it is
// checksummed by every document's token count (its _docsize rows) and
// every term with its document and occurrence counts (an fts5vocab view),
// and cleared with 'delete-all' (an external-content table cannot DELETE
// rows whose content it would have to read back).
bool is_fts5(store::Store &store, const std::string &table) {
  SQLite::Statement q(store.db(), "SELECT sql FROM sqlite_schema WHERE name=?");
  q.bind(1, table);
  return q.executeStep() && q.getColumn(0).getString().find("USING fts5") != std::string::npos;
}

std::string fts5_checksum(store::Store &store, const std::string &table, int64_t &rows) {
  std::string vocab = "temp.\"" + table + "_rebuild_vocab\"";
  store.db().exec("CREATE VIRTUAL TABLE IF NOT EXISTS " + vocab + " USING fts5vocab(main, \"" +
                  table + "\", row)");
  util::Sha256 h;
  rows = hash_rows(store, "SELECT id,sz FROM \"" + table + "_docsize\" ORDER BY id", h);
  hash_rows(store, "SELECT term,doc,cnt FROM " + vocab, h);
  return util::to_hex(h.finish());
}

} // namespace

std::string table_checksum(store::Store &store, const std::string &table, int64_t &rows) {
  if (is_fts5(store, table)) return fts5_checksum(store, table, rows);
  // Table names come from the projections, never from input.
  util::Sha256 h;
  rows = hash_rows(store, "SELECT * FROM " + table + " ORDER BY " + key_order(store, table), h);
  return util::to_hex(h.finish());
}

namespace {

// Clears every derived table, noting its checksum first.
void clear(store::Store &store, std::span<const char *const> tables, RebuildReport &r) {
  for (const char *table : tables) {
    TableChecksum t;
    t.table = table;
    t.before = table_checksum(store, t.table, t.rows);
    if (is_fts5(store, t.table))
      store.db().exec("INSERT INTO " + t.table + "(" + t.table + ") VALUES('delete-all')");
    else
      store.db().exec("DELETE FROM " + t.table);
    r.tables.push_back(std::move(t));
  }
}

// Replays the log through the tree and the projections alone: the log
// itself is not written.
void replay(log::EventLog &log, std::span<Projection *const> projections, RebuildReport &r) {
  log.scan_all([&](log::Event &e) {
    log.tree().place(e, e.session_no, 0);
    for (Projection *p : projections) p->on_append(e);
    ++r.events;
  });
  log.tree().flush();
  for (Projection *p : projections) p->flush();
}

} // namespace

RebuildReport rebuild(store::Store &store, log::EventLog &log,
                      std::span<Projection *const> projections, bool check) {
  store::Store::WriteTransaction tx(store);
  RebuildReport r;
  for (Projection *p : projections) p->before_rebuild();
  clear(store, log::Tree::tables(), r);
  for (Projection *p : projections) clear(store, p->tables(), r);
  try {
    replay(log, projections, r);
  } catch (...) {
    log.tree().discard();
    for (Projection *p : projections) p->discard();
    throw;
  }
  std::string differing;
  for (TableChecksum &t : r.tables) {
    t.after = table_checksum(store, t.table, t.rows);
    if (t.after != t.before) differing += (differing.empty() ? "" : ", ") + t.table;
  }
  r.identical = differing.empty();
  if (check && !r.identical)
    throw Error(Code::kCheckFailed, "rebuild --check: the replayed log gives other rows in " +
                                        differing + " (nothing was changed)");
  tx.commit();
  return r;
}

} // namespace ctxdb::project
