#include "fault_vfs.hpp"

#include <sqlite3.h>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>

namespace ctxdb::test {

struct FaultVfs::Hooks {
  // What SQLite allocates for a file (the VFS's szOsFile): this, then the
  // wrapped VFS's own file.
  struct File {
    sqlite3_file base;
    FaultVfs *vfs;
    std::string *path; // nullptr for a temporary file, which no reboot keeps
    sqlite3_file *real() { return reinterpret_cast<sqlite3_file *>(this + 1); }
  };
  static File &file(sqlite3_file *f) { return *reinterpret_cast<File *>(f); }
  static sqlite3_file *real(sqlite3_file *f) { return file(f).real(); }
  static FaultVfs &owner(sqlite3_vfs *v) { return *static_cast<FaultVfs *>(v->pAppData); }
  static sqlite3_vfs *base(sqlite3_vfs *v) { return owner(v).real_; }

  static int64_t size_of(sqlite3_file *real) {
    sqlite3_int64 size = 0;
    return real->pMethods->xFileSize(real, &size) == SQLITE_OK ? size : 0;
  }

  // Keeps what [offset, offset + n) holds below the file's synced size
  // (the caller holds the mutex): what lies beyond it goes at a reboot.
  static void keep_preimage(File &f, int64_t offset, int64_t n) {
    if (!f.path) return;
    FileState &state = f.vfs->files_[*f.path];
    int64_t end = std::min({offset + n, size_of(f.real()), state.synced_size});
    if (end <= offset) return;
    std::string bytes(size_t(end - offset), '\0');
    f.real()->pMethods->xRead(f.real(), bytes.data(), int(bytes.size()), offset);
    state.preimages.push_back({offset, std::move(bytes)});
  }

  static int open(sqlite3_vfs *v, const char *name, sqlite3_file *sf, int flags, int *out_flags) {
    FaultVfs &self = owner(v);
    File &f = file(sf);
    f.base.pMethods = nullptr; // until it is open: SQLite then calls no xClose
    f.vfs = &self;
    f.path = nullptr;
    {
      std::lock_guard lock(self.mutex_);
      if (self.powered_off_) return SQLITE_CANTOPEN;
    }
    sqlite3_file *inner = f.real();
    inner->pMethods = nullptr;
    int rc = self.real_->xOpen(self.real_, name, inner, flags, out_flags);
    if (rc != SQLITE_OK) {
      if (inner->pMethods) inner->pMethods->xClose(inner);
      return rc;
    }
    f.base.pMethods = &kMethods;
    if (!name) return SQLITE_OK;
    f.path = new std::string(name);
    int64_t size = size_of(inner);
    std::lock_guard lock(self.mutex_);
    // A file already known keeps what its last sync left durable.
    self.files_.try_emplace(*f.path, FileState{size, {}});
    if (flags & SQLITE_OPEN_MAIN_DB) ++self.main_opens_[*f.path];
    return SQLITE_OK;
  }

  static int remove(sqlite3_vfs *v, const char *name, int sync_dir) {
    FaultVfs &self = owner(v);
    std::lock_guard lock(self.mutex_);
    if (self.powered_off_) return SQLITE_IOERR_DELETE;
    (void)sync_dir; // a deletion is durable at once here (see sync)
    int rc = self.real_->xDelete(self.real_, name, 0);
    if (rc == SQLITE_OK) self.files_.erase(name);
    return rc;
  }

  static int close(sqlite3_file *sf) {
    File &f = file(sf);
    int rc = f.real()->pMethods->xClose(f.real());
    delete f.path;
    f.path = nullptr;
    return rc;
  }

  static int read(sqlite3_file *sf, void *buf, int n, sqlite3_int64 offset) {
    File &f = file(sf);
    {
      std::lock_guard lock(f.vfs->mutex_);
      if (int rc = f.vfs->count(Op::kRead, SQLITE_IOERR_READ)) return rc;
    }
    return f.real()->pMethods->xRead(f.real(), buf, n, offset);
  }

  // Writes hold the mutex through the write, so that the pre-image kept is
  // what the write replaced.
  static int write(sqlite3_file *sf, const void *buf, int n, sqlite3_int64 offset) {
    File &f = file(sf);
    std::lock_guard lock(f.vfs->mutex_);
    if (int rc = f.vfs->count(Op::kWrite, SQLITE_IOERR_WRITE)) return rc;
    keep_preimage(f, offset, n);
    return f.real()->pMethods->xWrite(f.real(), buf, n, offset);
  }

  static int truncate(sqlite3_file *sf, sqlite3_int64 size) {
    File &f = file(sf);
    std::lock_guard lock(f.vfs->mutex_);
    if (int rc = f.vfs->count(Op::kWrite, SQLITE_IOERR_TRUNCATE)) return rc;
    keep_preimage(f, size, size_of(f.real()) - size);
    return f.real()->pMethods->xTruncate(f.real(), size);
  }

  static int sync(sqlite3_file *sf, int flags) {
    File &f = file(sf);
    std::lock_guard lock(f.vfs->mutex_);
    if (int rc = f.vfs->count(Op::kSync, SQLITE_IOERR_FSYNC)) return rc;
    // What is durable is the VFS's to say: reboot() restores what this
    // sync leaves. The disk's own fsync would only make the tests wait.
    (void)flags;
    if (f.path) {
      FileState &state = f.vfs->files_[*f.path];
      state.preimages.clear();
      state.synced_size = size_of(f.real());
    }
    return SQLITE_OK;
  }

  static const sqlite3_io_methods kMethods;
};

// Version 2: shared memory (the WAL index) but no xFetch, so that SQLite
// reads every page with xRead.
const sqlite3_io_methods FaultVfs::Hooks::kMethods = {
    2,
    close,
    read,
    write,
    truncate,
    sync,
    [](sqlite3_file *f, sqlite3_int64 *size) {
      return real(f)->pMethods->xFileSize(real(f), size);
    },
    [](sqlite3_file *f, int level) { return real(f)->pMethods->xLock(real(f), level); },
    [](sqlite3_file *f, int level) { return real(f)->pMethods->xUnlock(real(f), level); },
    [](sqlite3_file *f, int *out) { return real(f)->pMethods->xCheckReservedLock(real(f), out); },
    [](sqlite3_file *f, int op, void *arg) {
      return real(f)->pMethods->xFileControl(real(f), op, arg);
    },
    [](sqlite3_file *f) { return real(f)->pMethods->xSectorSize(real(f)); },
    [](sqlite3_file *f) { return real(f)->pMethods->xDeviceCharacteristics(real(f)); },
    [](sqlite3_file *f, int page, int size, int extend, void volatile **out) {
      return real(f)->pMethods->xShmMap(real(f), page, size, extend, out);
    },
    [](sqlite3_file *f, int offset, int n, int flags) {
      return real(f)->pMethods->xShmLock(real(f), offset, n, flags);
    },
    [](sqlite3_file *f) { real(f)->pMethods->xShmBarrier(real(f)); },
    [](sqlite3_file *f, int remove) { return real(f)->pMethods->xShmUnmap(real(f), remove); },
    nullptr,
    nullptr,
};

FaultVfs::FaultVfs() : real_(sqlite3_vfs_find("unix")) {
  if (!real_) real_ = sqlite3_vfs_find(nullptr);
  // Registered for the life of the process, so never freed.
  auto *vfs = new sqlite3_vfs{
      2,
      int(sizeof(Hooks::File)) + real_->szOsFile,
      real_->mxPathname,
      nullptr,
      kName,
      this,
      Hooks::open,
      Hooks::remove,
      [](sqlite3_vfs *v, const char *name, int flags, int *out) {
        return Hooks::base(v)->xAccess(Hooks::base(v), name, flags, out);
      },
      [](sqlite3_vfs *v, const char *name, int n, char *out) {
        return Hooks::base(v)->xFullPathname(Hooks::base(v), name, n, out);
      },
      [](sqlite3_vfs *v, const char *name) {
        return Hooks::base(v)->xDlOpen(Hooks::base(v), name);
      },
      [](sqlite3_vfs *v, int n, char *out) { Hooks::base(v)->xDlError(Hooks::base(v), n, out); },
      [](sqlite3_vfs *v, void *lib, const char *symbol) {
        return Hooks::base(v)->xDlSym(Hooks::base(v), lib, symbol);
      },
      [](sqlite3_vfs *v, void *lib) { Hooks::base(v)->xDlClose(Hooks::base(v), lib); },
      [](sqlite3_vfs *v, int n, char *out) {
        return Hooks::base(v)->xRandomness(Hooks::base(v), n, out);
      },
      [](sqlite3_vfs *v, int us) { return Hooks::base(v)->xSleep(Hooks::base(v), us); },
      [](sqlite3_vfs *v, double *now) { return Hooks::base(v)->xCurrentTime(Hooks::base(v), now); },
      [](sqlite3_vfs *v, int n, char *out) {
        return Hooks::base(v)->xGetLastError(Hooks::base(v), n, out);
      },
      [](sqlite3_vfs *v, sqlite3_int64 *now) {
        return Hooks::base(v)->xCurrentTimeInt64(Hooks::base(v), now);
      },
      nullptr,
      nullptr,
      nullptr,
  };
  if (sqlite3_vfs_register(vfs, 0) != SQLITE_OK)
    throw std::runtime_error("cannot register the fault-injecting VFS");
}

FaultVfs &FaultVfs::get() {
  static FaultVfs vfs;
  return vfs;
}

int FaultVfs::count(Op op, int off) {
  if (powered_off_) return off;
  switch (op) {
  case Op::kRead: ++counts_.reads; break;
  case Op::kWrite: ++counts_.writes; break;
  case Op::kSync: ++counts_.syncs; break;
  case Op::kAny: break;
  }
  if (fired_ || fault_.kind == Fault::Kind::kNone) return 0;
  if (fault_.op != Op::kAny && fault_.op != op) return 0;
  if (counts_.of(fault_.op) != fault_.nth) return 0;
  fired_ = true;
  if (fault_.kind == Fault::Kind::kError) return fault_.error;
  powered_off_ = true;
  return off;
}

void FaultVfs::arm(Fault fault) {
  std::lock_guard lock(mutex_);
  fault_ = fault;
  counts_ = {};
  fired_ = false;
  main_opens_.clear();
}

FaultVfs::Counts FaultVfs::counts() const {
  std::lock_guard lock(mutex_);
  return counts_;
}

bool FaultVfs::fired() const {
  std::lock_guard lock(mutex_);
  return fired_;
}

int64_t FaultVfs::main_db_opens(const std::string &path) const {
  std::lock_guard lock(mutex_);
  auto it = main_opens_.find(path);
  return it == main_opens_.end() ? 0 : it->second;
}

void FaultVfs::reboot() {
  std::lock_guard lock(mutex_);
  for (const auto &[path, state] : files_) {
    int fd = ::open(path.c_str(), O_RDWR);
    if (fd < 0) continue; // deleted, which is durable
    bool ok = true;
    // Newest first, so that the oldest pre-image of a region is what stays.
    for (auto it = state.preimages.rbegin(); it != state.preimages.rend(); ++it)
      ok = ok && ::pwrite(fd, it->bytes.data(), it->bytes.size(), it->offset) ==
                     ssize_t(it->bytes.size());
    ok = ok && ::ftruncate(fd, state.synced_size) == 0;
    ::close(fd);
    if (!ok) throw std::runtime_error("reboot: cannot restore " + path);
    std::filesystem::remove(path + "-shm");
  }
  files_.clear();
  powered_off_ = false;
  fault_ = {};
}

void FaultVfs::reset() {
  std::lock_guard lock(mutex_);
  files_.clear();
  main_opens_.clear();
  powered_off_ = false;
  fault_ = {};
  fired_ = false;
  counts_ = {};
}

} // namespace ctxdb::test
