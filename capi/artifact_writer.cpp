// capi/artifact_writer.cpp — the streaming put of include/ctxdb/ctxdb.h
// (ctxdb_artifact_writer_*), after sqlite3_blob and libgit2's writestream.
//
// The put itself (engine ArtifactStore::Writer) lives in the handle
// (ctxdb_db::writer), so that closing the handle rolls it back before the
// engine goes; the ctxdb_artifact_writer is only the host's name for it.
// Live writers are kept in a registry, so a NULL, freed or foreign pointer
// is CTXDB_MISUSE instead of a crash.
#include <ctxdb/ctxdb.h>

#include "handle.hpp"

#include <memory>
#include <mutex>
#include <string>
#include <unordered_set>

using ctxdb::Code;
using ctxdb::Error;
namespace capi = ctxdb::capi;

struct ctxdb_artifact_writer {
  std::shared_ptr<ctxdb_db> db; // keeps the struct alive; the engine may close
  // Why the writer takes no more calls (empty while it does).
  std::string ended;
};

namespace {

struct WriterRegistry {
  std::mutex mu;
  std::unordered_set<const ctxdb_artifact_writer *> live;
};

WriterRegistry &writers() {
  static WriterRegistry *r = new WriterRegistry; // never destroyed: safe in atexit paths
  return *r;
}

bool live_writer(const ctxdb_artifact_writer *w) {
  WriterRegistry &r = writers();
  std::lock_guard lock(r.mu);
  return r.live.count(w) != 0;
}

// The put w owns, under the handle's lock; kMisuse naming why there is
// none (committed, failed, the handle closed).
ctxdb::artifact::ArtifactStore::Writer &own_put(ctxdb_artifact_writer &w, ctxdb_db &h) {
  if (h.writer_owner != &w || !h.writer) {
    if (w.ended.empty()) w.ended = "its database handle was closed (the put was rolled back)";
    throw Error(Code::kMisuse, "the artifact writer is finished: " + w.ended);
  }
  return *h.writer;
}

// Ends the put (rolling it back unless it committed) and says why.
void end_put(ctxdb_artifact_writer &w, ctxdb_db &h, std::string why) {
  if (h.writer_owner == &w) {
    h.writer.reset();
    h.writer_owner = nullptr;
  }
  if (w.ended.empty()) w.ended = std::move(why);
}

// Runs fn(put) on w's open put. A failure of the engine (not of the
// arguments, checked before) ends the put: its transaction is in an
// unknown state, so all of it is rolled back.
template <class Fn> int with_put(ctxdb_artifact_writer *w, Fn &&fn) {
  if (!w) return capi::fail(nullptr, Code::kMisuse, "the artifact writer is NULL");
  if (!live_writer(w))
    return capi::fail(nullptr, Code::kMisuse, "the artifact writer is not live (freed?)");
  return capi::with_handle(w->db, [&](ctxdb_db &h) {
    auto &put = own_put(*w, h);
    try {
      fn(put, h);
    } catch (const std::exception &e) {
      end_put(*w, h, std::string("an earlier call failed (the put was rolled back): ") + e.what());
      throw;
    }
  });
}

} // namespace

extern "C" {

CTXDB_API int ctxdb_artifact_writer_open(ctxdb_db *db, const char *meta_json, size_t meta_len,
                                         ctxdb_artifact_writer **out_writer) {
  std::shared_ptr<ctxdb_db> h = capi::live_handle(db);
  if (!out_writer) return capi::fail(h.get(), Code::kMisuse, "out_writer is NULL");
  *out_writer = nullptr;
  if (!h)
    return capi::fail(nullptr, Code::kMisuse,
                      db ? "the ctxdb handle is not open (closed, or not a handle)"
                         : "the ctxdb handle is NULL");
  return capi::with_handle(h, [&](ctxdb_db &handle) {
    if (handle.writer)
      throw Error(Code::kMisuse, "an artifact writer is open on this handle already: commit or "
                                 "free it first (or use another handle)");
    std::string_view meta = capi::arg(meta_json, meta_len, "meta_json");
    auto w = std::make_unique<ctxdb_artifact_writer>();
    w->db = h;
    handle.writer.emplace(handle.engine->artifact_writer(meta));
    handle.writer_owner = w.get();
    WriterRegistry &r = writers();
    std::lock_guard lock(r.mu);
    r.live.insert(w.get());
    *out_writer = w.release();
  });
}

CTXDB_API int ctxdb_artifact_writer_write(ctxdb_artifact_writer *w, const void *data, size_t len) {
  std::string_view piece;
  try {
    piece = capi::arg(static_cast<const char *>(data), len, "data");
  } catch (const Error &e) {
    return capi::fail(w && live_writer(w) ? w->db.get() : nullptr, e.code(), e.what());
  }
  return with_put(w, [&](auto &put, ctxdb_db &) { put.write(piece); });
}

CTXDB_API int ctxdb_artifact_writer_commit(ctxdb_artifact_writer *w, char **out, size_t *out_len) {
  if (out_len) *out_len = 0;
  if (!out)
    return capi::fail(w && live_writer(w) ? w->db.get() : nullptr, Code::kMisuse, "out is NULL");
  *out = nullptr;
  return with_put(w, [&](auto &put, ctxdb_db &h) {
    std::string artifact = h.engine->artifact_finish(put);
    end_put(*w, h, "it was committed");
    capi::put_out(artifact, out, out_len);
  });
}

CTXDB_API void ctxdb_artifact_writer_free(ctxdb_artifact_writer *w) {
  if (!w) return;
  {
    WriterRegistry &r = writers();
    std::lock_guard lock(r.mu);
    if (!r.live.erase(w)) return; // not ours, or freed already
  }
  std::unique_ptr<ctxdb_artifact_writer> owned(w);
  std::lock_guard lock(w->db->mu); // no call on the handle is in flight
  try {
    end_put(*w, *w->db, "it was freed");
  } catch (...) {
    // A rollback that fails leaves SQLite to roll back; nothing to report.
  }
}

} // extern "C"
