#include "project/rebuild.hpp"

#include "util/sha256.hpp"

#include <sqlite3.h>

#include <cstring>
#include <future>
#include <memory>

namespace ctxdb::project {

namespace {

// Appends one value's bytes, type first, so that 1, 1.0, '1' and x'31' all
// hash apart. Values are gathered and hashed in large pieces: a SHA-256
// update per value costs more than the value. Read through SQLite's C API:
// a checksum reads every value of every derived table (the two passes
// were a fifth of a rebuild), and SQLiteCpp's Column adds a shared_ptr
// copy to every value read.
void append_value(std::string &buf, sqlite3_stmt *q, int i) {
  auto put = [&](const void *p, size_t n) { buf.append(static_cast<const char *>(p), n); };
  int type = sqlite3_column_type(q, i);
  uint8_t tag = static_cast<uint8_t>(type);
  put(&tag, 1);
  switch (type) {
  case SQLITE_INTEGER: {
    int64_t v = sqlite3_column_int64(q, i);
    put(&v, sizeof v);
    break;
  }
  case SQLITE_FLOAT: {
    double v = sqlite3_column_double(q, i);
    put(&v, sizeof v);
    break;
  }
  case SQLITE_TEXT:
  case SQLITE_BLOB: {
    const void *p = sqlite3_column_blob(q, i);
    int64_t n = sqlite3_column_bytes(q, i);
    put(&n, sizeof n);
    put(p, size_t(n));
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
std::string key_order(SQLite::Database &db, const std::string &table) {
  SQLite::Statement q(db, "SELECT name,pk FROM pragma_table_info(?) ORDER BY pk,cid");
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
int64_t hash_rows(SQLite::Database &conn, const std::string &sql, util::Sha256 &h) {
  sqlite3 *db = conn.getHandle();
  sqlite3_stmt *raw = nullptr;
  if (int rc = sqlite3_prepare_v2(db, sql.c_str(), -1, &raw, nullptr); rc != SQLITE_OK)
    throw SQLite::Exception(db, rc);
  std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt *)> q(raw, sqlite3_finalize);
  const int columns = sqlite3_column_count(raw);
  std::string buf;
  buf.reserve(kHashChunk + 4096);
  int64_t rows = 0;
  int rc;
  while ((rc = sqlite3_step(raw)) == SQLITE_ROW) {
    ++rows;
    for (int i = 0; i < columns; ++i) append_value(buf, raw, i);
    if (buf.size() >= kHashChunk) {
      h.update(buf);
      buf.clear();
    }
  }
  if (rc != SQLITE_DONE) throw SQLite::Exception(db, rc);
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
bool is_fts5(SQLite::Database &db, const std::string &table) {
  SQLite::Statement q(db, "SELECT sql FROM sqlite_schema WHERE name=?");
  q.bind(1, table);
  return q.executeStep() && q.getColumn(0).getString().find("USING fts5") != std::string::npos;
}

std::string fts5_checksum(SQLite::Database &db, const std::string &table, int64_t &rows) {
  std::string vocab = "temp.\"" + table + "_rebuild_vocab\"";
  db.exec("CREATE VIRTUAL TABLE IF NOT EXISTS " + vocab + " USING fts5vocab(main, \"" + table +
          "\", row)");
  util::Sha256 h;
  rows = hash_rows(db, "SELECT id,sz FROM \"" + table + "_docsize\" ORDER BY id", h);
  hash_rows(db, "SELECT term,doc,cnt FROM " + vocab, h);
  return util::to_hex(h.finish());
}

// Every column, except that one declared ZSTD_JSON_BLOB (schema 16) is
// read as the JSON it holds: the bytes of a frame depend on the zstd that
// wrote it, which a rebuild must not count as a change. A value that is
// not a frame reads as NULL, which no replayed row holds: hashed as it is,
// the JSON text of a frame left uncompressed would equal its replay.
std::string hashed_columns(SQLite::Database &db, const std::string &table) {
  SQLite::Statement q(db, "SELECT name,type FROM pragma_table_info(?) ORDER BY cid");
  q.bind(1, table);
  std::string columns;
  while (q.executeStep()) {
    std::string column = "\"" + q.getColumn(0).getString() + "\"";
    if (q.getColumn(1).getString() == "ZSTD_JSON_BLOB")
      column = "ctxdb_unzstd(" + column + ",NULL)";
    columns += (columns.empty() ? "" : ",") + column;
  }
  return columns;
}

std::string checksum(SQLite::Database &db, const std::string &table, int64_t &rows) {
  if (is_fts5(db, table)) return fts5_checksum(db, table, rows);
  // Table names come from the projections, never from input.
  util::Sha256 h;
  rows = hash_rows(db,
                   "SELECT " + hashed_columns(db, table) + " FROM " + table + " ORDER BY " +
                       key_order(db, table),
                   h);
  return util::to_hex(h.finish());
}

// The checksums of tables as the file's last commit holds them, which is
// what a rebuild starts from: it holds the write lock, so nobody can
// commit meanwhile. They are read on a connection of their own on a
// second thread, while the rebuild's connection clears and replays (the
// pass costs a tenth of a rebuild): that connection reads the last commit
// whatever the rebuild's transaction changes. So a table the transaction
// changed before it is cleared (the search index catching up) is not
// given here. A file no second connection can open (an in-memory
// database) is read here, first.
class BeforeChecksums {
public:
  BeforeChecksums(store::Store &store, std::vector<TableChecksum *> tables)
      : tables_(std::move(tables)) {
    if (!store.has_file()) {
      compute(store.db());
      return;
    }
    pass_ = std::async(std::launch::async, [this, &store] {
      // It waits for a lock as the handle's own connection does.
      SQLite::Database reader = store.open_reader();
      store::register_sql_functions(reader.getHandle());
      reader.exec("BEGIN"); // one read snapshot for every table; closing ends it
      compute(reader);
    });
  }
  // Waits for the pass, rethrowing what it threw.
  void wait() {
    if (pass_.valid()) pass_.get();
  }
  // A failed rebuild still waits for the pass: it writes into the report.
  ~BeforeChecksums() {
    if (pass_.valid()) pass_.wait();
  }
  BeforeChecksums(const BeforeChecksums &) = delete;
  BeforeChecksums &operator=(const BeforeChecksums &) = delete;

private:
  void compute(SQLite::Database &db) {
    int64_t rows = 0;
    for (TableChecksum *t : tables_) t->before = checksum(db, t->table, rows);
  }

  std::vector<TableChecksum *> tables_;
  std::future<void> pass_;
};

// A rebuild is one transaction that rewrites every derived table: with the
// handle's page cache, dirty pages spill to the WAL before the commit and
// are written twice. For the replay's length the cache is larger, then the
// handle's own again.
class ReplayCache {
public:
  explicit ReplayCache(SQLite::Database &db)
      : db_(db), saved_(db.execAndGet("PRAGMA cache_size").getInt()) {
    db_.exec("PRAGMA cache_size=-65536"); // KiB: 64 MiB
  }
  ~ReplayCache() {
    try {
      db_.exec("PRAGMA cache_size=" + std::to_string(saved_));
    } catch (...) {
      // Only a broken connection fails this; the error that matters is
      // the one the rebuild reports.
    }
  }
  ReplayCache(const ReplayCache &) = delete;
  ReplayCache &operator=(const ReplayCache &) = delete;

private:
  SQLite::Database &db_;
  int saved_;
};

} // namespace

std::string table_checksum(store::Store &store, const std::string &table, int64_t &rows) {
  return checksum(store.db(), table, rows);
}

namespace {

// Empties a derived table.
void clear(SQLite::Database &db, const std::string &table) {
  if (is_fts5(db, table))
    db.exec("INSERT INTO " + table + "(" + table + ") VALUES('delete-all')");
  else
    db.exec("DELETE FROM " + table);
}

// Replays the log through the tree and the projections alone: the log
// itself is not written.
void replay(log::EventLog &log, std::span<Projection *const> projections, RebuildReport &r) {
  log.scan_all([&](log::Event &e) {
    try {
      log.tree().place(e, e.session_no, 0);
      for (Projection *p : projections) p->on_append(e);
    } catch (const simdjson::simdjson_error &err) {
      // Every payload passed its type's schema when it was appended: one
      // that no longer reads as that type's was changed in the file.
      throw Error(Code::kCorrupt, "the payload of event '" + e.id + "' is damaged: it is not a " +
                                      e.type + "'s (" + err.what() + ")");
    }
    ++r.events;
  });
  log.tree().flush();
  for (Projection *p : projections) p->flush();
}

} // namespace

namespace {

// What a rebuild replays: the projections, and the report's tables (the
// tree's first) by where their "before" checksums are read. An index of
// the log is re-derived only when asked, and then its before_rebuild()
// may have changed its tables in the rebuild's transaction (events
// appended since the catch-up), so those are read there.
struct ReplayPlan {
  std::vector<Projection *> projections;
  std::vector<TableChecksum *> committed, changed_here;
};

ReplayPlan plan(std::span<Projection *const> projections, bool log_indexes, RebuildReport &r) {
  ReplayPlan plan;
  std::vector<bool> here; // per table of r.tables
  auto add = [&](const char *table, bool changed) {
    r.tables.emplace_back().table = table;
    here.push_back(changed);
  };
  for (const char *table : log::Tree::tables()) add(table, false);
  for (Projection *p : projections) {
    bool keep = p->indexes_log() && !log_indexes;
    for (const char *table : p->tables()) {
      if (keep)
        r.kept.emplace_back(table);
      else
        add(table, p->indexes_log());
    }
    if (!keep) plan.projections.push_back(p);
  }
  for (size_t i = 0; i < r.tables.size(); ++i)
    (here[i] ? plan.changed_here : plan.committed).push_back(&r.tables[i]);
  return plan;
}

// What the projections and the tree cache from a replay describes its
// transaction. Unless the rebuild ends committed or identical to the file,
// the transaction rolls back, and they must forget it: else a failure
// before the replay leaves the tool calls expecting a whole log, and a
// failed --check leaves its replayed states for the next append to fold
// onto, where the file holds others.
class ForgetUnlessKept {
public:
  ForgetUnlessKept(log::Tree &tree, std::span<Projection *const> projections)
      : tree_(tree), projections_(projections) {}
  ~ForgetUnlessKept() {
    if (kept_) return;
    tree_.discard();
    for (Projection *p : projections_) p->discard();
  }
  ForgetUnlessKept(const ForgetUnlessKept &) = delete;
  ForgetUnlessKept &operator=(const ForgetUnlessKept &) = delete;
  void keep() { kept_ = true; }

private:
  log::Tree &tree_;
  std::span<Projection *const> projections_;
  bool kept_ = false;
};

} // namespace

RebuildReport rebuild(store::Store &store, log::EventLog &log,
                      std::span<Projection *const> projections, const RebuildOptions &options) {
  {
    // The indexes of the log catch up in a transaction of their own: the
    // rebuild's may end in a rollback (below).
    store::Store::WriteTransaction catch_up(store);
    for (Projection *p : projections)
      if (p->indexes_log()) p->before_rebuild();
    catch_up.commit();
  }
  store::Store::WriteTransaction tx(store);
  ReplayCache cache(store.db());
  RebuildReport r;
  ReplayPlan replayed = plan(projections, options.log_indexes, r);
  ForgetUnlessKept forget(log.tree(), replayed.projections);
  for (Projection *p : replayed.projections) p->before_rebuild();
  for (TableChecksum *t : replayed.changed_here)
    t->before = checksum(store.db(), t->table, t->rows);
  BeforeChecksums before(store, std::move(replayed.committed));
  for (const TableChecksum &t : r.tables) clear(store.db(), t.table);
  replay(log, replayed.projections, r);
  for (TableChecksum &t : r.tables) t.after = checksum(store.db(), t.table, t.rows);
  before.wait();
  std::string differing;
  for (const TableChecksum &t : r.tables)
    if (t.after != t.before) differing += (differing.empty() ? "" : ", ") + t.table;
  r.identical = differing.empty();
  if (options.check && !r.identical)
    throw Error(Code::kCheckFailed, "rebuild --check: the replayed log gives other rows in " +
                                        differing + " (nothing was changed)");
  // Tables that came out row for row as they were need not be written: a
  // commit would rewrite every derived page (and checkpoint them) to
  // change nothing, so an identical rebuild rolls back. The projections'
  // caches hold what the replay left, which is what the file holds.
  if (!r.identical) tx.commit();
  forget.keep();
  return r;
}

} // namespace ctxdb::project
