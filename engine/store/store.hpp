// store.hpp — the database file: opening, configuration, migrations,
// transactions and the per-connection cache of prepared statements.
#pragma once

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Exception.h>
#include <SQLiteCpp/Statement.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "error.hpp"
#include "store/checkpointer.hpp"
#include "json/json_schema.hpp"

struct sqlite3;

namespace ctxdb::store {

enum class Durability { kNormal, kFull };

struct Config {
  Durability durability = Durability::kNormal;
  int busy_timeout_ms = 5000;
  bool read_only = false;
  bool mmap = true; // read the file through a memory map (store.cpp)
  // Checkpoint the WAL on a thread of its own (store/checkpointer.hpp)
  // rather than inside the commit that fills it: config "checkpoint";
  // by default with durability normal only (parse_config says why).
  bool background_checkpoint = true;
  // How many events the session-search index may fall behind before a
  // commit brings it up to date (project/search_index.hpp).
  int64_t search_index_lag = 10000;
  // The registered SQLite VFS every connection opens the file through
  // (config "vfs"; empty: SQLite's default): encryption, custom storage,
  // fault injection.
  std::string vfs;
  const char *vfs_name() const { return vfs.empty() ? nullptr : vfs.c_str(); }
};

// The JSON Schema embedded at schema/<path>, parsed once per process.
const json::Schema &embedded_schema(std::string_view path);

// Parses and validates ctxdb_open's config JSON (schema/json/config.schema.json).
Config parse_config(std::string_view json);

// The schema version this library writes: the highest migration number.
int schema_version();

// The page cache and memory map every connection sets (store.cpp says why),
// as PRAGMA values: cache_size in KiB (negative), mmap_size in bytes.
// bench/append gives its raw-SQLite baseline the same, so that its ratio
// measures the engine's work rather than a difference of settings.
inline constexpr int kCacheSizePragma = -16384;
inline constexpr int64_t kMmapSizePragma = 2147418112;

// ctxdb files carry this SQLite application_id ("ctxd").
inline constexpr int32_t kApplicationId = 0x63747864;

// Binds a string view as TEXT. (SQLiteCpp binds a (pointer, length) pair
// only as a BLOB, and a BLOB never equals a TEXT key.)
void bind_text(SQLite::Statement &q, int index, std::string_view text);

// Binds a value that may be absent; absent leaves the parameter NULL, as
// every parameter is in a statement from Store::statement(). A string is
// bound without a copy, so it must outlive the statement's step.
inline void bind_optional(SQLite::Statement &q, int index, const std::optional<std::string> &v) {
  if (v) q.bindNoCopy(index, *v);
}
inline void bind_optional(SQLite::Statement &q, int index, const std::optional<int64_t> &v) {
  if (v) q.bind(index, *v);
}

// Registers the engine's SQL functions (ctxdb_zstd, ctxdb_unzstd, bm25's
// and the migrations') on a connection: every connection of the Store has
// them; another that reads what they read (rebuild's second reader) needs them.
void register_sql_functions(sqlite3 *db);

// Whether a path names a file (not an in-memory database or a URI).
bool names_file(std::string_view path);

// Maps an SQLite failure to the engine's error.
Error to_error(const SQLite::Exception &e);

class Store {
public:
  Store(const std::string &path, const Config &config);

  SQLite::Database &db() { return db_; }
  // config().read_only: the handle was opened read-only, by the config or
  // because its storage cannot be written (store.cpp, plan_open).
  const Config &config() const { return config_; }
  const std::string &path() const { return path_; }
  // Whether path() names a file a second connection can open (not an
  // in-memory database or a URI).
  bool has_file() const { return names_file(path_); }

  // A cached prepared statement for `sql` with its bindings cleared; it is
  // reset when the returned Stmt goes out of scope, so no statement keeps a
  // read snapshot open between calls. `sql` must have static storage: its
  // address is the cache key.
  class Stmt {
  public:
    explicit Stmt(SQLite::Statement &s) : s_(&s) {}
    ~Stmt() { s_->tryReset(); }
    Stmt(const Stmt &) = delete;
    Stmt &operator=(const Stmt &) = delete;
    SQLite::Statement *operator->() { return s_; }
    SQLite::Statement &operator*() { return *s_; }

  private:
    SQLite::Statement *s_;
  };
  Stmt statement(const char *sql);

  // The same for a statement used through SQLite's C API, for what
  // SQLiteCpp cannot bind (a pointer: sqlite3_bind_pointer); reset and its
  // bindings cleared when the returned RawStmt goes out of scope.
  class RawStmt {
  public:
    explicit RawStmt(sqlite3_stmt *s) : s_(s) {}
    ~RawStmt();
    RawStmt(const RawStmt &) = delete;
    RawStmt &operator=(const RawStmt &) = delete;
    sqlite3_stmt *get() const { return s_; }

  private:
    sqlite3_stmt *s_;
  };
  RawStmt raw_statement(const char *sql);

  // A read-only connection of its own to the file, through the handle's
  // VFS, waiting for locks as long as the handle's: for a thread that
  // reads beside the handle's connection (a rebuild's). Requires has_file().
  SQLite::Database open_reader() const;

  // The background checkpointer, or nullptr (read-only, config
  // "checkpoint": "inline", or its connection could not be opened).
  const Checkpointer *checkpointer() const { return checkpointer_.get(); }

  // Checkpoints the WAL into the file and truncates it, taking turns with
  // the background checkpointer; false when a reader of an older snapshot
  // kept it from completing (a later checkpoint resets the WAL, at the
  // latest the last close).
  bool truncate_wal();

  // Throws kReadOnly when the handle was opened read-only.
  void require_writable() const;

  // BEGIN IMMEDIATE … COMMIT; rolls back unless commit() is reached, so a
  // failed call leaves the file as it was.
  class WriteTransaction {
  public:
    explicit WriteTransaction(Store &store);
    ~WriteTransaction();
    void commit();
    WriteTransaction(const WriteTransaction &) = delete;
    WriteTransaction &operator=(const WriteTransaction &) = delete;

  private:
    Store &store_;
    bool done_ = false;
  };

  // BEGIN (deferred) … COMMIT for reads that need one consistent snapshot.
  class ReadTransaction {
  public:
    explicit ReadTransaction(Store &store);
    ~ReadTransaction();
    ReadTransaction(const ReadTransaction &) = delete;
    ReadTransaction &operator=(const ReadTransaction &) = delete;

  private:
    Store &store_;
  };

private:
  void prepare_file();
  void check_identity();
  void migrate();

  std::string path_;
  Config config_;                // read_only also when the file could not be opened writable
  std::string read_only_reason_; // why, then
  SQLite::Database db_;
  std::unordered_map<const char *, std::unique_ptr<SQLite::Statement>> cache_;
  std::unordered_map<const char *, std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt *)>>
      raw_cache_;
  // Last, so that it stops before the connection closes.
  std::unique_ptr<Checkpointer> checkpointer_;
};

} // namespace ctxdb::store
