#include "store/checkpointer.hpp"

#include <sqlite3.h>

namespace ctxdb::store {

namespace {

// The writer's PRAGMA synchronous (0-3), or -1 when it cannot be read.
int synchronous_of(sqlite3 *db) {
  sqlite3_stmt *q = nullptr;
  int level = -1;
  if (sqlite3_prepare_v2(db, "PRAGMA synchronous", -1, &q, nullptr) == SQLITE_OK &&
      sqlite3_step(q) == SQLITE_ROW)
    level = sqlite3_column_int(q, 0);
  sqlite3_finalize(q);
  return level;
}

// The VFS the writer opened its file through, or nullptr (SQLite's
// default): the checkpointer's connection must read and write the same
// storage the same way (an encrypting VFS, a test's fault injection).
const char *vfs_of(sqlite3 *db) {
  sqlite3_vfs *vfs = nullptr;
  if (sqlite3_file_control(db, "main", SQLITE_FCNTL_VFS_POINTER, &vfs) != SQLITE_OK || !vfs)
    return nullptr;
  return vfs->zName;
}

} // namespace

std::unique_ptr<Checkpointer> Checkpointer::start(sqlite3 *writer, const std::string &path) {
  int level = synchronous_of(writer);
  if (level < 0) return nullptr;
  // NOMUTEX: only the thread uses this connection once it is handed over.
  sqlite3 *own = nullptr;
  int rc = sqlite3_open_v2(path.c_str(), &own, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX,
                           vfs_of(writer));
  std::string pragma = "PRAGMA synchronous=" + std::to_string(level);
  if (rc == SQLITE_OK) rc = sqlite3_exec(own, pragma.c_str(), nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) {
    sqlite3_close(own);
    return nullptr;
  }
  return std::unique_ptr<Checkpointer>(new Checkpointer(writer, own));
}

Checkpointer::Checkpointer(sqlite3 *writer, sqlite3 *own) : writer_(writer), own_(own) {
  thread_ = std::thread([this] { run(); });
  sqlite3_wal_hook(writer_, &Checkpointer::on_commit, this);
}

Checkpointer::~Checkpointer() {
  sqlite3_wal_autocheckpoint(writer_, kFrames); // SQLite's own hook again
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
  sqlite3_close(own_);
}

int Checkpointer::truncate_wal() {
  std::lock_guard<std::mutex> turn(turn_);
  return sqlite3_wal_checkpoint_v2(writer_, "main", SQLITE_CHECKPOINT_TRUNCATE, nullptr, nullptr);
}

int64_t Checkpointer::passes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return passes_;
}

// Runs on the writer's thread, after each commit, with the frames now in
// the WAL. Errors are not the commit's: a checkpoint that cannot run now
// runs at a later commit (or at the last close).
int Checkpointer::on_commit(void *self, sqlite3 *db, const char *schema, int frames) {
  auto *c = static_cast<Checkpointer *>(self);
  if (frames >= kInlineFrames) {
    sqlite3_wal_checkpoint_v2(db, schema, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
  } else if (frames >= kFrames) {
    {
      std::lock_guard<std::mutex> lock(c->mutex_);
      c->wanted_ = true;
    }
    c->wake_.notify_one();
  }
  return SQLITE_OK;
}

void Checkpointer::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_.wait(lock, [this] { return wanted_ || stopping_; });
    if (stopping_) return;
    wanted_ = false;
    lock.unlock();
    // SQLITE_BUSY (another connection is checkpointing) and I/O errors
    // leave the frames for the next pass; the writer never sees them.
    {
      std::lock_guard<std::mutex> turn(turn_);
      sqlite3_wal_checkpoint_v2(own_, "main", SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
    }
    lock.lock();
    ++passes_;
  }
}

} // namespace ctxdb::store
