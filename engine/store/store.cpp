#include "store/store.hpp"

#include "log/event.hpp"
#include "memory/bm25.hpp"
#include "memory/scope_rows.hpp"
#include "project/search_tokenizer.hpp"
#include "store/embedded_files.hpp"
#include "util/regex.hpp"
#include "util/zstd.hpp"
#include "json/json_schema.hpp"
#include "json/parse.hpp"

#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace ctxdb::store {

const EmbeddedFile *find_embedded(std::string_view path) {
  auto files = embedded_files();
  auto it = std::lower_bound(files.begin(), files.end(), path,
                             [](const EmbeddedFile &f, std::string_view p) { return f.path < p; });
  return it != files.end() && it->path == path ? &*it : nullptr;
}

namespace {

struct Migration {
  int number;
  std::string_view sql;
};

// The embedded sql/NNN_name.sql files, in number order.
const std::vector<Migration> &migrations() {
  static const std::vector<Migration> list = [] {
    std::vector<Migration> out;
    for (const auto &f : embedded_files()) {
      if (!f.path.starts_with("sql/")) continue;
      std::string_view name = f.path.substr(4);
      int n = 0;
      auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), n);
      if (ec != std::errc() || end == name.data() || *end != '_')
        throw Error(Code::kInternal,
                    "migration file name without a number: " + std::string(f.path));
      out.push_back({n, f.content});
    }
    std::sort(out.begin(), out.end(), [](auto &a, auto &b) { return a.number < b.number; });
    return out;
  }();
  return list;
}

bool exists(const std::string &path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

bool has_frames(const std::string &wal) {
  struct stat st;
  return stat(wal.c_str(), &st) == 0 && st.st_size > 0;
}

// Why this process cannot write `path`, or empty when it can.
std::string not_writable(const std::string &path, const char *what) {
  if (access(path.c_str(), W_OK) == 0) return "";
  if (errno == EROFS) return std::string(what) + " is on a read-only file system";
  return std::string(what) + " is not writable";
}

// The file as an SQLite URI: every byte outside the unreserved set escaped.
std::string file_uri(const std::string &path, const char *query) {
  std::string uri = "file:";
  for (unsigned char c : path) {
    if (std::isalnum(c) || c == '/' || c == '-' || c == '.' || c == '_' || c == '~') {
      uri += char(c);
    } else {
      static const char kHex[] = "0123456789ABCDEF";
      uri += {'%', kHex[c >> 4], kHex[c & 15]};
    }
  }
  return uri + query;
}

// What this process may do with a file and the directory holding it,
// where SQLite keeps the WAL and its -shm index: each problem empty when
// it may write there.
struct Storage {
  std::string dir_problem;
  std::string file_problem;
  bool wal_frames = false;   // a WAL holding commits not yet in the file
  bool wal_writable = false; // the WAL and -shm exist and can be written
  bool shm = false;
};

Storage storage_of(const std::string &path, const std::string &dir) {
  Storage s;
  s.dir_problem = not_writable(dir, ("its directory '" + dir + "'").c_str());
  s.file_problem = not_writable(path, "the file");
  std::string wal = path + "-wal", shm = path + "-shm";
  s.wal_frames = has_frames(wal);
  s.shm = exists(shm);
  s.wal_writable =
      exists(wal) && s.shm && access(wal.c_str(), W_OK) == 0 && access(shm.c_str(), W_OK) == 0;
  return s;
}

// Why a writable handle on this file can only read, or empty.
std::string read_only_reason(const Storage &s) {
  if (!s.file_problem.empty()) return s.file_problem;
  if (!s.dir_problem.empty() && !s.wal_writable)
    return s.dir_problem + " (SQLite keeps the WAL and its -shm index beside the file)";
  return "";
}

struct Opening {
  std::string target; // the path, or its URI
  bool uri = false;
};

// How a read-only handle reads the file. SQLite reads a WAL-mode file
// through the -shm index, which it cannot create in a directory it cannot
// write: there the file is opened immutable (no locks, no -shm), but only
// when no WAL holds commits and the file cannot be written, so that it
// cannot change while read.
Opening read_only_opening(const std::string &path, const Storage &s) {
  if (s.dir_problem.empty()) return {path};
  if (s.wal_frames) {
    if (s.shm) return {path}; // SQLite reads the WAL through it, even unwritable
    throw Error(Code::kReadOnly,
                "cannot open '" + path + "' read-only: its WAL ('" + path +
                    "-wal') holds commits not yet copied into the file, and SQLite cannot "
                    "create the -shm index it reads them through (" +
                    s.dir_problem +
                    "); open it once where its directory is writable, which copies the WAL "
                    "into the file");
  }
  if (s.file_problem.empty())
    throw Error(Code::kReadOnly,
                "cannot open '" + path +
                    "' read-only: SQLite cannot create the -shm index a WAL-mode file is read "
                    "through (" +
                    s.dir_problem +
                    "), and the file is writable, so it could change while read and is not "
                    "opened as unchanging; make its directory writable, or the file read-only");
  return {file_uri(path, "?immutable=1"), true};
}

// What opening `path` does on its storage. A writable handle on a file
// that cannot be written there opens read-only instead, and `reason` says
// why (its writes fail with kReadOnly naming it).
Opening plan_open(const std::string &path, Config &config, std::string &reason) {
  if (!names_file(path)) return {path};
  std::string dir = std::filesystem::path(path).parent_path().string();
  if (dir.empty()) dir = ".";
  if (!exists(path)) {
    if (config.read_only)
      throw Error(Code::kIo, "cannot open '" + path + "' read-only: there is no such file");
    if (!exists(dir))
      throw Error(Code::kIo,
                  "cannot create '" + path + "': its directory '" + dir + "' does not exist");
    std::string dir_problem = not_writable(dir, ("its directory '" + dir + "'").c_str());
    if (!dir_problem.empty())
      throw Error(Code::kReadOnly, "cannot create '" + path + "': " + dir_problem);
    return {path};
  }
  Storage storage = storage_of(path, dir);
  if (!config.read_only) {
    reason = read_only_reason(storage);
    if (reason.empty()) return {path};
    config.read_only = true;
  }
  return read_only_opening(path, storage);
}

SQLite::Database open_database(const std::string &path, Config &config, std::string &reason) {
  Opening opening = plan_open(path, config, reason);
  // NOMUTEX: the ctxdb handle already serializes every call on this
  // connection, so SQLite's own per-call mutex would only add cost.
  int flags =
      SQLite::OPEN_NOMUTEX | (opening.uri ? SQLite::OPEN_URI : 0) |
      (config.read_only ? SQLite::OPEN_READONLY : SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
  try {
    return SQLite::Database(opening.target.c_str(), flags, config.busy_timeout_ms,
                            config.vfs_name());
  } catch (const SQLite::Exception &e) {
    Error err = to_error(e);
    throw Error(err.code(), "cannot open '" + path + "': " + e.what());
  }
}

// ctxdb_scope_first_row(scope_key): memory::scope_first_row, for the
// migration that moved every memory into its scope's rowid range (009).
void scope_first_row_sql(sqlite3_context *ctx, int, sqlite3_value **argv) {
  const auto *text = reinterpret_cast<const char *>(sqlite3_value_text(argv[0]));
  std::string_view key(text ? text : "", size_t(sqlite3_value_bytes(argv[0])));
  sqlite3_result_int64(ctx, memory::scope_first_row(key));
}

// ctxdb_zstd(value) and ctxdb_unzstd(frame): the stored form of state
// snapshots (project/state.hpp), for the migration that compressed them
// (016), rebuild's checksums of them, and anyone reading them with SQL on
// a ctxdb connection. NULL stays NULL; a frame that does not decompress is an SQL
// error naming it. Each connection has its own contexts (a connection is
// used by one thread at a time).
struct ZstdFunctions {
  util::ZstdCompressor pack;
  util::ZstdDecompressor unpack;
};

std::string_view value_bytes(sqlite3_value *v) {
  const void *p = sqlite3_value_blob(v);
  return {static_cast<const char *>(p), size_t(sqlite3_value_bytes(v))};
}

void zstd_sql(sqlite3_context *ctx, int, sqlite3_value **argv) {
  if (sqlite3_value_type(argv[0]) == SQLITE_NULL) return; // NULL result
  auto *f = static_cast<ZstdFunctions *>(sqlite3_user_data(ctx));
  try {
    std::string_view frame = f->pack.compress(value_bytes(argv[0]));
    sqlite3_result_blob64(ctx, frame.data(), frame.size(), SQLITE_TRANSIENT);
  } catch (const std::exception &e) {
    sqlite3_result_error(ctx, e.what(), -1);
  }
}

// ctxdb_unzstd(frame, otherwise): `otherwise` when frame does not
// decompress (a checksum must hash what a damaged row holds, not fail).
void unzstd_sql(sqlite3_context *ctx, int argc, sqlite3_value **argv) {
  if (sqlite3_value_type(argv[0]) == SQLITE_NULL) return;
  auto *f = static_cast<ZstdFunctions *>(sqlite3_user_data(ctx));
  try {
    std::string raw = f->unpack.decompress(value_bytes(argv[0]), "ctxdb_unzstd's argument");
    sqlite3_result_text64(ctx, raw.data(), raw.size(), SQLITE_TRANSIENT, SQLITE_UTF8);
  } catch (const Error &e) {
    if (argc == 2)
      sqlite3_result_value(ctx, argv[1]);
    else
      sqlite3_result_error(ctx, e.what(), -1);
  } catch (const std::exception &e) {
    sqlite3_result_error(ctx, e.what(), -1);
  }
}

// ctxdb_sensitive(visibility): log::is_sensitive of an event's stored
// visibility (NULL: none), for session search's filter. Each connection
// has its own parser.
void sensitive_sql(sqlite3_context *ctx, int, sqlite3_value **argv) {
  if (sqlite3_value_type(argv[0]) == SQLITE_NULL) {
    sqlite3_result_int(ctx, 0);
    return;
  }
  auto *parser = static_cast<simdjson::dom::parser *>(sqlite3_user_data(ctx));
  try {
    sqlite3_result_int(ctx, log::is_sensitive(*parser, value_bytes(argv[0])) ? 1 : 0);
  } catch (const std::exception &e) {
    sqlite3_result_error(ctx, e.what(), -1);
  }
}

void register_sensitive(sqlite3 *db) {
  sqlite3_create_function_v2(db, "ctxdb_sensitive", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC,
                             new simdjson::dom::parser, sensitive_sql, nullptr, nullptr,
                             [](void *p) { delete static_cast<simdjson::dom::parser *>(p); });
}

// ctxdb_contains(text, needle): whether text holds needle, matched
// without regard to case by Unicode's simple case folding (lower() folds
// ASCII only, so "ÄRGER" would miss "ärger", which the FTS5 tables find).
// The needle is prepared once per statement (its auxiliary data): search
// binds it as a parameter.
void contains_sql(sqlite3_context *ctx, int, sqlite3_value **argv) {
  if (sqlite3_value_type(argv[0]) == SQLITE_NULL || sqlite3_value_type(argv[1]) == SQLITE_NULL)
    return;
  try {
    auto *needle = static_cast<util::CaselessFinder *>(sqlite3_get_auxdata(ctx, 1));
    if (!needle) {
      sqlite3_set_auxdata(ctx, 1, new util::CaselessFinder(value_bytes(argv[1])),
                          [](void *p) { delete static_cast<util::CaselessFinder *>(p); });
      // SQLite may have freed it at once (out of memory): look it up again.
      needle = static_cast<util::CaselessFinder *>(sqlite3_get_auxdata(ctx, 1));
      if (!needle) {
        sqlite3_result_error_nomem(ctx);
        return;
      }
    }
    size_t start = 0, end = 0;
    sqlite3_result_int(ctx, needle->find(value_bytes(argv[0]), start, end) ? 1 : 0);
  } catch (const std::exception &e) {
    sqlite3_result_error(ctx, e.what(), -1);
  }
}

void register_zstd(sqlite3 *db) {
  auto *f = new ZstdFunctions;
  auto destroy = [](void *p) { delete static_cast<ZstdFunctions *>(p); };
  // The first registration owns f: SQLite calls destroy when the
  // connection closes (or at once, if registering fails).
  if (sqlite3_create_function_v2(db, "ctxdb_zstd", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, f,
                                 zstd_sql, nullptr, nullptr, destroy) != SQLITE_OK)
    return; // f is gone; the migration's use of it fails with a clear SQL error
  for (int args : {1, 2})
    sqlite3_create_function_v2(db, "ctxdb_unzstd", args, SQLITE_UTF8 | SQLITE_DETERMINISTIC, f,
                               unzstd_sql, nullptr, nullptr, nullptr);
}

} // namespace

void register_sql_functions(sqlite3 *db) {
  sqlite3_create_function(db, "ctxdb_scope_first_row", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC,
                          nullptr, scope_first_row_sql, nullptr, nullptr);
  memory::register_bm25(db);
  register_zstd(db);
  register_sensitive(db);
  project::register_search_tokenizer(db);
  sqlite3_create_function(db, "ctxdb_contains", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nullptr,
                          contains_sql, nullptr, nullptr);
}

namespace {

int pragma_int(SQLite::Database &db, const char *sql) { return db.execAndGet(sql).getInt(); }

} // namespace

int schema_version() { return migrations().empty() ? 0 : migrations().back().number; }

const json::Schema &embedded_schema(std::string_view path) {
  static std::mutex mu;
  static std::map<std::string, json::Schema, std::less<>> cache;
  std::lock_guard lock(mu);
  if (auto it = cache.find(path); it != cache.end()) return it->second;
  const EmbeddedFile *f = find_embedded(path);
  if (!f) throw Error(Code::kInternal, "no embedded schema " + std::string(path));
  // std::map never moves its nodes: the reference stays valid.
  return cache.emplace(std::string(path), json::Schema::parse(f->content, path)).first->second;
}

Config parse_config(std::string_view text) {
  Config config;
  if (text.empty()) return config;
  const json::Schema &schema = embedded_schema("json/config.schema.json");
  simdjson::dom::parser parser;
  simdjson::dom::element doc = json::parse(parser, text, "config");
  try {
    schema.validate(doc, "");
  } catch (const Error &e) {
    throw Error(e.code(), std::string("config: ") + e.what());
  }
  std::string_view durability;
  if (!doc["durability"].get(durability))
    config.durability = durability == "full" ? Durability::kFull : Durability::kNormal;
  int64_t timeout = 0;
  if (!doc["busy_timeout_ms"].get(timeout)) config.busy_timeout_ms = int(timeout);
  bool read_only = false;
  if (!doc["read_only"].get(read_only)) config.read_only = read_only;
  bool mmap = true;
  if (!doc["mmap"].get(mmap)) config.mmap = mmap;
  int64_t lag = 0;
  if (!doc["search_index_lag"].get(lag)) config.search_index_lag = lag;
  // By default the checkpoint runs on a thread of its own only with
  // durability normal: with full, every commit fsyncs the WAL, and a
  // checkpoint syncing the database file beside it made those commits
  // wait for its writeback (bench_append, single appends with full:
  // ~1,350/s against ~2,650/s inline).
  config.background_checkpoint = config.durability == Durability::kNormal;
  std::string_view checkpoint;
  if (!doc["checkpoint"].get(checkpoint)) config.background_checkpoint = checkpoint == "background";
  std::string_view vfs;
  if (!doc["vfs"].get(vfs)) {
    config.vfs = std::string(vfs);
    if (!sqlite3_vfs_find(config.vfs.c_str()))
      throw Error(Code::kInvalidArg, "config: vfs '" + config.vfs +
                                         "' is not a registered SQLite VFS (sqlite3_vfs_register)");
  }
  return config;
}

void bind_text(SQLite::Statement &q, int index, std::string_view text) {
  q.bind(index, std::string(text)); // copied: SQLiteCpp has no view overload
}

Error to_error(const SQLite::Exception &e) {
  Code code = Code::kInternal;
  switch (e.getErrorCode()) {
  case SQLITE_BUSY:
  case SQLITE_LOCKED: code = Code::kBusy; break;
  case SQLITE_READONLY: code = Code::kReadOnly; break;
  case SQLITE_CORRUPT: code = Code::kCorrupt; break;
  case SQLITE_NOTADB: code = Code::kNotADb; break;
  case SQLITE_NOMEM: code = Code::kNoMem; break;
  case SQLITE_IOERR:
  case SQLITE_CANTOPEN:
  case SQLITE_FULL:
  case SQLITE_PERM:
  case SQLITE_AUTH: code = Code::kIo; break;
  case SQLITE_CONSTRAINT: code = Code::kConflict; break;
  default: break;
  }
  return Error(code, std::string("sqlite: ") + e.what());
}

bool names_file(std::string_view path) {
  return !path.empty() && path != ":memory:" && !path.starts_with("file:");
}

Store::Store(const std::string &path, const Config &config)
    : path_(path), config_(config), db_(open_database(path, config_, read_only_reason_)) {
  register_sql_functions(db_.getHandle());
  // Several processes may open (and create) the same file at once. Some of
  // SQLite's lock conflicts here return SQLITE_BUSY without waiting (a
  // reader upgrading to writer, a journal-mode change), so the whole
  // sequence is retried until the busy timeout runs out.
  auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(config_.busy_timeout_ms);
  for (;;) {
    try {
      prepare_file();
      break;
    } catch (const SQLite::Exception &e) {
      Error err = to_error(e);
      if (err.code() != Code::kBusy || std::chrono::steady_clock::now() >= deadline) throw err;
    } catch (const Error &e) {
      if (e.code() != Code::kBusy || std::chrono::steady_clock::now() >= deadline) throw;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  if (!config_.read_only && config_.background_checkpoint)
    checkpointer_ = Checkpointer::start(db_.getHandle(), path_);
}

void Store::prepare_file() {
  check_identity();
  if (!config_.read_only) {
    db_.execAndGet("PRAGMA journal_mode=WAL");
    db_.exec(config_.durability == Durability::kFull ? "PRAGMA synchronous=FULL"
                                                     : "PRAGMA synchronous=NORMAL");
  }
  // A 16 MiB page cache (SQLite's default is 2 MiB) keeps what was just
  // written at hand for the reads that follow it: a compile right after
  // appends ran 2.3-2.8 ms at 2 MiB against 1.6-2.2 ms (bench_compile),
  // its pages still in the WAL. Appends in short runs pay for it (fresh
  // page buffers instead of reused ones: ~13%, bench_append's header).
  db_.exec("PRAGMA cache_size=" + std::to_string(kCacheSizePragma));
  // Reads map the file instead of copying its pages through read(): a
  // memory retrieval looks up a few hundred rows scattered over the
  // memory_rank, memory_versions and index b-trees, which at a million
  // memories far outgrow the page cache, and a copied page costs a system
  // call (bench_memory: 1M memories, about half the latency). 2 GiB less
  // 64 KiB is SQLite's default ceiling; beyond it, pages are read as before.
  // The price is SQLite's: an I/O error while reading the map is SIGBUS,
  // not an error code, so config "mmap": false turns it off.
  if (config_.mmap) db_.exec("PRAGMA mmap_size=" + std::to_string(kMmapSizePragma));
  // Freed space is zeroed in every transaction, not only in a purge's: a
  // purge must leave no byte of a memory in the file, and copies of it
  // were freed before it (a superseded version's rows, index segments
  // merged since), which nothing can find afterwards. SQLite's default is
  // off; Debian's build turns it on, so ctxdb always did this there, until
  // a purge turned it off for the rest of the handle's life.
  db_.exec("PRAGMA secure_delete=ON");
  // The WAL is checkpointed at SQLite's default of 1000 pages (4 MiB). A
  // larger WAL copies a page rewritten by many commits fewer times, but
  // every frame then lands in a fresh part of the file (page-cache and
  // block allocation), and the closing checkpoint must free it all; a
  // small one is overwritten in place. bench_append, close timed: 8000
  // pages was 5-10% slower than 1000 in every scenario (and 500 no faster).
  // It runs on a thread of its own (store/checkpointer.hpp), which the
  // constructor starts once the file is ready.
  migrate();
}

// Reads the header without writing, so that a file that is not ours is
// left exactly as it was.
void Store::check_identity() {
  int app = 0, version = 0, objects = 0;
  try {
    // One statement, so one snapshot: another process may be creating the
    // schema right now, and three reads could see half of its work.
    SQLite::Statement q(db_, "SELECT (SELECT application_id FROM pragma_application_id),"
                             "(SELECT user_version FROM pragma_user_version),"
                             "(SELECT count(*) FROM sqlite_master)");
    q.executeStep();
    app = q.getColumn(0).getInt();
    version = q.getColumn(1).getInt();
    objects = q.getColumn(2).getInt();
  } catch (const SQLite::Exception &e) {
    if (e.getErrorCode() == SQLITE_NOTADB)
      throw Error(Code::kNotADb, "'" + path_ + "' is not a ctxdb database (not an SQLite file)");
    throw;
  }
  if (app == kApplicationId) {
    if (version > schema_version())
      throw Error(Code::kSchema, "'" + path_ + "' has schema version " + std::to_string(version) +
                                     ", newer than this ctxdb supports (" +
                                     std::to_string(schema_version()) + "); upgrade ctxdb");
    return;
  }
  if (app != 0 || objects != 0 || version != 0)
    throw Error(Code::kNotADb, "'" + path_ +
                                   "' is an SQLite database but not a ctxdb "
                                   "one (application_id " +
                                   std::to_string(app) + ")");
}

void Store::migrate() {
  int target = schema_version();
  if (pragma_int(db_, "PRAGMA user_version") >= target) return;
  if (config_.read_only)
    throw Error(Code::kReadOnly, "'" + path_ +
                                     "' needs its schema created or "
                                     "upgraded; open it writable once");
  WriteTransaction tx(*this);
  // Another process may have migrated between our check and our lock.
  int version = pragma_int(db_, "PRAGMA user_version");
  for (const auto &m : migrations()) {
    if (m.number <= version) continue;
    db_.exec(std::string(m.sql));
  }
  db_.exec("PRAGMA application_id = " + std::to_string(kApplicationId));
  db_.exec("PRAGMA user_version = " + std::to_string(target));
  tx.commit();
}

SQLite::Database Store::open_reader() const {
  return SQLite::Database(path_.c_str(), SQLite::OPEN_READONLY | SQLite::OPEN_NOMUTEX,
                          config_.busy_timeout_ms, config_.vfs_name());
}

bool Store::truncate_wal() {
  if (checkpointer_) return checkpointer_->truncate_wal() == SQLITE_OK;
  return sqlite3_wal_checkpoint_v2(db_.getHandle(), "main", SQLITE_CHECKPOINT_TRUNCATE, nullptr,
                                   nullptr) == SQLITE_OK;
}

Store::Stmt Store::statement(const char *sql) {
  auto &slot = cache_[sql];
  if (!slot) {
    slot = std::make_unique<SQLite::Statement>(db_, sql);
  } else {
    slot->tryReset();
    slot->clearBindings();
  }
  return Stmt(*slot);
}

Store::RawStmt::~RawStmt() {
  sqlite3_reset(s_);
  sqlite3_clear_bindings(s_);
}

Store::RawStmt Store::raw_statement(const char *sql) {
  auto it = raw_cache_.find(sql);
  if (it == raw_cache_.end()) {
    sqlite3_stmt *s = nullptr;
    if (int rc = sqlite3_prepare_v2(db_.getHandle(), sql, -1, &s, nullptr); rc != SQLITE_OK)
      throw SQLite::Exception(db_.getHandle(), rc);
    it = raw_cache_
             .emplace(sql,
                      std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt *)>(s, sqlite3_finalize))
             .first;
  }
  return RawStmt(it->second.get());
}

void Store::require_writable() const {
  if (!config_.read_only) return;
  if (!read_only_reason_.empty())
    throw Error(Code::kReadOnly,
                "the database '" + path_ + "' was opened read-only: " + read_only_reason_);
  throw Error(Code::kReadOnly, "the database '" + path_ + "' was opened read-only");
}

// BEGIN and COMMIT run as cached statements: sqlite3_exec would parse them
// again for every transaction (~1% of the instructions of appends in
// batches of 10, callgrind).
Store::WriteTransaction::WriteTransaction(Store &store) : store_(store) {
  store_.require_writable();
  store_.statement("BEGIN IMMEDIATE")->exec();
}

Store::WriteTransaction::~WriteTransaction() {
  if (done_) return;
  try {
    store_.db_.exec("ROLLBACK");
  } catch (...) {
    // The transaction is already gone (SQLite rolled it back itself).
  }
}

void Store::WriteTransaction::commit() {
  store_.statement("COMMIT")->exec();
  done_ = true;
}

Store::ReadTransaction::ReadTransaction(Store &store) : store_(store) { store_.db_.exec("BEGIN"); }

Store::ReadTransaction::~ReadTransaction() {
  try {
    store_.db_.exec("COMMIT");
  } catch (...) {
    // Nothing was written; a failing COMMIT of a read leaves nothing behind.
  }
}

} // namespace ctxdb::store
