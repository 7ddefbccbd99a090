// capi/ctxdb.cpp — the C ABI of include/ctxdb/ctxdb.h over the C++ engine.
//
// Every entry point validates its arguments, runs the engine under the
// handle's mutex, and turns any exception into a status code and message:
// nothing C++ crosses the ABI. Live handles and iterators are kept in a
// registry, so a NULL, closed or foreign pointer is CTXDB_MISUSE instead of
// a crash.
#include <ctxdb/ctxdb.h>

#include "engine.hpp"
#include "error.hpp"
#include "handle.hpp"
#include "store/store.hpp"
#include "token/bpe.hpp"
#include "token/counter.hpp"
#include "json/parse.hpp"

#include <simdjson.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

using ctxdb::Code;
using ctxdb::Error;

static_assert(CTXDB_MISUSE == int(Code::kMisuse));
static_assert(CTXDB_INVALID_ARG == int(Code::kInvalidArg));
static_assert(CTXDB_INVALID_UTF8 == int(Code::kInvalidUtf8));
static_assert(CTXDB_INVALID_JSON == int(Code::kInvalidJson));
static_assert(CTXDB_NOT_FOUND == int(Code::kNotFound));
static_assert(CTXDB_CONFLICT == int(Code::kConflict));
static_assert(CTXDB_BUSY == int(Code::kBusy));
static_assert(CTXDB_BUDGET == int(Code::kBudget));
static_assert(CTXDB_CHECK_FAILED == int(Code::kCheckFailed));
static_assert(CTXDB_CORRUPT == int(Code::kCorrupt));
static_assert(CTXDB_IO == int(Code::kIo));
static_assert(CTXDB_NOMEM == int(Code::kNoMem));
static_assert(CTXDB_SCHEMA == int(Code::kSchema));
static_assert(CTXDB_READONLY == int(Code::kReadOnly));
static_assert(CTXDB_INTERNAL == int(Code::kInternal));
static_assert(CTXDB_NOTADB == int(Code::kNotADb));

struct ctxdb_iter {
  // Reads the page of at most `limit` rows after `cursor` and advances it.
  using Pager =
      std::function<std::vector<std::string>(ctxdb::Engine &, int64_t &cursor, int64_t limit)>;
  std::shared_ptr<ctxdb_db> db; // keeps the struct alive; engine may close
  Pager page;
  int64_t cursor = 0; // the pager's position: the last seq or pos returned
  std::vector<std::string> rows;
  size_t next = 0;
  bool exhausted = false;
  // The pager may return short pages; only an empty one ends (ctxdb_export).
  bool short_pages = false;
};

namespace {

constexpr int64_t kIterPage = 256;

struct Registry {
  std::mutex mu;
  std::unordered_map<const ctxdb_db *, std::shared_ptr<ctxdb_db>> handles;
  std::unordered_set<const ctxdb_iter *> iters;
};

Registry &registry() {
  static Registry *r = new Registry; // never destroyed: safe in atexit paths
  return *r;
}

std::shared_ptr<ctxdb_db> live_handle(const ctxdb_db *db) {
  if (!db) return nullptr;
  Registry &r = registry();
  std::lock_guard lock(r.mu);
  auto it = r.handles.find(db);
  return it == r.handles.end() ? nullptr : it->second;
}

bool live_iter(const ctxdb_iter *it) {
  Registry &r = registry();
  std::lock_guard lock(r.mu);
  return r.iters.count(it) != 0;
}

thread_local std::string t_last_error;

// The handle whose summarizer callback is running on this thread (the
// owner mark below already refuses a call back into it).
thread_local const ctxdb_db *t_in_callback = nullptr;

int fail(ctxdb_db *h, Code code, const std::string &message) {
  t_last_error = message;
  if (h) {
    std::lock_guard lock(h->messages_mu);
    h->messages[std::this_thread::get_id()] = message;
  }
  return int(code);
}

// Maps the exception in flight to a status code (the Lippincott idiom).
int fail_current(ctxdb_db *h) {
  try {
    throw;
  } catch (const Error &e) {
    return fail(h, e.code(), e.what());
  } catch (const SQLite::Exception &e) {
    Error err = ctxdb::store::to_error(e);
    return fail(h, err.code(), err.what());
  } catch (const std::bad_alloc &) {
    return fail(h, Code::kNoMem, "out of memory");
  } catch (const simdjson::simdjson_error &e) {
    return fail(h, Code::kInternal, std::string("simdjson: ") + e.what());
  } catch (const std::exception &e) {
    return fail(h, Code::kInternal, std::string("internal error: ") + e.what());
  } catch (...) {
    return fail(h, Code::kInternal, "internal error: unknown exception");
  }
}

// Marks the calling thread as inside a call on the handle while it holds
// the handle's lock.
struct OwnerMark {
  ctxdb_db &h;
  explicit OwnerMark(ctxdb_db &handle) : h(handle) { h.owner = std::this_thread::get_id(); }
  ~OwnerMark() { h.owner = std::thread::id(); }
};

// A call on the handle made from inside a call on it (a host callback):
// locking would deadlock.
int reentered(ctxdb_db *h) {
  return fail(h, Code::kMisuse,
              "a ctxdb call on this handle was made from inside a call on it "
              "(a host callback must not use the handle that called it)");
}

// A call on a handle with an artifact writer open: it would run inside the
// writer's transaction (and be rolled back with an abort).
int writer_open(ctxdb_db *h) {
  return fail(h, Code::kMisuse,
              "an artifact writer is open on this handle: commit or free it first "
              "(or use another handle)");
}

// A (pointer, length) argument as a string_view; NULL is only allowed
// with length 0.
std::string_view arg(const char *p, size_t n, const char *name) {
  if (!p && n)
    throw Error(Code::kMisuse,
                std::string(name) + " is NULL but its length is " + std::to_string(n));
  return p ? std::string_view(p, n) : std::string_view();
}

// An id argument: non-empty UTF-8 without NUL. No id holds a NUL, and a
// message naming one would be cut there by ctxdb_errmsg's C string.
std::string_view id_arg(const char *p, size_t n, const char *name) {
  std::string_view s = arg(p, n, name);
  if (s.empty()) throw Error(Code::kInvalidArg, std::string(name) + " is empty");
  ctxdb::json::require_utf8(s, name);
  if (size_t nul = s.find('\0'); nul != std::string_view::npos)
    throw Error(Code::kInvalidArg,
                std::string(name) + " holds a NUL byte (at byte " + std::to_string(nul) + ")");
  return s;
}

// An optional id argument: NULL (with length 0) is none, else as id_arg.
std::optional<std::string_view> opt_id_arg(const char *p, size_t n, const char *name) {
  if (!p) {
    arg(p, n, name); // NULL with a length is misuse
    return std::nullopt;
  }
  return id_arg(p, n, name);
}

void put_out(const std::string &s, char **out, size_t *out_len) {
  char *buf = static_cast<char *>(std::malloc(s.size() + 1));
  if (!buf) throw std::bad_alloc();
  std::memcpy(buf, s.data(), s.size());
  buf[s.size()] = '\0';
  *out = buf;
  if (out_len) *out_len = s.size();
}

// Runs fn(engine) for a live handle under its lock, mapping failures.
template <class Fn> int with_engine(ctxdb_db *db, Fn &&fn) {
  std::shared_ptr<ctxdb_db> h = live_handle(db);
  if (!h)
    return fail(nullptr, Code::kMisuse,
                db ? "the ctxdb handle is not open (closed, or not a handle)"
                   : "the ctxdb handle is NULL");
  if (h->owner == std::this_thread::get_id()) return reentered(h.get());
  std::lock_guard lock(h->mu);
  if (!h->engine) return fail(nullptr, Code::kMisuse, "the ctxdb handle is closed");
  if (h->writer) return writer_open(h.get());
  OwnerMark mark(*h);
  try {
    fn(*h->engine);
    return CTXDB_OK;
  } catch (...) {
    return fail_current(h.get());
  }
}

// For calls that return a buffer: clears the out-parameters first, so they
// are NULL/0 on every failure.
template <class Fn> int with_output(ctxdb_db *db, char **out, size_t *out_len, Fn &&fn) {
  if (out_len) *out_len = 0;
  if (!out) return fail(live_handle(db).get(), Code::kMisuse, "out is NULL");
  *out = nullptr;
  return with_engine(db, [&](ctxdb::Engine &e) { put_out(fn(e), out, out_len); });
}

// Reads the iterator's next page into it->rows.
void fill_page(ctxdb_iter *it, ctxdb::Engine &e) {
  it->rows.clear(); // ends the life of the previous page's borrowed rows
  it->next = 0;
  it->rows = it->page(e, it->cursor, kIterPage);
  it->exhausted = it->short_pages ? it->rows.empty() : int64_t(it->rows.size()) < kIterPage;
}

// Opens an iterator over what make_pager(engine, iter) returns: it checks
// the arguments (throwing what is wrong with them), may set the start
// cursor, and returns the pager. With first_page, the first page is read
// now, so that what only the read can tell (an unknown branch) fails the
// call rather than the first ctxdb_iter_next.
template <class Fn>
int open_iter(ctxdb_db *db, ctxdb_iter **out_iter, bool first_page, Fn &&make_pager) {
  if (!out_iter) return fail(live_handle(db).get(), Code::kMisuse, "out_iter is NULL");
  *out_iter = nullptr;
  return with_engine(db, [&](ctxdb::Engine &e) {
    auto it = std::make_unique<ctxdb_iter>();
    it->db = live_handle(db);
    it->page = make_pager(e, *it);
    if (first_page) fill_page(it.get(), e);
    Registry &r = registry();
    std::lock_guard lock(r.mu);
    r.iters.insert(it.get());
    *out_iter = it.release();
  });
}

// A view of one branch: `view` is one of the Engine's branch views.
using BranchView = std::string (ctxdb::Engine::*)(std::string_view,
                                                  std::optional<std::string_view>);

int branch_view(ctxdb_db *db, const char *session_id, size_t id_len, const char *branch,
                size_t branch_len, char **out, size_t *out_len, BranchView view) {
  return with_output(db, out, out_len, [&](ctxdb::Engine &e) {
    std::string_view sid = id_arg(session_id, id_len, "session_id");
    return (e.*view)(sid, opt_id_arg(branch, branch_len, "branch"));
  });
}

} // namespace

extern "C" {

CTXDB_API const char *ctxdb_version(void) { return CTXDB_VERSION_STRING; }
CTXDB_API int ctxdb_version_number(void) { return CTXDB_VERSION_NUMBER; }
CTXDB_API int ctxdb_abi_version(void) { return CTXDB_ABI_VERSION; }

CTXDB_API const char *ctxdb_errstr(int code) {
  switch (code) {
  case CTXDB_OK: return "CTXDB_OK";
  case CTXDB_MISUSE: return "CTXDB_MISUSE";
  case CTXDB_INVALID_ARG: return "CTXDB_INVALID_ARG";
  case CTXDB_INVALID_UTF8: return "CTXDB_INVALID_UTF8";
  case CTXDB_INVALID_JSON: return "CTXDB_INVALID_JSON";
  case CTXDB_NOT_FOUND: return "CTXDB_NOT_FOUND";
  case CTXDB_CONFLICT: return "CTXDB_CONFLICT";
  case CTXDB_BUSY: return "CTXDB_BUSY";
  case CTXDB_BUDGET: return "CTXDB_BUDGET";
  case CTXDB_CHECK_FAILED: return "CTXDB_CHECK_FAILED";
  case CTXDB_CORRUPT: return "CTXDB_CORRUPT";
  case CTXDB_IO: return "CTXDB_IO";
  case CTXDB_NOMEM: return "CTXDB_NOMEM";
  case CTXDB_SCHEMA: return "CTXDB_SCHEMA";
  case CTXDB_READONLY: return "CTXDB_READONLY";
  case CTXDB_INTERNAL: return "CTXDB_INTERNAL";
  case CTXDB_NOTADB: return "CTXDB_NOTADB";
  case CTXDB_ROW: return "CTXDB_ROW";
  case CTXDB_DONE: return "CTXDB_DONE";
  default: return "CTXDB_UNKNOWN";
  }
}

CTXDB_API const char *ctxdb_errmsg(const ctxdb_db *db) {
  if (std::shared_ptr<ctxdb_db> h = live_handle(db)) {
    std::lock_guard lock(h->messages_mu);
    auto it = h->messages.find(std::this_thread::get_id());
    return it == h->messages.end() ? "not an error" : it->second.c_str();
  }
  return t_last_error.empty() ? "not an error" : t_last_error.c_str();
}

CTXDB_API void ctxdb_free(void *p) { std::free(p); }

CTXDB_API int ctxdb_open(const char *path, const char *config_json, size_t config_len,
                         ctxdb_db **out_db) {
  if (!out_db) return fail(nullptr, Code::kMisuse, "out_db is NULL");
  *out_db = nullptr;
  try {
    if (!path) throw Error(Code::kMisuse, "path is NULL");
    std::string_view p(path);
    if (p.empty()) throw Error(Code::kInvalidArg, "path is empty");
    ctxdb::json::require_utf8(p, "path");
    std::string_view config = arg(config_json, config_len, "config_json");
    auto h = std::make_shared<ctxdb_db>();
    h->engine = std::make_unique<ctxdb::Engine>(std::string(p), config);
    Registry &r = registry();
    std::lock_guard lock(r.mu);
    r.handles.emplace(h.get(), h);
    *out_db = h.get();
    return CTXDB_OK;
  } catch (...) {
    return fail_current(nullptr);
  }
}

CTXDB_API int ctxdb_close(ctxdb_db *db) {
  if (!db) return CTXDB_OK;
  std::shared_ptr<ctxdb_db> h;
  {
    Registry &r = registry();
    std::lock_guard lock(r.mu);
    auto it = r.handles.find(db);
    if (it == r.handles.end())
      return fail(nullptr, Code::kMisuse, "ctxdb_close: the handle is not open (closed twice?)");
    if (it->second->owner == std::this_thread::get_id()) return reentered(it->second.get());
    h = std::move(it->second);
    r.handles.erase(it);
  }
  std::lock_guard lock(h->mu); // waits for a call in flight on another thread
  try {
    h->writer.reset(); // an open streaming put is rolled back
    h->writer_owner = nullptr;
    h->engine.reset();
    return CTXDB_OK;
  } catch (...) {
    return fail_current(nullptr);
  }
}

CTXDB_API int ctxdb_session_create(ctxdb_db *db, const char *session_json, size_t len, char **out,
                                   size_t *out_len) {
  return with_output(db, out, out_len, [&](ctxdb::Engine &e) {
    return e.session_create(arg(session_json, len, "session_json"));
  });
}

CTXDB_API int ctxdb_session_get(ctxdb_db *db, const char *session_id, size_t id_len, char **out,
                                size_t *out_len) {
  return with_output(db, out, out_len, [&](ctxdb::Engine &e) {
    return e.session_get(id_arg(session_id, id_len, "session_id"));
  });
}

CTXDB_API int ctxdb_session_list(ctxdb_db *db, char **out, size_t *out_len) {
  return with_output(db, out, out_len, [&](ctxdb::Engine &e) { return e.session_list(); });
}

CTXDB_API int ctxdb_append(ctxdb_db *db, const char *session_id, size_t id_len,
                           const char *event_json, size_t len, char **out, size_t *out_len) {
  return with_output(db, out, out_len, [&](ctxdb::Engine &e) {
    return e.append(id_arg(session_id, id_len, "session_id"), arg(event_json, len, "event_json"));
  });
}

CTXDB_API int ctxdb_append_batch(ctxdb_db *db, const char *session_id, size_t id_len,
                                 const char *ndjson, size_t len, char **out, size_t *out_len) {
  return with_output(db, out, out_len, [&](ctxdb::Engine &e) {
    return e.append_batch(id_arg(session_id, id_len, "session_id"), arg(ndjson, len, "ndjson"));
  });
}

CTXDB_API int ctxdb_event_get(ctxdb_db *db, const char *event_id, size_t id_len, char **out,
                              size_t *out_len) {
  return with_output(db, out, out_len, [&](ctxdb::Engine &e) {
    return e.event_get(id_arg(event_id, id_len, "event_id"));
  });
}

CTXDB_API int ctxdb_branch_fork(ctxdb_db *db, const char *session_id, size_t id_len,
                                const char *spec_json, size_t len, char **out, size_t *out_len) {
  return with_output(db, out, out_len, [&](ctxdb::Engine &e) {
    return e.branch_fork(id_arg(session_id, id_len, "session_id"),
                         arg(spec_json, len, "spec_json"));
  });
}

CTXDB_API int ctxdb_branch_list(ctxdb_db *db, const char *session_id, size_t id_len, char **out,
                                size_t *out_len) {
  return with_output(db, out, out_len, [&](ctxdb::Engine &e) {
    return e.branch_list(id_arg(session_id, id_len, "session_id"));
  });
}

CTXDB_API int ctxdb_event_children(ctxdb_db *db, const char *event_id, size_t id_len, char **out,
                                   size_t *out_len) {
  return with_output(db, out, out_len, [&](ctxdb::Engine &e) {
    return e.event_children(id_arg(event_id, id_len, "event_id"));
  });
}

CTXDB_API int ctxdb_messages_list(ctxdb_db *db, const char *session_id, size_t id_len,
                                  const char *branch, size_t branch_len, char **out,
                                  size_t *out_len) {
  return branch_view(db, session_id, id_len, branch, branch_len, out, out_len,
                     &ctxdb::Engine::messages);
}

CTXDB_API int ctxdb_tool_calls_list(ctxdb_db *db, const char *session_id, size_t id_len,
                                    const char *branch, size_t branch_len, char **out,
                                    size_t *out_len) {
  return branch_view(db, session_id, id_len, branch, branch_len, out, out_len,
                     &ctxdb::Engine::tool_calls);
}

CTXDB_API int ctxdb_files_list(ctxdb_db *db, const char *session_id, size_t id_len,
                               const char *branch, size_t branch_len, char **out, size_t *out_len) {
  return branch_view(db, session_id, id_len, branch, branch_len, out, out_len,
                     &ctxdb::Engine::files);
}

CTXDB_API int ctxdb_state_get(ctxdb_db *db, const char *session_id, size_t id_len,
                              const char *query_json, size_t len, char **out, size_t *out_len) {
  return with_output(db, out, out_len, [&](ctxdb::Engine &e) {
    return e.state_query(id_arg(session_id, id_len, "session_id"),
                         arg(query_json, len, "query_json"));
  });
}

CTXDB_API int ctxdb_stats_get(ctxdb_db *db, const char *session_id, size_t id_len, char **out,
                              size_t *out_len) {
  return with_output(db, out, out_len, [&](ctxdb::Engine &e) {
    return e.stats(opt_id_arg(session_id, id_len, "session_id"));
  });
}

CTXDB_API int ctxdb_verify(ctxdb_db *db, const char *session_id, size_t id_len, char **out,
                           size_t *out_len) {
  return with_output(db, out, out_len, [&](ctxdb::Engine &e) {
    return e.verify(opt_id_arg(session_id, id_len, "session_id"));
  });
}

CTXDB_API int ctxdb_verify_with(ctxdb_db *db, const char *options_json, size_t len, char **out,
                                size_t *out_len) {
  return with_output(db, out, out_len, [&](ctxdb::Engine &e) {
    return e.verify_with(arg(options_json, len, "options_json"));
  });
}

CTXDB_API int ctxdb_anchor(ctxdb_db *db, const char *options_json, size_t len, char **out,
                           size_t *out_len) {
  return with_output(db, out, out_len, [&](ctxdb::Engine &e) {
    return e.anchor(arg(options_json, len, "options_json"));
  });
}

CTXDB_API int ctxdb_rebuild(ctxdb_db *db, const char *options_json, size_t len, char **out,
                            size_t *out_len) {
  return with_output(db, out, out_len, [&](ctxdb::Engine &e) {
    return e.rebuild(arg(options_json, len, "options_json"));
  });
}

CTXDB_API int ctxdb_optimize(ctxdb_db *db, const char *options_json, size_t len, char **out,
                             size_t *out_len) {
  return with_output(db, out, out_len, [&](ctxdb::Engine &e) {
    return e.optimize(arg(options_json, len, "options_json"));
  });
}

CTXDB_API int ctxdb_import(ctxdb_db *db, const char *ndjson, size_t len, char **out,
                           size_t *out_len) {
  return with_output(db, out, out_len,
                     [&](ctxdb::Engine &e) { return e.import(arg(ndjson, len, "ndjson")); });
}

CTXDB_API int ctxdb_transcript_import(ctxdb_db *db, const char *options_json, size_t len,
                                      char **out, size_t *out_len) {
  return with_output(db, out, out_len, [&](ctxdb::Engine &e) {
    return e.transcript_import(arg(options_json, len, "options_json"));
  });
}

CTXDB_API int ctxdb_artifact_put(ctxdb_db *db, const void *data, size_t len, const char *meta_json,
                                 size_t meta_len, char **out, size_t *out_len) {
  return with_output(db, out, out_len, [&](ctxdb::Engine &e) {
    return e.artifact_put(arg(static_cast<const char *>(data), len, "data"),
                          arg(meta_json, meta_len, "meta_json"));
  });
}

CTXDB_API int ctxdb_artifact_read(ctxdb_db *db, const char *id, size_t id_len, int64_t offset,
                                  int64_t length, void **out, size_t *out_len) {
  if (out_len) *out_len = 0;
  if (!out) return fail(live_handle(db).get(), Code::kMisuse, "out is NULL");
  *out = nullptr;
  // The chunks decode straight into the buffer the caller gets.
  std::unique_ptr<char, decltype(&std::free)> buf(nullptr, &std::free);
  size_t n = 0;
  int rc = with_engine(db, [&](ctxdb::Engine &e) {
    n = e.artifact_read_into(id_arg(id, id_len, "id"), offset, length, [&](size_t size) {
      buf.reset(static_cast<char *>(std::malloc(size + 1)));
      if (!buf) throw std::bad_alloc();
      buf.get()[size] = '\0';
      return buf.get();
    });
  });
  if (rc != CTXDB_OK) return rc;
  *out = buf.release();
  if (out_len) *out_len = n;
  return rc;
}

CTXDB_API int ctxdb_artifact_info(ctxdb_db *db, const char *id, size_t id_len, char **out,
                                  size_t *out_len) {
  return with_output(db, out, out_len,
                     [&](ctxdb::Engine &e) { return e.artifact_info(id_arg(id, id_len, "id")); });
}

CTXDB_API int ctxdb_artifact_list(ctxdb_db *db, const char *session_id, size_t id_len, char **out,
                                  size_t *out_len) {
  return with_output(db, out, out_len, [&](ctxdb::Engine &e) {
    return e.artifact_list(opt_id_arg(session_id, id_len, "session_id"));
  });
}

CTXDB_API int ctxdb_artifact_lines(ctxdb_db *db, const char *id, size_t id_len, int64_t first,
                                   int64_t count, char **out, size_t *out_len) {
  return with_output(db, out, out_len, [&](ctxdb::Engine &e) {
    return e.artifact_lines(id_arg(id, id_len, "id"), first, count);
  });
}

CTXDB_API int ctxdb_artifact_preview(ctxdb_db *db, const char *id, size_t id_len,
                                     const char *spec_json, size_t len, char **out,
                                     size_t *out_len) {
  return with_output(db, out, out_len, [&](ctxdb::Engine &e) {
    return e.artifact_preview(id_arg(id, id_len, "id"), arg(spec_json, len, "spec_json"));
  });
}

CTXDB_API int ctxdb_artifact_search(ctxdb_db *db, const char *id, size_t id_len,
                                    const char *pattern, size_t pattern_len,
                                    const char *options_json, size_t options_len, char **out,
                                    size_t *out_len) {
  return with_output(db, out, out_len, [&](ctxdb::Engine &e) {
    std::string_view aid = id_arg(id, id_len, "id");
    std::string_view pat = arg(pattern, pattern_len, "pattern");
    ctxdb::json::require_utf8(pat, "pattern");
    return e.artifact_search(aid, pat, arg(options_json, options_len, "options_json"));
  });
}

// --- Memory ------------------------------------------------------------------

CTXDB_API int ctxdb_memory_write(ctxdb_db *db, const char *session_id, size_t id_len,
                                 const char *memory_json, size_t len, char **out, size_t *out_len) {
  return with_output(db, out, out_len, [&](ctxdb::Engine &e) {
    return e.memory_write(id_arg(session_id, id_len, "session_id"),
                          arg(memory_json, len, "memory_json"));
  });
}

CTXDB_API int ctxdb_memory_update(ctxdb_db *db, const char *memory_id, size_t id_len,
                                  const char *update_json, size_t len, char **out,
                                  size_t *out_len) {
  return with_output(db, out, out_len, [&](ctxdb::Engine &e) {
    return e.memory_update(id_arg(memory_id, id_len, "memory_id"),
                           arg(update_json, len, "update_json"));
  });
}

CTXDB_API int ctxdb_memory_forget(ctxdb_db *db, const char *memory_id, size_t id_len,
                                  const char *options_json, size_t len, char **out,
                                  size_t *out_len) {
  return with_output(db, out, out_len, [&](ctxdb::Engine &e) {
    return e.memory_forget(id_arg(memory_id, id_len, "memory_id"),
                           arg(options_json, len, "options_json"));
  });
}

CTXDB_API int ctxdb_memory_get(ctxdb_db *db, const char *memory_id, size_t id_len, char **out,
                               size_t *out_len) {
  return with_output(db, out, out_len, [&](ctxdb::Engine &e) {
    return e.memory_get(id_arg(memory_id, id_len, "memory_id"));
  });
}

CTXDB_API int ctxdb_memory_list(ctxdb_db *db, const char *query_json, size_t len, char **out,
                                size_t *out_len) {
  return with_output(db, out, out_len, [&](ctxdb::Engine &e) {
    return e.memory_list(arg(query_json, len, "query_json"));
  });
}

CTXDB_API int ctxdb_memory_retrieve(ctxdb_db *db, const char *query_json, size_t len, char **out,
                                    size_t *out_len) {
  return with_output(db, out, out_len, [&](ctxdb::Engine &e) {
    return e.memory_retrieve(arg(query_json, len, "query_json"));
  });
}

CTXDB_API int ctxdb_memory_promote(ctxdb_db *db, const char *session_id, size_t id_len,
                                   const char *candidates_json, size_t len, char **out,
                                   size_t *out_len) {
  return with_output(db, out, out_len, [&](ctxdb::Engine &e) {
    return e.memory_promote(id_arg(session_id, id_len, "session_id"),
                            arg(candidates_json, len, "candidates_json"));
  });
}

CTXDB_API int ctxdb_events_iter(ctxdb_db *db, const char *session_id, size_t id_len,
                                int64_t from_seq, int64_t to_seq, ctxdb_iter **out_iter) {
  return open_iter(db, out_iter, false, [&](ctxdb::Engine &e, ctxdb_iter &it) -> ctxdb_iter::Pager {
    std::optional<std::string_view> given = opt_id_arg(session_id, id_len, "session_id");
    if (!given)
      return [](ctxdb::Engine &eng, int64_t &cursor, int64_t limit) {
        return eng.events_page(std::nullopt, cursor, -1, limit);
      };
    std::string_view sid = *given;
    if (!e.session_exists(sid))
      throw Error(Code::kNotFound, "session '" + std::string(sid) + "' not found");
    it.cursor = from_seq > 1 ? from_seq - 1 : 0;
    return [sid = std::string(sid), to_seq](ctxdb::Engine &eng, int64_t &cursor, int64_t limit) {
      return eng.events_page(sid, cursor, to_seq, limit);
    };
  });
}

CTXDB_API int ctxdb_export(ctxdb_db *db, const char *session_id, size_t id_len,
                           ctxdb_iter **out_iter) {
  return open_iter(db, out_iter, false, [&](ctxdb::Engine &e, ctxdb_iter &it) -> ctxdb_iter::Pager {
    auto state = std::make_shared<ctxdb::Engine::ExportState>();
    if (auto sid = opt_id_arg(session_id, id_len, "session_id")) {
      if (!e.session_exists(*sid))
        throw Error(Code::kNotFound, "session '" + std::string(*sid) + "' not found");
      state->session_id = std::string(*sid);
    }
    it.short_pages = true;
    return [state](ctxdb::Engine &eng, int64_t &, int64_t limit) {
      return eng.export_page(*state, limit);
    };
  });
}

CTXDB_API int ctxdb_branch_path(ctxdb_db *db, const char *session_id, size_t id_len,
                                const char *branch, size_t branch_len, ctxdb_iter **out_iter) {
  return open_iter(db, out_iter, true, [&](ctxdb::Engine &e, ctxdb_iter &) -> ctxdb_iter::Pager {
    std::string sid(id_arg(session_id, id_len, "session_id"));
    // Resolved here: a name is looked up once, and its errors come at open.
    int64_t no = e.path_branch(sid, opt_id_arg(branch, branch_len, "branch"));
    return [sid, no](ctxdb::Engine &eng, int64_t &cursor, int64_t limit) {
      return eng.path_page(sid, no, cursor, limit);
    };
  });
}

CTXDB_API int ctxdb_iter_next(ctxdb_iter *it, const char **row, size_t *row_len) {
  if (row) *row = nullptr;
  if (row_len) *row_len = 0;
  if (!it) return fail(nullptr, Code::kMisuse, "the iterator is NULL");
  if (!live_iter(it)) return fail(nullptr, Code::kMisuse, "the iterator is not live (freed?)");
  if (!row) return fail(it->db.get(), Code::kMisuse, "row is NULL");
  ctxdb_db *h = it->db.get();
  if (h->owner == std::this_thread::get_id()) return reentered(h);
  std::lock_guard lock(h->mu);
  if (!h->engine) return fail(nullptr, Code::kMisuse, "the iterator's database was closed");
  if (h->writer) return writer_open(h);
  OwnerMark mark(*h);
  try {
    if (it->next == it->rows.size() && !it->exhausted) fill_page(it, *h->engine);
    if (it->next == it->rows.size()) return CTXDB_DONE;
    const std::string &r = it->rows[it->next++];
    *row = r.c_str();
    if (row_len) *row_len = r.size();
    return CTXDB_ROW;
  } catch (...) {
    return fail_current(h);
  }
}

CTXDB_API void ctxdb_iter_free(ctxdb_iter *it) {
  if (!it) return;
  {
    Registry &r = registry();
    std::lock_guard lock(r.mu);
    if (!r.iters.erase(it)) return; // not ours, or freed already
  }
  std::shared_ptr<ctxdb_db> db = it->db;
  std::lock_guard lock(db->mu); // no iter_next of this handle is mid-page
  delete it;
}

} // extern "C"

// ---- the context compiler --------------------------------------------------

namespace {

// A host's ctxdb_token_count_fn as the engine's token::Counter. A failure
// of the callback is thrown as ctxdb::Error, which fails the engine call
// that needed the count (an append rolls back).
class HostCounter final : public ctxdb::token::Counter {
public:
  HostCounter(std::string name, ctxdb_token_count_fn fn, void *user_data)
      : name_(std::move(name)), fn_(fn), user_data_(user_data) {}

  std::string_view name() const override { return name_; }

  int64_t count(std::string_view text) const override {
    int64_t n = -1;
    int rc = fn_(user_data_, text.empty() ? "" : text.data(), text.size(), &n);
    if (rc != CTXDB_OK) {
      // A status code of ours says what went wrong; anything else is the
      // host's own failure, which ctxdb can only call internal.
      bool ours = rc >= CTXDB_MISUSE && rc <= CTXDB_NOTADB;
      throw Error(ours ? Code(rc) : Code::kInternal,
                  "token counter '" + name_ + "' failed (it returned " + std::to_string(rc) +
                      (ours ? std::string(", ") + ctxdb_errstr(rc) : std::string()) + ")");
    }
    if (n < 0)
      throw Error(Code::kInternal, "token counter '" + name_ + "' returned a negative count (" +
                                       std::to_string(n) + ")");
    return n;
  }

private:
  std::string name_;
  ctxdb_token_count_fn fn_;
  void *user_data_;
};

constexpr size_t kMaxCounterName = 100;

} // namespace

extern "C" {

CTXDB_API int ctxdb_compile(ctxdb_db *db, const char *request_json, size_t len, char **out,
                            size_t *out_len) {
  return with_output(db, out, out_len, [&](ctxdb::Engine &e) {
    return e.compile(arg(request_json, len, "request_json"));
  });
}

CTXDB_API int ctxdb_bundle_convert(ctxdb_db *db, const char *bundle_json, size_t len,
                                   const char *format, size_t format_len, char **out,
                                   size_t *out_len) {
  return with_output(db, out, out_len, [&](ctxdb::Engine &e) {
    std::string_view bundle = arg(bundle_json, len, "bundle_json");
    std::string_view fmt = arg(format, format_len, "format");
    ctxdb::json::require_utf8(fmt, "format");
    return e.bundle_convert(bundle, fmt);
  });
}

CTXDB_API int ctxdb_token_counter_set(ctxdb_db *db, const char *name, size_t name_len,
                                      ctxdb_token_count_fn fn, void *user_data) {
  return with_engine(db, [&](ctxdb::Engine &e) {
    arg(name, name_len, "name"); // ignored without fn, but NULL with a length is still misuse
    if (!fn) {
      e.set_token_counter(nullptr);
      return;
    }
    std::string_view n = id_arg(name, name_len, "name");
    if (n.size() > kMaxCounterName)
      throw Error(Code::kInvalidArg, "name is " + std::to_string(n.size()) +
                                         " bytes long; a counter's name is at most " +
                                         std::to_string(kMaxCounterName));
    e.set_token_counter(std::make_unique<HostCounter>(std::string(n), fn, user_data));
  });
}

// ---- Search ------------------------------------------------------------------

CTXDB_API int ctxdb_search(ctxdb_db *db, const char *query, size_t len, const char *options_json,
                           size_t opt_len, char **out, size_t *out_len) {
  return with_output(db, out, out_len, [&](ctxdb::Engine &e) {
    std::string_view q = arg(query, len, "query");
    ctxdb::json::require_utf8(q, "query");
    return e.search(q, arg(options_json, opt_len, "options_json"));
  });
}

} // extern "C"

// ---- Tokenizer --------------------------------------------------------------

namespace {

// Runs fn(bpe, text, specials) for ctxdb_tokens_*: the handle (which may be
// NULL) only lends its tokenizer_data_dir, so the count runs without its
// lock and calls on one handle count in parallel.
template <class Fn>
int with_tokenizer(ctxdb_db *db, const char *encoding, size_t enc_len, const char *text, size_t len,
                   int specials, Fn &&fn) {
  std::shared_ptr<ctxdb_db> h;
  std::string data_dir;
  if (db) {
    h = live_handle(db);
    if (!h)
      return fail(nullptr, Code::kMisuse, "the ctxdb handle is not open (closed, or not a handle)");
    std::lock_guard lock(h->mu);
    if (!h->engine) return fail(nullptr, Code::kMisuse, "the ctxdb handle is closed");
    data_dir = h->engine->tokenizer_data_dir();
  }
  try {
    std::string_view name = arg(encoding, enc_len, "encoding");
    if (name.empty()) name = "o200k_base";
    ctxdb::json::require_utf8(name, "encoding");
    std::string_view t = arg(text, len, "text");
    ctxdb::token::Specials mode;
    switch (specials) {
    case CTXDB_SPECIALS_DISALLOW: mode = ctxdb::token::Specials::kDisallow; break;
    case CTXDB_SPECIALS_ALLOW: mode = ctxdb::token::Specials::kAllow; break;
    case CTXDB_SPECIALS_TEXT: mode = ctxdb::token::Specials::kText; break;
    default:
      throw Error(Code::kInvalidArg,
                  "specials must be CTXDB_SPECIALS_DISALLOW, _ALLOW or _TEXT, not " +
                      std::to_string(specials));
    }
    fn(ctxdb::token::encoding_named(name, data_dir), t, mode);
    return CTXDB_OK;
  } catch (...) {
    return fail_current(h.get());
  }
}

} // namespace

extern "C" {

CTXDB_API int ctxdb_tokens_count(ctxdb_db *db, const char *encoding, size_t enc_len,
                                 const char *text, size_t len, int specials, int64_t *out_count) {
  if (!out_count) return fail(live_handle(db).get(), Code::kMisuse, "out_count is NULL");
  *out_count = 0;
  return with_tokenizer(db, encoding, enc_len, text, len, specials,
                        [&](const ctxdb::token::Bpe &bpe, std::string_view t,
                            ctxdb::token::Specials mode) { *out_count = bpe.count(t, mode); });
}

CTXDB_API int ctxdb_tokens_encode(ctxdb_db *db, const char *encoding, size_t enc_len,
                                  const char *text, size_t len, int specials, uint32_t **out_ids,
                                  size_t *out_n) {
  if (out_n) *out_n = 0;
  if (!out_ids || !out_n)
    return fail(live_handle(db).get(), Code::kMisuse,
                out_ids ? "out_n is NULL" : "out_ids is NULL");
  *out_ids = nullptr;
  return with_tokenizer(
      db, encoding, enc_len, text, len, specials,
      [&](const ctxdb::token::Bpe &bpe, std::string_view t, ctxdb::token::Specials mode) {
        std::vector<uint32_t> ids;
        bpe.encode(t, mode, ids);
        auto *buf = static_cast<uint32_t *>(std::malloc((ids.size() + 1) * sizeof(uint32_t)));
        if (!buf) throw std::bad_alloc();
        // An empty text has no ids, and memcpy from a vector's null data is
        // undefined even for 0 bytes.
        if (!ids.empty()) std::memcpy(buf, ids.data(), ids.size() * sizeof(uint32_t));
        *out_ids = buf;
        *out_n = ids.size();
      });
}

} // extern "C"

// ---- Compaction ---------------------------------------------------------------

struct ctxdb_summary_ctx {
  std::string summary;
  bool set = false;
  std::string error;
};

namespace {

// The summary context of the callback running on this thread.
thread_local ctxdb_summary_ctx *t_summary_ctx = nullptr;

int summary_ctx_put(ctxdb_summary_ctx *ctx, const char *p, size_t len, bool is_summary) {
  if (!ctx || ctx != t_summary_ctx)
    return fail(nullptr, Code::kMisuse, "the summary context is not that of a running summarizer");
  if (!p && len) return fail(nullptr, Code::kMisuse, "the text is NULL but its length is not 0");
  try {
    (is_summary ? ctx->summary : ctx->error).assign(p ? p : "", len);
    if (is_summary) ctx->set = true;
    return CTXDB_OK;
  } catch (...) {
    return fail_current(nullptr);
  }
}

// The C callback as the engine's summarizer: it throws when the callback
// fails, which the compactor records as the failed check "summarizer".
struct CallbackSummarizer {
  ctxdb_summarize_fn fn;
  void *user_data;
  const ctxdb_db *db;
  std::string operator()(std::string_view plan) const {
    ctxdb_summary_ctx ctx;
    struct Scope {
      ctxdb_summary_ctx *prev_ctx = t_summary_ctx;
      const ctxdb_db *prev_db = t_in_callback;
      ~Scope() {
        t_summary_ctx = prev_ctx;
        t_in_callback = prev_db;
      }
    } scope;
    t_summary_ctx = &ctx;
    t_in_callback = db;
    int rc = fn(user_data, plan.data(), plan.size(), &ctx);
    try {
      ctxdb::json::require_utf8(ctx.error, "error");
    } catch (const Error &) {
      ctx.error = "(its message is not UTF-8)";
    }
    if (rc != CTXDB_OK)
      throw Error(Code::kInternal, std::string("it returned ") + ctxdb_errstr(rc) +
                                       (ctx.error.empty() ? "" : ": " + ctx.error));
    if (!ctx.set) throw Error(Code::kInternal, "it returned CTXDB_OK without ctxdb_summary_set");
    return std::move(ctx.summary);
  }
};

// A compaction call taking (session, policy): `call` is an Engine method.
using PolicyCall = std::string (ctxdb::Engine::*)(std::string_view, std::string_view);

int policy_call(ctxdb_db *db, const char *session_id, size_t id_len, const char *policy_json,
                size_t len, char **out, size_t *out_len, PolicyCall call) {
  return with_output(db, out, out_len, [&](ctxdb::Engine &e) {
    std::string_view sid = id_arg(session_id, id_len, "session_id");
    return (e.*call)(sid, arg(policy_json, len, "policy_json"));
  });
}

} // namespace

extern "C" {

CTXDB_API int ctxdb_summary_set(ctxdb_summary_ctx *ctx, const char *summary_json, size_t len) {
  return summary_ctx_put(ctx, summary_json, len, true);
}

CTXDB_API int ctxdb_summary_error(ctxdb_summary_ctx *ctx, const char *message, size_t len) {
  return summary_ctx_put(ctx, message, len, false);
}

CTXDB_API int ctxdb_compact_should(ctxdb_db *db, const char *session_id, size_t id_len,
                                   const char *policy_json, size_t len, char **out,
                                   size_t *out_len) {
  return policy_call(db, session_id, id_len, policy_json, len, out, out_len,
                     &ctxdb::Engine::compact_should);
}

CTXDB_API int ctxdb_compact_plan(ctxdb_db *db, const char *session_id, size_t id_len,
                                 const char *policy_json, size_t len, char **out, size_t *out_len) {
  return policy_call(db, session_id, id_len, policy_json, len, out, out_len,
                     &ctxdb::Engine::compact_plan);
}

CTXDB_API int ctxdb_compact_commit(ctxdb_db *db, const char *session_id, size_t id_len,
                                   const char *plan_json, size_t plan_len, const char *summary_json,
                                   size_t summary_len, char **out, size_t *out_len) {
  return with_output(db, out, out_len, [&](ctxdb::Engine &e) {
    std::string_view sid = id_arg(session_id, id_len, "session_id");
    std::string_view plan = arg(plan_json, plan_len, "plan_json");
    // The summary's bytes are checked (summary_json), not rejected here:
    // a bad one is a failed check with its CompactionFailed record.
    return e.compact_commit(sid, plan, arg(summary_json, summary_len, "summary_json"));
  });
}

CTXDB_API int ctxdb_compact(ctxdb_db *db, const char *session_id, size_t id_len,
                            const char *policy_json, size_t len, ctxdb_summarize_fn fn,
                            void *user_data, char **out, size_t *out_len) {
  return with_output(db, out, out_len, [&](ctxdb::Engine &e) {
    std::string_view sid = id_arg(session_id, id_len, "session_id");
    std::string_view policy = arg(policy_json, len, "policy_json");
    if (!fn) return e.compact(sid, policy, nullptr);
    ctxdb::compact::Summarizer host = CallbackSummarizer{fn, user_data, db};
    return e.compact(sid, policy, &host);
  });
}

CTXDB_API int ctxdb_branch_summarize(ctxdb_db *db, const char *session_id, size_t id_len,
                                     const char *from_leaf, size_t from_len, const char *to_event,
                                     size_t to_len, char **out, size_t *out_len) {
  return with_output(db, out, out_len, [&](ctxdb::Engine &e) {
    std::string_view sid = id_arg(session_id, id_len, "session_id");
    std::string_view from = id_arg(from_leaf, from_len, "from_leaf");
    return e.branch_summarize(sid, from, id_arg(to_event, to_len, "to_event"));
  });
}

CTXDB_API int ctxdb_compactions_list(ctxdb_db *db, const char *session_id, size_t id_len,
                                     const char *branch, size_t branch_len, char **out,
                                     size_t *out_len) {
  return branch_view(db, session_id, id_len, branch, branch_len, out, out_len,
                     &ctxdb::Engine::compactions);
}

// ---- provider responses ------------------------------------------------------

CTXDB_API int ctxdb_response_record(ctxdb_db *db, const char *session_id, size_t id_len,
                                    const char *options_json, size_t opt_len, const char *response,
                                    size_t resp_len, char **out, size_t *out_len) {
  return with_output(db, out, out_len, [&](ctxdb::Engine &e) {
    return e.record_response(id_arg(session_id, id_len, "session_id"),
                             arg(options_json, opt_len, "options_json"),
                             arg(response, resp_len, "response"));
  });
}

} // extern "C"

// ---- for the other capi/*.cpp files (capi/handle.hpp) ----------------------

namespace ctxdb::capi {

std::shared_ptr<ctxdb_db> live_handle(const ctxdb_db *db) { return ::live_handle(db); }
int fail(ctxdb_db *h, Code code, const std::string &message) { return ::fail(h, code, message); }
int fail_current(ctxdb_db *h) { return ::fail_current(h); }
std::string_view arg(const char *p, size_t n, const char *name) { return ::arg(p, n, name); }
void put_out(const std::string &s, char **out, size_t *out_len) { ::put_out(s, out, out_len); }

int with_handle(const std::shared_ptr<ctxdb_db> &h, const std::function<void(ctxdb_db &)> &fn) {
  if (h->owner == std::this_thread::get_id()) return reentered(h.get());
  std::lock_guard lock(h->mu);
  if (!h->engine) return ::fail(nullptr, Code::kMisuse, "the ctxdb handle is closed");
  OwnerMark mark(*h);
  try {
    fn(*h);
    return CTXDB_OK;
  } catch (...) {
    return ::fail_current(h.get());
  }
}

} // namespace ctxdb::capi
