// fault_vfs.hpp — an SQLite VFS that fails the Nth read, write or sync, or
// cuts the power there, for testing what the engine does about it (after
// SQLite's own test_devsym.c, test_vfs.c and crash tests).
//
// FaultVfs wraps SQLite's default VFS ("unix") under the name kName; a
// database opened with config {"vfs": "ctxdb-faults"} does all its I/O
// through it. It counts the reads, writes (xTruncate counts as a write)
// and syncs of every file from arm() on, and can
// - fail the Nth operation of a kind, or the Nth of all (Op::kAny), once,
//   with the code given (SQLITE_IOERR_WRITE, SQLITE_FULL, ...);
// - cut the power at the Nth operation: that operation and every one after
//   it fail, as on a machine that is off, until reboot(). For that it keeps,
//   per file, the pre-image of every region written since the file's last
//   xSync, and the size the file had then; reboot() (with every handle
//   closed) writes the pre-images back and truncates to that size, so the
//   files hold what the syncs made durable and nothing more. The -shm
//   files go too: the WAL index is shared memory, which a reboot clears.
//   So a sync is the VFS's own bookkeeping and never reaches the disk (nor
//   does a deletion's directory sync): the tests need no real fsync, and
//   would spend most of their time waiting for them.
//
// Files are never memory-mapped through it (its io methods are version 2,
// without xFetch), so every read of a page is an xRead it can count and
// fail. It is safe to use from several threads (the checkpointer's).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

struct sqlite3_vfs;

namespace ctxdb::test {

class FaultVfs {
public:
  static constexpr const char *kName = "ctxdb-faults";

  enum class Op { kRead, kWrite, kSync, kAny };
  struct Counts {
    int64_t reads = 0, writes = 0, syncs = 0;
    int64_t of(Op op) const {
      switch (op) {
      case Op::kRead: return reads;
      case Op::kWrite: return writes;
      case Op::kSync: return syncs;
      case Op::kAny: break;
      }
      return reads + writes + syncs;
    }
  };
  struct Fault {
    enum class Kind { kNone, kError, kPowerLoss };
    Kind kind = Kind::kNone;
    Op op = Op::kAny;
    int64_t nth = 0; // 1-based, counted from arm()
    int error = 0;   // kError: the code the operation returns
  };

  // The one instance, registered with SQLite on first use (not as the default).
  static FaultVfs &get();

  // Starts counting from zero, with `fault` to inject (or none).
  void arm(Fault fault);
  void arm() { arm(Fault{}); }
  Counts counts() const;
  // Whether the armed fault has happened.
  bool fired() const;
  // The main database files opened at `path` since arm().
  int64_t main_db_opens(const std::string &path) const;
  // After a power cut and once every connection is closed: leaves each file
  // as its last sync did, powers on, and forgets every file (the next
  // handle sees them as it finds them).
  void reboot();
  // Forgets every file and disarms (between tests without a power cut).
  void reset();

private:
  struct Preimage {
    int64_t offset;
    std::string bytes;
  };
  struct FileState {
    int64_t synced_size = 0;
    std::vector<Preimage> preimages; // since the last sync, in write order
  };
  struct Hooks; // SQLite's callbacks into it (fault_vfs.cpp)
  friend struct Hooks;

  FaultVfs();
  // Counts an operation of `op` (the caller holds mutex_): the code it must
  // fail with, or 0. `off` is its code once the power is off.
  int count(Op op, int off);

  sqlite3_vfs *real_;
  mutable std::mutex mutex_;
  Fault fault_;
  Counts counts_;
  bool fired_ = false;
  bool powered_off_ = false;
  std::map<std::string, FileState> files_;
  std::map<std::string, int64_t> main_opens_;
};

} // namespace ctxdb::test
