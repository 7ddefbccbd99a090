// ctxdb.hpp -- a header-only C++ RAII wrapper over the C ABI in ctxdb.h.
//
// It adds ownership and exceptions, never logic: every method is one C call.
// Failures throw ctxdb::Error carrying the status code and the message.
// JSON goes in and out as strings; parse it with the JSON library you use.
#ifndef CTXDB_HPP
#define CTXDB_HPP

#include <ctxdb/ctxdb.h>

#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ctxdb {
// An inline namespace keeps these names distinct from the engine's own
// (they are ctxdb::client::...) while hosts write ctxdb::Database.
inline namespace client {

class Error : public std::runtime_error {
public:
  Error(int code, const std::string &message) : std::runtime_error(message), code_(code) {}
  int code() const noexcept { return code_; }
  const char *name() const noexcept { return ctxdb_errstr(code_); }

private:
  int code_;
};

namespace detail {
inline void check(int rc, const ctxdb_db *db) {
  if (rc != CTXDB_OK) throw Error(rc, ctxdb_errmsg(db));
}

// Takes ownership of a buffer returned by ctxdb and copies it out.
inline std::string take(char *buf, size_t len) {
  std::string s(buf, len);
  ctxdb_free(buf);
  return s;
}

// ---- Tokenizer: one body for the free functions and Database's methods.
inline int64_t count_tokens(ctxdb_db *db, std::string_view text, std::string_view encoding,
                            int specials) {
  int64_t n = 0;
  check(ctxdb_tokens_count(db, encoding.data(), encoding.size(), text.data(), text.size(), specials,
                           &n),
        db);
  return n;
}

inline std::vector<uint32_t> encode_tokens(ctxdb_db *db, std::string_view text,
                                           std::string_view encoding, int specials) {
  uint32_t *ids = nullptr;
  size_t n = 0;
  check(ctxdb_tokens_encode(db, encoding.data(), encoding.size(), text.data(), text.size(),
                            specials, &ids, &n),
        db);
  std::vector<uint32_t> out(ids, ids + n);
  ctxdb_free(ids);
  return out;
}
} // namespace detail

// ---- Tokenizer --------------------------------------------------------------
// Exact token counts without a database: CTXDB_TOKENIZER_DATA names the
// directory of the rank files. specials: CTXDB_SPECIALS_DISALLOW (throws
// when the text holds a special token), _ALLOW or _TEXT.
inline int64_t count_tokens(std::string_view text, std::string_view encoding = "o200k_base",
                            int specials = CTXDB_SPECIALS_DISALLOW) {
  return detail::count_tokens(nullptr, text, encoding, specials);
}

inline std::vector<uint32_t> encode_tokens(std::string_view text,
                                           std::string_view encoding = "o200k_base",
                                           int specials = CTXDB_SPECIALS_DISALLOW) {
  return detail::encode_tokens(nullptr, text, encoding, specials);
}

// A streaming cursor; rows are borrowed until the next call to next().
class Iter {
public:
  explicit Iter(ctxdb_iter *it) noexcept : it_(it) {}
  Iter(Iter &&o) noexcept : it_(std::exchange(o.it_, nullptr)) {}
  Iter &operator=(Iter &&o) noexcept {
    if (this != &o) {
      ctxdb_iter_free(it_);
      it_ = std::exchange(o.it_, nullptr);
    }
    return *this;
  }
  Iter(const Iter &) = delete;
  Iter &operator=(const Iter &) = delete;
  ~Iter() { ctxdb_iter_free(it_); }

  // Sets row and returns true, or returns false at the end.
  bool next(std::string_view &row) {
    const char *p = nullptr;
    size_t n = 0;
    int rc = ctxdb_iter_next(it_, &p, &n);
    if (rc == CTXDB_ROW) {
      row = std::string_view(p, n);
      return true;
    }
    if (rc == CTXDB_DONE) return false;
    throw Error(rc, ctxdb_errmsg(nullptr));
  }

private:
  ctxdb_iter *it_;
};

// A streaming put (ctxdb_artifact_writer_*): write() pieces, then
// commit() for the artifact JSON. Destroyed uncommitted, it aborts: nothing
// of it is stored. While it is open, other calls on its Database throw
// (CTXDB_MISUSE).
class ArtifactWriter {
public:
  explicit ArtifactWriter(ctxdb_artifact_writer *w) noexcept : w_(w) {}
  ArtifactWriter(ArtifactWriter &&o) noexcept : w_(std::exchange(o.w_, nullptr)) {}
  ArtifactWriter &operator=(ArtifactWriter &&o) noexcept {
    if (this != &o) {
      ctxdb_artifact_writer_free(w_);
      w_ = std::exchange(o.w_, nullptr);
    }
    return *this;
  }
  ArtifactWriter(const ArtifactWriter &) = delete;
  ArtifactWriter &operator=(const ArtifactWriter &) = delete;
  ~ArtifactWriter() { ctxdb_artifact_writer_free(w_); }

  void write(std::string_view bytes) {
    // errmsg(NULL): the thread's last failure, also when w_ is not live.
    detail::check(ctxdb_artifact_writer_write(w_, bytes.data(), bytes.size()), nullptr);
  }
  std::string commit() {
    char *out = nullptr;
    size_t n = 0;
    detail::check(ctxdb_artifact_writer_commit(w_, &out, &n), nullptr);
    return detail::take(out, n);
  }
  // Rolls the put back now (as destruction does).
  void abort() noexcept { ctxdb_artifact_writer_free(std::exchange(w_, nullptr)); }

private:
  ctxdb_artifact_writer *w_;
};

class Database {
public:
  static Database open(const std::string &path, std::string_view config = {}) {
    ctxdb_db *db = nullptr;
    detail::check(ctxdb_open(path.c_str(), config.data(), config.size(), &db), nullptr);
    return Database(db);
  }

  Database(Database &&o) noexcept : db_(std::exchange(o.db_, nullptr)) {}
  Database &operator=(Database &&o) noexcept {
    if (this != &o) {
      ctxdb_close(db_);
      db_ = std::exchange(o.db_, nullptr);
    }
    return *this;
  }
  Database(const Database &) = delete;
  Database &operator=(const Database &) = delete;
  ~Database() { ctxdb_close(db_); }

  void close() {
    ctxdb_db *db = std::exchange(db_, nullptr);
    if (db) detail::check(ctxdb_close(db), nullptr);
  }

  ctxdb_db *handle() const noexcept { return db_; }

  std::string session_create(std::string_view json) {
    char *out = nullptr;
    size_t n = 0;
    detail::check(ctxdb_session_create(db_, json.data(), json.size(), &out, &n), db_);
    return detail::take(out, n);
  }

  std::string session_get(std::string_view id) {
    char *out = nullptr;
    size_t n = 0;
    detail::check(ctxdb_session_get(db_, id.data(), id.size(), &out, &n), db_);
    return detail::take(out, n);
  }

  std::string session_list() {
    char *out = nullptr;
    size_t n = 0;
    detail::check(ctxdb_session_list(db_, &out, &n), db_);
    return detail::take(out, n);
  }

  std::string append(std::string_view session_id, std::string_view event) {
    char *out = nullptr;
    size_t n = 0;
    detail::check(ctxdb_append(db_, session_id.data(), session_id.size(), event.data(),
                               event.size(), &out, &n),
                  db_);
    return detail::take(out, n);
  }

  // ctxdb_response_record: a provider's response (or its NDJSON stream)
  // appended as an AssistantMessageCreated; the stored event.
  std::string record_response(std::string_view session_id, std::string_view options_json,
                              std::string_view response) {
    char *out = nullptr;
    size_t n = 0;
    detail::check(ctxdb_response_record(db_, session_id.data(), session_id.size(),
                                        options_json.data(), options_json.size(), response.data(),
                                        response.size(), &out, &n),
                  db_);
    return detail::take(out, n);
  }

  std::string append_batch(std::string_view session_id, std::string_view ndjson) {
    char *out = nullptr;
    size_t n = 0;
    detail::check(ctxdb_append_batch(db_, session_id.data(), session_id.size(), ndjson.data(),
                                     ndjson.size(), &out, &n),
                  db_);
    return detail::take(out, n);
  }

  std::string event_get(std::string_view id) {
    char *out = nullptr;
    size_t n = 0;
    detail::check(ctxdb_event_get(db_, id.data(), id.size(), &out, &n), db_);
    return detail::take(out, n);
  }

  // One session's events with from_seq <= seq <= to_seq (to_seq < 0: all).
  Iter events(std::string_view session_id, int64_t from_seq = 1, int64_t to_seq = -1) {
    ctxdb_iter *it = nullptr;
    // A non-NULL pointer even for "": NULL would mean every session.
    detail::check(ctxdb_events_iter(db_, session_id.empty() ? "" : session_id.data(),
                                    session_id.size(), from_seq, to_seq, &it),
                  db_);
    return Iter(it);
  }

  // Every event of every session in append order: the export stream's events.
  Iter all_events() {
    ctxdb_iter *it = nullptr;
    detail::check(ctxdb_events_iter(db_, nullptr, 0, 0, -1, &it), db_);
    return Iter(it);
  }

  // The export stream (what import_ndjson takes): the events of one
  // session (or of all), then the artifacts they refer to.
  Iter export_stream(std::optional<std::string_view> session_id = {}) {
    ctxdb_iter *it = nullptr;
    const char *id = session_id ? session_id->data() : nullptr;
    detail::check(ctxdb_export(db_, id, session_id ? session_id->size() : 0, &it), db_);
    return Iter(it);
  }

  // ---- the session tree ----

  // Forks a branch; spec e.g. {"event_id":"evt_...","kind":"what_if","name":"b"}.
  std::string branch_fork(std::string_view session_id, std::string_view spec) {
    char *out = nullptr;
    size_t n = 0;
    detail::check(ctxdb_branch_fork(db_, session_id.data(), session_id.size(), spec.data(),
                                    spec.size(), &out, &n),
                  db_);
    return detail::take(out, n);
  }

  // The session's branches as a JSON array, main first.
  std::string branch_list(std::string_view session_id) {
    char *out = nullptr;
    size_t n = 0;
    detail::check(ctxdb_branch_list(db_, session_id.data(), session_id.size(), &out, &n), db_);
    return detail::take(out, n);
  }

  // The events on a branch's path, root to leaf; no branch: main. A branch
  // is its id or a name unique in the session.
  Iter branch_path(std::string_view session_id, std::optional<std::string_view> branch = {}) {
    ctxdb_iter *it = nullptr;
    // "" stays non-NULL (an error: empty name); only nullopt means main.
    const char *b = branch ? (branch->empty() ? "" : branch->data()) : nullptr;
    detail::check(ctxdb_branch_path(db_, session_id.data(), session_id.size(), b,
                                    branch ? branch->size() : 0, &it),
                  db_);
    return Iter(it);
  }

  // {"event_id", "events": [...], "sessions": [...]}: what follows an event.
  std::string event_children(std::string_view event_id) {
    char *out = nullptr;
    size_t n = 0;
    detail::check(ctxdb_event_children(db_, event_id.data(), event_id.size(), &out, &n), db_);
    return detail::take(out, n);
  }

  // ---- views of a branch (JSON arrays; no branch: main) ----

  // The messages of a branch's path: role, typed blocks, tokens.
  std::string messages(std::string_view session_id, std::optional<std::string_view> branch = {}) {
    return branch_view(ctxdb_messages_list, session_id, branch);
  }

  // The tool calls, each with its status and result as seen from the branch.
  std::string tool_calls(std::string_view session_id, std::optional<std::string_view> branch = {}) {
    return branch_view(ctxdb_tool_calls_list, session_id, branch);
  }

  // The files touched: last read, last write and every change.
  std::string files(std::string_view session_id, std::optional<std::string_view> branch = {}) {
    return branch_view(ctxdb_files_list, session_id, branch);
  }

  // ---- state and stats ----

  // The agent state; query e.g. {"branch_id":"alt"} or {"at":"evt_..."}
  // (empty: main's current state).
  std::string state(std::string_view session_id, std::string_view query = {}) {
    char *out = nullptr;
    size_t n = 0;
    detail::check(ctxdb_state_get(db_, session_id.data(), session_id.size(), query.data(),
                                  query.size(), &out, &n),
                  db_);
    return detail::take(out, n);
  }

  // One session's stats; no session: every session's totals.
  std::string stats(std::optional<std::string_view> session_id = {}) {
    char *out = nullptr;
    size_t n = 0;
    // "" stays non-NULL (an error: empty id); only nullopt means all.
    const char *id = session_id ? (session_id->empty() ? "" : session_id->data()) : nullptr;
    detail::check(ctxdb_stats_get(db_, id, session_id ? session_id->size() : 0, &out, &n), db_);
    return detail::take(out, n);
  }

  std::string verify(std::optional<std::string_view> session_id = {}) {
    char *out = nullptr;
    size_t n = 0;
    // "" stays non-NULL (an error: empty id); only nullopt means all.
    const char *id = session_id ? (session_id->empty() ? "" : session_id->data()) : nullptr;
    size_t id_len = session_id ? session_id->size() : 0;
    detail::check(ctxdb_verify(db_, id, id_len, &out, &n), db_);
    return detail::take(out, n);
  }

  // verify with options (verify_options.schema.json), e.g.
  // R"({"artifacts":"full","anchor":...})".
  std::string verify_with(std::string_view options) {
    char *out = nullptr;
    size_t n = 0;
    detail::check(ctxdb_verify_with(db_, options.data(), options.size(), &out, &n), db_);
    return detail::take(out, n);
  }

  // A digest of the whole history to keep outside the file (anchor.schema.json).
  std::string anchor() {
    char *out = nullptr;
    size_t n = 0;
    detail::check(ctxdb_anchor(db_, nullptr, 0, &out, &n), db_);
    return detail::take(out, n);
  }

  // Replays the log into every derived table; options e.g. {"check":true}.
  std::string rebuild(std::string_view options = {}) {
    char *out = nullptr;
    size_t n = 0;
    detail::check(ctxdb_rebuild(db_, options.data(), options.size(), &out, &n), db_);
    return detail::take(out, n);
  }

  // Merges each full-text index into one segment; options e.g. "{}".
  std::string optimize(std::string_view options = {}) {
    char *out = nullptr;
    size_t n = 0;
    detail::check(ctxdb_optimize(db_, options.data(), options.size(), &out, &n), db_);
    return detail::take(out, n);
  }

  std::string import_ndjson(std::string_view ndjson) {
    char *out = nullptr;
    size_t n = 0;
    detail::check(ctxdb_import(db_, ndjson.data(), ndjson.size(), &out, &n), db_);
    return detail::take(out, n);
  }

  // Another agent's session files imported (ctxdb_transcript_import);
  // options e.g. {"format":"pi","path":"/home/me/.pi/agent"}. The report
  // lists each file: imported, unchanged, failed or changed.
  std::string transcript_import(std::string_view options) {
    char *out = nullptr;
    size_t n = 0;
    detail::check(ctxdb_transcript_import(db_, options.data(), options.size(), &out, &n), db_);
    return detail::take(out, n);
  }

  // ---- artifacts ----

  // Stores bytes; meta e.g. {"kind":"command_log","name":"build.log"}.
  // Returns the artifact JSON (its "id" is what the other calls take).
  std::string artifact_put(std::string_view data, std::string_view meta = {}) {
    char *out = nullptr;
    size_t n = 0;
    detail::check(
        ctxdb_artifact_put(db_, data.data(), data.size(), meta.data(), meta.size(), &out, &n), db_);
    return detail::take(out, n);
  }

  // A streaming put with the same meta, for content too large for memory.
  ArtifactWriter artifact_writer(std::string_view meta = {}) {
    ctxdb_artifact_writer *w = nullptr;
    detail::check(ctxdb_artifact_writer_open(db_, meta.data(), meta.size(), &w), db_);
    return ArtifactWriter(w);
  }

  // The bytes [offset, offset+length); length -1: to the end.
  std::string artifact_read(std::string_view id, int64_t offset = 0, int64_t length = -1) {
    void *out = nullptr;
    size_t n = 0;
    detail::check(ctxdb_artifact_read(db_, id.data(), id.size(), offset, length, &out, &n), db_);
    return detail::take(static_cast<char *>(out), n);
  }

  std::string artifact_info(std::string_view id) {
    char *out = nullptr;
    size_t n = 0;
    detail::check(ctxdb_artifact_info(db_, id.data(), id.size(), &out, &n), db_);
    return detail::take(out, n);
  }

  // Every artifact, or those the session's events refer to (JSON array).
  std::string artifact_list(std::optional<std::string_view> session_id = {}) {
    char *out = nullptr;
    size_t n = 0;
    // "" stays non-NULL (an error: empty id); only nullopt means all.
    const char *id = session_id ? (session_id->empty() ? "" : session_id->data()) : nullptr;
    detail::check(ctxdb_artifact_list(db_, id, session_id ? session_id->size() : 0, &out, &n), db_);
    return detail::take(out, n);
  }

  // Lines first .. first+count-1 (1-based); count -1: to the end.
  std::string artifact_lines(std::string_view id, int64_t first, int64_t count = -1) {
    char *out = nullptr;
    size_t n = 0;
    detail::check(ctxdb_artifact_lines(db_, id.data(), id.size(), first, count, &out, &n), db_);
    return detail::take(out, n);
  }

  // spec e.g. {"mode":"tail","lines":20}; returns {"id","text",...}.
  std::string artifact_preview(std::string_view id, std::string_view spec = {}) {
    char *out = nullptr;
    size_t n = 0;
    detail::check(
        ctxdb_artifact_preview(db_, id.data(), id.size(), spec.data(), spec.size(), &out, &n), db_);
    return detail::take(out, n);
  }

  // options e.g. {"before":2,"after":2,"max_matches":10,"ignore_case":true}.
  std::string artifact_search(std::string_view id, std::string_view pattern,
                              std::string_view options = {}) {
    char *out = nullptr;
    size_t n = 0;
    detail::check(ctxdb_artifact_search(db_, id.data(), id.size(), pattern.data(), pattern.size(),
                                        options.data(), options.size(), &out, &n),
                  db_);
    return detail::take(out, n);
  }

  // ---- the context compiler ----

  // A compile request (compile_request.schema.json), e.g.
  // {"session_id":"ses_1","max_tokens":8000,"format":"anthropic.messages"};
  // returns the bundle in the request's format (canonical: bundle JSON).
  std::string compile(std::string_view request) {
    char *out = nullptr;
    size_t n = 0;
    detail::check(ctxdb_compile(db_, request.data(), request.size(), &out, &n), db_);
    return detail::take(out, n);
  }

  // A canonical bundle in another format: "openai.chat",
  // "openai.responses", "anthropic.messages", "gemini.generate_content",
  // "ai.sdk" (or "canonical").
  std::string bundle_convert(std::string_view bundle, std::string_view format) {
    char *out = nullptr;
    size_t n = 0;
    detail::check(ctxdb_bundle_convert(db_, bundle.data(), bundle.size(), format.data(),
                                       format.size(), &out, &n),
                  db_);
    return detail::take(out, n);
  }

  // The handle's token counter (see ctxdb_token_counter_set); fn nullptr
  // restores the built-in estimator. user_data must outlive the setting.
  void set_token_counter(std::string_view name, ctxdb_token_count_fn fn,
                         void *user_data = nullptr) {
    detail::check(ctxdb_token_counter_set(db_, name.data(), name.size(), fn, user_data), db_);
  }

  // ---- Search ----
  // Session search; options e.g. {"session_id":"s","role":"tool","limit":5}.
  std::string search(std::string_view query, std::string_view options = {}) {
    char *out = nullptr;
    size_t n = 0;
    detail::check(
        ctxdb_search(db_, query.data(), query.size(), options.data(), options.size(), &out, &n),
        db_);
    return detail::take(out, n);
  }

  // --- Memory (ctxdb.h: ctxdb_memory_*) ---------------------------------
  std::string memory_write(std::string_view session_id, std::string_view memory_json) {
    return call_json(ctxdb_memory_write, session_id, memory_json);
  }
  std::string memory_update(std::string_view memory_id, std::string_view update_json) {
    return call_json(ctxdb_memory_update, memory_id, update_json);
  }
  // options e.g. {"mode":"purge"}.
  std::string memory_forget(std::string_view memory_id, std::string_view options = {}) {
    return call_json(ctxdb_memory_forget, memory_id, options);
  }
  std::string memory_get(std::string_view memory_id) {
    char *out = nullptr;
    size_t n = 0;
    detail::check(ctxdb_memory_get(db_, memory_id.data(), memory_id.size(), &out, &n), db_);
    return detail::take(out, n);
  }
  std::string memory_list(std::string_view query = {}) {
    return call_json(ctxdb_memory_list, query);
  }
  std::string memory_retrieve(std::string_view query) {
    return call_json(ctxdb_memory_retrieve, query);
  }
  std::string memory_promote(std::string_view session_id, std::string_view candidates_json) {
    return call_json(ctxdb_memory_promote, session_id, candidates_json);
  }

  // ---- Tokenizer: as the free functions, with the database's
  // tokenizer_data_dir.
  int64_t count_tokens(std::string_view text, std::string_view encoding = "o200k_base",
                       int specials = CTXDB_SPECIALS_DISALLOW) {
    return detail::count_tokens(db_, text, encoding, specials);
  }

  std::vector<uint32_t> encode_tokens(std::string_view text,
                                      std::string_view encoding = "o200k_base",
                                      int specials = CTXDB_SPECIALS_DISALLOW) {
    return detail::encode_tokens(db_, text, encoding, specials);
  }

  // ---- compaction (JSON in and out; policy empty: {}) ----

  // Whether to compact: the context size, the limits, the net benefit.
  std::string compact_should(std::string_view session_id, std::string_view policy = {}) {
    char *out = nullptr;
    size_t n = 0;
    detail::check(ctxdb_compact_should(db_, session_id.data(), session_id.size(), policy.data(),
                                       policy.size(), &out, &n),
                  db_);
    return detail::take(out, n);
  }

  // The plan: the cut, the range, the obligations, the transcript.
  std::string compact_plan(std::string_view session_id, std::string_view policy = {}) {
    char *out = nullptr;
    size_t n = 0;
    detail::check(ctxdb_compact_plan(db_, session_id.data(), session_id.size(), policy.data(),
                                     policy.size(), &out, &n),
                  db_);
    return detail::take(out, n);
  }

  // Checks a summary made for a plan and commits it.
  std::string compact_commit(std::string_view session_id, std::string_view plan,
                             std::string_view summary) {
    char *out = nullptr;
    size_t n = 0;
    detail::check(ctxdb_compact_commit(db_, session_id.data(), session_id.size(), plan.data(),
                                       plan.size(), summary.data(), summary.size(), &out, &n),
                  db_);
    return detail::take(out, n);
  }

  // A summarizer: the plan JSON in, the summary JSON out; throw to fail.
  using Summarizer = std::function<std::string(std::string_view plan)>;

  // plan -> summarize -> check -> commit; no summarizer: the built-in one.
  std::string compact(std::string_view session_id, std::string_view policy = {},
                      const Summarizer *summarizer = nullptr) {
    char *out = nullptr;
    size_t n = 0;
    detail::check(ctxdb_compact(db_, session_id.data(), session_id.size(), policy.data(),
                                policy.size(), summarizer ? &call_summarizer : nullptr,
                                const_cast<Summarizer *>(summarizer), &out, &n),
                  db_);
    return detail::take(out, n);
  }

  // A summary of the path abandoned at from_leaf, appended at to_event.
  std::string branch_summarize(std::string_view session_id, std::string_view from_leaf,
                               std::string_view to_event) {
    char *out = nullptr;
    size_t n = 0;
    detail::check(ctxdb_branch_summarize(db_, session_id.data(), session_id.size(),
                                         from_leaf.data(), from_leaf.size(), to_event.data(),
                                         to_event.size(), &out, &n),
                  db_);
    return detail::take(out, n);
  }

  // The compactions on a branch's path, oldest first.
  std::string compactions(std::string_view session_id,
                          std::optional<std::string_view> branch = {}) {
    return branch_view(ctxdb_compactions_list, session_id, branch);
  }

private:
  // No exception crosses the C ABI: a throwing summarizer becomes an error
  // the engine records.
  static int call_summarizer(void *user_data, const char *plan, size_t plan_len,
                             ctxdb_summary_ctx *ctx) {
    try {
      std::string summary =
          (*static_cast<Summarizer *>(user_data))(std::string_view(plan, plan_len));
      return ctxdb_summary_set(ctx, summary.data(), summary.size());
    } catch (const std::exception &e) {
      ctxdb_summary_error(ctx, e.what(), std::char_traits<char>::length(e.what()));
    } catch (...) {
      ctxdb_summary_error(ctx, "unknown exception", 17);
    }
    return CTXDB_INTERNAL;
  }

  // Calls taking one or two (text, len) pairs and returning JSON.
  template <class Fn> std::string call_json(Fn fn, std::string_view a) {
    char *out = nullptr;
    size_t n = 0;
    detail::check(fn(db_, a.data(), a.size(), &out, &n), db_);
    return detail::take(out, n);
  }
  template <class Fn> std::string call_json(Fn fn, std::string_view a, std::string_view b) {
    char *out = nullptr;
    size_t n = 0;
    detail::check(fn(db_, a.data(), a.size(), b.data(), b.size(), &out, &n), db_);
    return detail::take(out, n);
  }

  using BranchViewFn = int (*)(ctxdb_db *, const char *, size_t, const char *, size_t, char **,
                               size_t *);

  std::string branch_view(BranchViewFn fn, std::string_view session_id,
                          std::optional<std::string_view> branch) {
    char *out = nullptr;
    size_t n = 0;
    // "" stays non-NULL (an error: empty name); only nullopt means main.
    const char *b = branch ? (branch->empty() ? "" : branch->data()) : nullptr;
    detail::check(
        fn(db_, session_id.data(), session_id.size(), b, branch ? branch->size() : 0, &out, &n),
        db_);
    return detail::take(out, n);
  }

  explicit Database(ctxdb_db *db) noexcept : db_(db) {}
  ctxdb_db *db_;
};

} // namespace client
} // namespace ctxdb

#endif // CTXDB_HPP
