// capi/handle.hpp — what the C ABI's source files share: the handle struct
// and the helpers that run a call on it (defined in capi/ctxdb.cpp). Not a
// public header: hosts see only include/ctxdb/ctxdb.h.
#pragma once

#include <ctxdb/ctxdb.h>

#include "engine.hpp"
#include "error.hpp"

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>

struct ctxdb_db {
  std::mutex mu;                         // serializes calls on the handle
  std::unique_ptr<ctxdb::Engine> engine; // null once closed
  // The thread inside a call on the handle, so that a host callback (a
  // token counter) calling back into it fails instead of deadlocking.
  std::atomic<std::thread::id> owner{};
  std::mutex messages_mu;
  std::unordered_map<std::thread::id, std::string> messages;
  // The streaming put in progress (capi/artifact_writer.cpp) and the
  // ctxdb_artifact_writer that owns it. It holds the connection's write
  // transaction, so every other call on the handle is refused while it is
  // open. Declared after engine: destroyed first, it rolls back while the
  // engine still exists.
  std::optional<ctxdb::artifact::ArtifactStore::Writer> writer;
  const void *writer_owner = nullptr;
};

namespace ctxdb::capi {

std::shared_ptr<ctxdb_db> live_handle(const ctxdb_db *db);
// Records message as the failure of the calling thread (on h when not
// NULL) and returns code.
int fail(ctxdb_db *h, Code code, const std::string &message);
// Maps the exception in flight to a status code and message.
int fail_current(ctxdb_db *h);
// A (pointer, length) argument as a string_view; NULL is only allowed with
// length 0 (kMisuse otherwise).
std::string_view arg(const char *p, size_t n, const char *name);
// Copies s into a ctxdb_free'd NUL-terminated buffer.
void put_out(const std::string &s, char **out, size_t *out_len);

// Runs fn(handle) for the live handle h under its lock, as every call on a
// handle does (reentry and closed checks, failures mapped to codes). Unlike
// the calls in ctxdb.cpp it runs while an artifact writer is open: fn
// decides what that means.
int with_handle(const std::shared_ptr<ctxdb_db> &h, const std::function<void(ctxdb_db &)> &fn);

} // namespace ctxdb::capi
