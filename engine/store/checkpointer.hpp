// checkpointer.hpp — checkpointing the WAL on a thread of its own.
//
// SQLite checkpoints a WAL file in the connection whose commit pushed it
// past 1000 pages, inside that commit's call: the caller waits while the
// pages are copied into the database file and both files are synced
// (synchronous NORMAL and FULL sync at every checkpoint). Those two
// fsyncs, more than the copying, are what a batched append waits for:
// bench_append on the 2-core VM spent ~3.4 ms in each fdatasync, 14 of
// them per 6,000 events, a third of a round (raw SQLite's and ctxdb's
// alike). With the checkpoint on this thread, batches of 100 ran ~45%
// faster.
//
// A Checkpointer takes that work off the writer, as SQLite's WAL
// documentation suggests ("run checkpoints ... in a separate thread"): it
// installs itself as the writer's WAL hook in place of the automatic
// checkpoint, and when a commit leaves kFrames frames or more in the WAL
// it wakes a thread that runs a PASSIVE checkpoint on a connection of its
// own. A passive checkpoint waits for no one: it copies what no reader
// still needs and leaves the rest for the next one, like the automatic
// checkpoint it replaces. Durability is unchanged: a commit is durable by
// the WAL alone (its sync at commit with "full"); the checkpoint only
// moves pages that are already safe.
//
// The WAL starts over from its beginning (overwritten in place, not grown)
// when a write begins after a checkpoint copied all of it. A writer that
// commits again before the thread finishes keeps it growing; a commit
// that finds kInlineFrames frames or more checkpoints in the writer's own
// call, as SQLite would have, so the WAL stays bounded whatever the
// thread manages.
//
// With durability full the Store keeps the checkpoint inline
// (store.cpp's parse_config says why).
//
// The writer's connection must outlive the Checkpointer; destroying it
// stops the thread and puts SQLite's automatic checkpoint back.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

struct sqlite3;

namespace ctxdb::store {

class Checkpointer {
public:
  // SQLite's default automatic checkpoint size, in pages.
  static constexpr int kFrames = 1000;
  // Where the writer's own commit checkpoints instead (8000 pages of
  // 4 KiB: 32 MiB).
  static constexpr int kInlineFrames = 8 * kFrames;

  // Starts checkpointing the WAL of `writer`, a connection to `path` in WAL
  // mode; the checkpoint's connection copies its PRAGMA synchronous.
  // nullptr when the second connection cannot be opened: the writer keeps
  // SQLite's automatic checkpoint.
  static std::unique_ptr<Checkpointer> start(sqlite3 *writer, const std::string &path);
  ~Checkpointer();
  Checkpointer(const Checkpointer &) = delete;
  Checkpointer &operator=(const Checkpointer &) = delete;

  // Checkpoints the WAL on the writer's connection and truncates it (a
  // purge's last step: no page image from before it may stay in the
  // file), after the thread's pass if one is running: SQLite answers a
  // second checkpointer SQLITE_BUSY at once, without waiting, and a
  // commit wakes the thread just before its caller would truncate. Still
  // SQLITE_BUSY when another connection reads an older snapshot. Call it
  // on the writer's thread.
  int truncate_wal();

  // Checkpoints the thread has run so far (for tests).
  int64_t passes() const;

private:
  Checkpointer(sqlite3 *writer, sqlite3 *own);
  static int on_commit(void *self, sqlite3 *db, const char *schema, int frames);
  void run();

  sqlite3 *writer_;
  sqlite3 *own_;    // used by the thread alone
  std::mutex turn_; // held through a checkpoint, by the thread or truncate_wal()
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool wanted_ = false;
  bool stopping_ = false;
  int64_t passes_ = 0;
  std::thread thread_;
};

} // namespace ctxdb::store
