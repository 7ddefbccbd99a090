// bindings/node/src/addon.cc -- the native half of the Node binding.
//
// One wrapped object per C handle: `Database` holds a ctxdb_db*, `Iterator`
// a ctxdb_iter*. The classes only marshal: they pass strings and bytes to
// the C ABI unchanged, return the engine's JSON text as JS strings (the JS
// layer parses it), and turn a failed status into a thrown Error carrying
// `.code` (the numeric status), `.codeName` (ctxdb_errstr) and the message
// of ctxdb_errmsg. Argument checks, defaults and the CtxdbError class live in
// lib/*.js.
//
// Lifetimes. The handle lives in a DbState shared (std::shared_ptr) by the
// Database wrapper, by every Iterator opened on it and by every async worker
// in flight, so finalizers may run in any order:
//  - close() frees the open iterators, then the handle; while async workers
//    are still running it only marks the state closed and the last worker to
//    finish closes the handle (ctxdb_close must not race a call in flight);
//  - a finalizer frees what was not freed explicitly (Database: drops its
//    share; Iterator: ctxdb_iter_free; the last share closes the handle).
// Every buffer the C ABI returns is copied into a JS string (or, off the
// main thread, a std::string) and freed with ctxdb_free exactly once.
#include <napi.h>

#include <ctxdb/ctxdb.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <unordered_set>
#include <utility>

namespace {

class Iterator;

// Error helpers -------------------------------------------------------------

Napi::Error StatusError(Napi::Env env, int code, const std::string &message) {
  Napi::Error err = Napi::Error::New(env, message);
  err.Set("code", Napi::Number::New(env, code));
  err.Set("codeName", Napi::String::New(env, ctxdb_errstr(code)));
  return err;
}

std::string ErrMsg(const ctxdb_db *db) {
  const char *m = ctxdb_errmsg(db);
  return m && *m ? std::string(m) : std::string("ctxdb call failed");
}

// What a JS token counter threw during the current call, as text to add to
// the call's message (empty when nothing), and as the error's cause.
std::string TakeCounterFailure(Napi::Env env, Napi::Value *cause);

[[noreturn]] void ThrowStatus(Napi::Env env, int code, const ctxdb_db *db) {
  std::string message = ErrMsg(db);
  Napi::Value cause;
  message += TakeCounterFailure(env, &cause);
  Napi::Error err = StatusError(env, code, message);
  if (!cause.IsEmpty()) err.Set("cause", cause);
  throw err;
}

[[noreturn]] void ThrowClosed(Napi::Env env) {
  throw StatusError(env, CTXDB_MISUSE, "the database is closed");
}

// Takes ownership of a buffer returned by ctxdb; frees it exactly once.
struct OwnedBuf {
  char *p = nullptr;
  size_t n = 0;
  OwnedBuf() = default;
  OwnedBuf(const OwnedBuf &) = delete;
  OwnedBuf &operator=(const OwnedBuf &) = delete;
  ~OwnedBuf() { ctxdb_free(p); }
  Napi::String ToJs(Napi::Env env) const { return Napi::String::New(env, p ? p : "", p ? n : 0); }
  std::string ToStd() const { return p ? std::string(p, n) : std::string(); }
};

// Bytes of a JS string (as UTF-8) or of a Buffer/Uint8Array (unchanged).
// A typed array is borrowed: valid for the duration of a synchronous call.
struct Bytes {
  std::string owned;
  const char *p = nullptr;
  size_t n = 0;

  void Own() {
    if (p != owned.data()) {
      owned.assign(p ? p : "", n);
      p = owned.data();
    }
  }
};

Bytes GetBytes(const Napi::CallbackInfo &info, size_t i, const char *what) {
  Napi::Env env = info.Env();
  Napi::Value v = info[i];
  Bytes b;
  if (v.IsString()) {
    // One pass: size the buffer for the worst case (3 UTF-8 bytes per UTF-16
    // unit) instead of asking N-API for the exact length first, which would
    // walk a megabyte batch twice.
    size_t units = 0;
    napi_get_value_string_utf16(env, v, nullptr, 0, &units);
    b.owned.resize(units * 3 + 1);
    size_t written = 0;
    napi_status st = napi_get_value_string_utf8(env, v, b.owned.data(), b.owned.size(), &written);
    if (st != napi_ok) throw Napi::Error::New(env, "cannot read the string as UTF-8");
    b.owned.resize(written);
    b.p = b.owned.data();
    b.n = b.owned.size();
    return b;
  }
  if (v.IsArray()) {
    // NDJSON given as its lines (strings or Uint8Arrays): written into one
    // buffer here, which spares JS a join of the whole batch.
    Napi::Array lines = v.As<Napi::Array>();
    size_t pos = 0;
    for (uint32_t k = 0; k < lines.Length(); ++k) {
      Napi::Value line = lines[k];
      if (k > 0) {
        b.owned.resize(pos + 1);
        b.owned[pos++] = '\n';
      }
      if (line.IsString()) {
        size_t units = 0, written = 0;
        napi_get_value_string_utf16(env, line, nullptr, 0, &units);
        b.owned.resize(pos + units * 3 + 1);
        if (napi_get_value_string_utf8(env, line, b.owned.data() + pos, units * 3 + 1, &written) !=
            napi_ok)
          throw Napi::Error::New(env, "cannot read a line as UTF-8");
        pos += written;
      } else if (line.IsTypedArray() &&
                 line.As<Napi::TypedArray>().TypedArrayType() == napi_uint8_array) {
        Napi::Uint8Array u8 = line.As<Napi::Uint8Array>();
        b.owned.resize(pos + u8.ByteLength());
        if (u8.ByteLength()) std::memcpy(b.owned.data() + pos, u8.Data(), u8.ByteLength());
        pos += u8.ByteLength();
      } else {
        throw Napi::TypeError::New(env,
                                   std::string(what) + " lines must be strings or Uint8Arrays");
      }
    }
    b.owned.resize(pos);
    b.p = b.owned.data();
    b.n = b.owned.size();
    return b;
  }
  if (v.IsTypedArray()) {
    Napi::TypedArray ta = v.As<Napi::TypedArray>();
    if (ta.TypedArrayType() == napi_uint8_array) {
      Napi::Uint8Array u8 = v.As<Napi::Uint8Array>();
      b.p = reinterpret_cast<const char *>(u8.Data());
      b.n = u8.ByteLength();
      if (!b.p) b.p = "";
      return b;
    }
  }
  throw Napi::TypeError::New(env,
                             std::string(what) + " must be a string, a Buffer or a Uint8Array");
}

std::string GetString(const Napi::CallbackInfo &info, size_t i, const char *what) {
  if (!info[i].IsString())
    throw Napi::TypeError::New(info.Env(), std::string(what) + " must be a string");
  return info[i].As<Napi::String>().Utf8Value();
}

// A string, or null/undefined for "none".
bool GetOptString(const Napi::CallbackInfo &info, size_t i, const char *what, std::string *out) {
  if (info[i].IsUndefined() || info[i].IsNull()) return false;
  *out = GetString(info, i, what);
  return true;
}

int64_t GetInt64(const Napi::CallbackInfo &info, size_t i, const char *what) {
  if (!info[i].IsNumber())
    throw Napi::TypeError::New(info.Env(), std::string(what) + " must be a number");
  return info[i].As<Napi::Number>().Int64Value();
}

// The buffer a ctxdb call writes through (out, out_len), as a JS string;
// call(&out, &out_len) returns the status, which throws unless CTXDB_OK.
// Tokenizer: (encoding, text, specials) at info[0..2] for
// ctxdb_tokens_count / _encode; db may be NULL (no database).
Napi::Value TokensCount(const Napi::CallbackInfo &info, ctxdb_db *db) {
  Napi::Env env = info.Env();
  std::string enc = GetString(info, 0, "encoding");
  Bytes text = GetBytes(info, 1, "text");
  int specials = int(GetInt64(info, 2, "specials"));
  int64_t n = 0;
  int rc = ctxdb_tokens_count(db, enc.data(), enc.size(), text.p, text.n, specials, &n);
  if (rc != CTXDB_OK) ThrowStatus(env, rc, db);
  return Napi::Number::New(env, double(n));
}

Napi::Value TokensEncode(const Napi::CallbackInfo &info, ctxdb_db *db) {
  Napi::Env env = info.Env();
  std::string enc = GetString(info, 0, "encoding");
  Bytes text = GetBytes(info, 1, "text");
  int specials = int(GetInt64(info, 2, "specials"));
  uint32_t *ids = nullptr;
  size_t n = 0;
  int rc = ctxdb_tokens_encode(db, enc.data(), enc.size(), text.p, text.n, specials, &ids, &n);
  if (rc != CTXDB_OK) ThrowStatus(env, rc, db);
  Napi::Uint32Array out = Napi::Uint32Array::New(env, n);
  if (n) std::memcpy(out.Data(), ids, n * sizeof(uint32_t));
  ctxdb_free(ids);
  return out;
}

template <class Call> Napi::Value Output(Napi::Env env, const ctxdb_db *db, Call &&call) {
  OwnedBuf out;
  int rc = call(&out.p, &out.n);
  if (rc != CTXDB_OK) ThrowStatus(env, rc, db);
  return out.ToJs(env);
}

// The per-environment data: the Iterator constructor.
struct AddonData {
  Napi::FunctionReference iterator_ctor;
  // Why a JS token counter failed during the call in progress (a thrown
  // error, or an answer that is not a count), until ThrowStatus reports it.
  bool counter_failed = false;
  std::string counter_failure;
  Napi::ObjectReference counter_error; // the thrown object, when it was one
};

// The shared state of one handle ---------------------------------------------

struct DbState {
  ctxdb_db *db = nullptr;
  bool closed = false; // close() was called: no new calls
  int pending = 0;     // async workers in flight (main thread only)
  std::unordered_set<Iterator *> iters;
  // setTokenCounter's function. CountTokens calls it on the main thread
  // only: async calls that may count are refused while it is set.
  Napi::FunctionReference counter;
  bool in_counter = false; // CountTokens is running it

  DbState() = default;
  DbState(const DbState &) = delete;
  DbState &operator=(const DbState &) = delete;
  ~DbState() { CloseNow(); }

  void CloseNow();
  // Closes now unless a worker is still using the handle; the last worker
  // closes it then (MaybeFinishClose).
  void RequestClose() {
    closed = true;
    if (pending == 0) CloseNow();
  }
  void MaybeFinishClose() {
    if (closed && pending == 0) CloseNow();
  }
};

// Iterator ---------------------------------------------------------------------

class Iterator : public Napi::ObjectWrap<Iterator> {
public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(
        env, "Iterator",
        {InstanceMethod<&Iterator::Next>("next"), InstanceMethod<&Iterator::Close>("close")});
  }

  explicit Iterator(const Napi::CallbackInfo &info) : Napi::ObjectWrap<Iterator>(info) {}

  ~Iterator() override { Release(); }

  void Attach(std::shared_ptr<DbState> state, ctxdb_iter *it) {
    state_ = std::move(state);
    it_ = it;
    state_->iters.insert(this);
  }

  // Called by DbState::CloseNow: the handle is going away.
  void Detach() {
    ctxdb_iter_free(it_);
    it_ = nullptr;
    db_closed_ = true;
  }

private:
  void Release() {
    if (it_) {
      ctxdb_iter_free(it_);
      it_ = nullptr;
    }
    if (state_) {
      state_->iters.erase(this);
      state_.reset();
    }
  }

  // The next row as a JSON string, or undefined at the end.
  Napi::Value Next(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    if (!it_) {
      if (db_closed_) ThrowClosed(env);
      if (!state_ && !done_) throw StatusError(env, CTXDB_MISUSE, "the iterator was never opened");
      return env.Undefined();
    }
    const char *row = nullptr;
    size_t len = 0;
    int rc = ctxdb_iter_next(it_, &row, &len);
    if (rc == CTXDB_ROW) return Napi::String::New(env, row, len);
    if (rc == CTXDB_DONE) {
      // Free at the end, not at GC: the engine's read state goes at once.
      done_ = true;
      Release();
      return env.Undefined();
    }
    std::string msg = ErrMsg(nullptr); // iterators report through errmsg(NULL)
    done_ = true;
    Release();
    throw StatusError(env, rc, msg);
  }

  Napi::Value Close(const Napi::CallbackInfo &info) {
    done_ = true;
    db_closed_ = false;
    Release();
    return info.Env().Undefined();
  }

  std::shared_ptr<DbState> state_;
  ctxdb_iter *it_ = nullptr;
  bool done_ = false;
  bool db_closed_ = false;
};

void DbState::CloseNow() {
  for (Iterator *it : iters) it->Detach();
  iters.clear();
  if (db) {
    ctxdb_close(db);
    db = nullptr;
  }
  closed = true;
}

// Async workers ------------------------------------------------------------------

// Runs one ctxdb call on the libuv thread pool and settles a promise with
// the engine's JSON text (or rejects with the status Error). All inputs are
// copied before the worker is queued; the message of a failure is read on
// the worker thread, where ctxdb_errmsg keeps it.
class CallWorker : public Napi::AsyncWorker {
public:
  enum class Kind {
    kAppendBatch,
    kImport,
    kTranscriptImport,
    kVerify,
    kVerifyWith,
    kRebuild,
    kOptimize,
    kCompile,
    kCompact,
    kRecord
  };

  // extra: a second text input (kRecord: the options JSON; data_ is the response).
  CallWorker(Napi::Env env, std::shared_ptr<DbState> state, Kind kind, std::string sid,
             bool has_sid, std::string data, std::string extra = {})
      : Napi::AsyncWorker(env, "ctxdb"), deferred_(Napi::Promise::Deferred::New(env)),
        state_(std::move(state)), db_(state_->db), kind_(kind), sid_(std::move(sid)),
        has_sid_(has_sid), data_(std::move(data)), extra_(std::move(extra)) {
    state_->pending++;
  }

  Napi::Promise Promise() const { return deferred_.Promise(); }

protected:
  void Execute() override {
    OwnedBuf out;
    switch (kind_) {
    case Kind::kAppendBatch:
      rc_ = ctxdb_append_batch(db_, sid_.data(), sid_.size(), data_.data(), data_.size(), &out.p,
                               &out.n);
      break;
    case Kind::kImport: rc_ = ctxdb_import(db_, data_.data(), data_.size(), &out.p, &out.n); break;
    case Kind::kTranscriptImport:
      rc_ = ctxdb_transcript_import(db_, data_.data(), data_.size(), &out.p, &out.n);
      break;
    case Kind::kVerify:
      rc_ = ctxdb_verify(db_, has_sid_ ? sid_.data() : nullptr, has_sid_ ? sid_.size() : 0, &out.p,
                         &out.n);
      break;
    case Kind::kVerifyWith: // data_: the options JSON
      rc_ = ctxdb_verify_with(db_, data_.data(), data_.size(), &out.p, &out.n);
      break;
    case Kind::kRebuild: // data_: the options JSON; empty is NULL/0 (no options)
      rc_ =
          ctxdb_rebuild(db_, data_.empty() ? nullptr : data_.data(), data_.size(), &out.p, &out.n);
      break;
    case Kind::kOptimize: rc_ = ctxdb_optimize(db_, nullptr, 0, &out.p, &out.n); break;
    case Kind::kCompile:
      rc_ = ctxdb_compile(db_, data_.data(), data_.size(), &out.p, &out.n);
      break;
    case Kind::kRecord:
      rc_ = ctxdb_response_record(db_, sid_.data(), sid_.size(), extra_.data(), extra_.size(),
                                  data_.data(), data_.size(), &out.p, &out.n);
      break;
    case Kind::kCompact: // data_: the policy JSON; the built-in summarizer
      rc_ = ctxdb_compact(db_, sid_.data(), sid_.size(), data_.data(), data_.size(), nullptr,
                          nullptr, &out.p, &out.n);
      break;
    }
    if (rc_ == CTXDB_OK)
      result_ = out.ToStd();
    else
      message_ = ErrMsg(db_);
  }

  void OnOK() override {
    Napi::Env env = Env();
    Done();
    if (rc_ == CTXDB_OK)
      deferred_.Resolve(Napi::String::New(env, result_));
    else
      deferred_.Reject(StatusError(env, rc_, message_).Value());
  }

  void OnError(const Napi::Error &e) override {
    Done();
    deferred_.Reject(e.Value());
  }

private:
  void Done() {
    state_->pending--;
    state_->MaybeFinishClose();
  }

  Napi::Promise::Deferred deferred_;
  std::shared_ptr<DbState> state_;
  ctxdb_db *db_;
  Kind kind_;
  std::string sid_;
  bool has_sid_;
  std::string data_;
  std::string extra_;
  int rc_ = CTXDB_INTERNAL;
  std::string result_;
  std::string message_;
};

// Database ------------------------------------------------------------------------

class Database : public Napi::ObjectWrap<Database> {
public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(
        env, "Database",
        {InstanceMethod<&Database::Close>("close"), InstanceMethod<&Database::IsClosed>("isClosed"),
         InstanceMethod<&Database::SessionCreate>("sessionCreate"),
         InstanceMethod<&Database::SessionGet>("sessionGet"),
         InstanceMethod<&Database::SessionList>("sessionList"),
         InstanceMethod<&Database::Append>("append"),
         InstanceMethod<&Database::RecordResponse>("recordResponse"),
         InstanceMethod<&Database::RecordResponseAsync>("recordResponseAsync"),
         InstanceMethod<&Database::AppendBatch>("appendBatch"),
         InstanceMethod<&Database::AppendBatchAsync>("appendBatchAsync"),
         InstanceMethod<&Database::EventGet>("eventGet"),
         InstanceMethod<&Database::EventsIter>("eventsIter"),
         InstanceMethod<&Database::ExportIter>("exportIter"),
         InstanceMethod<&Database::BranchFork>("branchFork"),
         InstanceMethod<&Database::BranchList>("branchList"),
         InstanceMethod<&Database::BranchPath>("branchPath"),
         InstanceMethod<&Database::EventChildren>("eventChildren"),
         InstanceMethod<&Database::MessagesList>("messagesList"),
         InstanceMethod<&Database::ToolCallsList>("toolCallsList"),
         InstanceMethod<&Database::FilesList>("filesList"),
         InstanceMethod<&Database::StateGet>("stateGet"),
         InstanceMethod<&Database::StatsGet>("statsGet"),
         InstanceMethod<&Database::ArtifactPut>("artifactPut"),
         InstanceMethod<&Database::ArtifactRead>("artifactRead"),
         InstanceMethod<&Database::ArtifactInfo>("artifactInfo"),
         InstanceMethod<&Database::ArtifactList>("artifactList"),
         InstanceMethod<&Database::ArtifactLines>("artifactLines"),
         InstanceMethod<&Database::ArtifactPreview>("artifactPreview"),
         InstanceMethod<&Database::ArtifactSearch>("artifactSearch"),
         // the streaming put (ctxdb_artifact_writer_*)
         InstanceMethod<&Database::ArtifactWriterOpen>("artifactWriterOpen"),
         InstanceMethod<&Database::ArtifactWriterWrite>("artifactWriterWrite"),
         InstanceMethod<&Database::ArtifactWriterCommit>("artifactWriterCommit"),
         InstanceMethod<&Database::ArtifactWriterFree>("artifactWriterFree"),
         InstanceMethod<&Database::MemoryWrite>("memoryWrite"),
         InstanceMethod<&Database::MemoryUpdate>("memoryUpdate"),
         InstanceMethod<&Database::MemoryForget>("memoryForget"),
         InstanceMethod<&Database::MemoryGet>("memoryGet"),
         InstanceMethod<&Database::MemoryList>("memoryList"),
         InstanceMethod<&Database::MemoryRetrieve>("memoryRetrieve"),
         InstanceMethod<&Database::MemoryPromote>("memoryPromote"),
         InstanceMethod<&Database::Verify>("verify"),
         InstanceMethod<&Database::VerifyAsync>("verifyAsync"),
         InstanceMethod<&Database::VerifyWith>("verifyWith"),
         InstanceMethod<&Database::VerifyWithAsync>("verifyWithAsync"),
         InstanceMethod<&Database::Anchor>("anchor"), InstanceMethod<&Database::Rebuild>("rebuild"),
         InstanceMethod<&Database::RebuildAsync>("rebuildAsync"),
         InstanceMethod<&Database::Optimize>("optimize"),
         InstanceMethod<&Database::OptimizeAsync>("optimizeAsync"),
         InstanceMethod<&Database::Import>("import"),
         InstanceMethod<&Database::TranscriptImport>("transcriptImport"),
         InstanceMethod<&Database::TranscriptImportAsync>("transcriptImportAsync"),
         InstanceMethod<&Database::ImportAsync>("importAsync"),
         // the context compiler
         InstanceMethod<&Database::Compile>("compile"),
         InstanceMethod<&Database::CompileAsync>("compileAsync"),
         InstanceMethod<&Database::BundleConvert>("bundleConvert"),
         InstanceMethod<&Database::SetTokenCounter>("setTokenCounter"),
         // Search
         InstanceMethod<&Database::Search>("search"),
         // Tokenizer
         InstanceMethod<&Database::TokensCount>("tokensCount"),
         InstanceMethod<&Database::TokensEncode>("tokensEncode"),
         // Compaction
         InstanceMethod<&Database::CompactShould>("compactShould"),
         InstanceMethod<&Database::CompactPlan>("compactPlan"),
         InstanceMethod<&Database::CompactCommit>("compactCommit"),
         InstanceMethod<&Database::Compact>("compact"),
         InstanceMethod<&Database::CompactAsync>("compactAsync"),
         InstanceMethod<&Database::BranchSummarize>("branchSummarize"),
         InstanceMethod<&Database::CompactionsList>("compactionsList")});
  }

  // new Database(path: string, configJson?: string)
  explicit Database(const Napi::CallbackInfo &info)
      : Napi::ObjectWrap<Database>(info), state_(std::make_shared<DbState>()) {
    Napi::Env env = info.Env();
    std::string path = GetString(info, 0, "path");
    if (path.find('\0') != std::string::npos)
      throw Napi::TypeError::New(env, "path must not contain a NUL character");
    std::string config;
    bool has_config = GetOptString(info, 1, "config", &config);
    ctxdb_db *db = nullptr;
    int rc = ctxdb_open(path.c_str(), has_config ? config.data() : nullptr,
                        has_config ? config.size() : 0, &db);
    if (rc != CTXDB_OK) ThrowStatus(env, rc, nullptr); // *out_db is NULL
    state_->db = db;
  }

  // The finalizer drops this wrapper's share of the state; the last share
  // (this one, or an open iterator's, or a running worker's) closes.
  ~Database() override = default;

private:
  ctxdb_db *Live(Napi::Env env) const {
    if (state_->closed || !state_->db) ThrowClosed(env);
    return state_->db;
  }

  Napi::Value Close(const Napi::CallbackInfo &info) {
    if (state_->in_counter)
      throw StatusError(info.Env(), CTXDB_MISUSE,
                        "close() from inside a token counter: a counter must not use the "
                        "database that called it");
    state_->RequestClose();
    return info.Env().Undefined();
  }

  Napi::Value IsClosed(const Napi::CallbackInfo &info) {
    return Napi::Boolean::New(info.Env(), state_->closed);
  }

  Napi::Value SessionCreate(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    ctxdb_db *db = Live(env);
    Bytes json = GetBytes(info, 0, "session");
    OwnedBuf out;
    int rc = ctxdb_session_create(db, json.p, json.n, &out.p, &out.n);
    if (rc != CTXDB_OK) ThrowStatus(env, rc, db);
    return out.ToJs(env);
  }

  Napi::Value SessionGet(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    ctxdb_db *db = Live(env);
    std::string id = GetString(info, 0, "sessionId");
    OwnedBuf out;
    int rc = ctxdb_session_get(db, id.data(), id.size(), &out.p, &out.n);
    if (rc != CTXDB_OK) ThrowStatus(env, rc, db);
    return out.ToJs(env);
  }

  Napi::Value SessionList(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    ctxdb_db *db = Live(env);
    OwnedBuf out;
    int rc = ctxdb_session_list(db, &out.p, &out.n);
    if (rc != CTXDB_OK) ThrowStatus(env, rc, db);
    return out.ToJs(env);
  }

  Napi::Value Append(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    ctxdb_db *db = Live(env);
    std::string sid = GetString(info, 0, "sessionId");
    Bytes ev = GetBytes(info, 1, "event");
    OwnedBuf out;
    int rc = ctxdb_append(db, sid.data(), sid.size(), ev.p, ev.n, &out.p, &out.n);
    if (rc != CTXDB_OK) ThrowStatus(env, rc, db);
    return out.ToJs(env);
  }

  Napi::Value AppendBatch(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    ctxdb_db *db = Live(env);
    std::string sid = GetString(info, 0, "sessionId");
    Bytes nd = GetBytes(info, 1, "ndjson");
    OwnedBuf out;
    int rc = ctxdb_append_batch(db, sid.data(), sid.size(), nd.p, nd.n, &out.p, &out.n);
    if (rc != CTXDB_OK) ThrowStatus(env, rc, db);
    return out.ToJs(env);
  }

  Napi::Value AppendBatchAsync(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    Live(env);
    std::string sid = GetString(info, 0, "sessionId");
    Bytes nd = GetBytes(info, 1, "ndjson");
    nd.Own();
    return Queue(env, CallWorker::Kind::kAppendBatch, std::move(sid), true, std::move(nd.owned));
  }

  // recordResponse(sessionId, optionsJson, response: string | Buffer | lines[])
  Napi::Value RecordResponse(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    ctxdb_db *db = Live(env);
    std::string sid = GetString(info, 0, "sessionId");
    std::string opts = GetString(info, 1, "options");
    Bytes resp = GetBytes(info, 2, "response");
    OwnedBuf out;
    int rc = ctxdb_response_record(db, sid.data(), sid.size(), opts.data(), opts.size(), resp.p,
                                   resp.n, &out.p, &out.n);
    if (rc != CTXDB_OK) ThrowStatus(env, rc, db);
    return out.ToJs(env);
  }

  Napi::Value RecordResponseAsync(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    Live(env);
    std::string sid = GetString(info, 0, "sessionId");
    std::string opts = GetString(info, 1, "options");
    Bytes resp = GetBytes(info, 2, "response");
    resp.Own();
    return Queue(env, CallWorker::Kind::kRecord, std::move(sid), true, std::move(resp.owned),
                 std::move(opts));
  }

  Napi::Value EventGet(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    ctxdb_db *db = Live(env);
    std::string id = GetString(info, 0, "eventId");
    OwnedBuf out;
    int rc = ctxdb_event_get(db, id.data(), id.size(), &out.p, &out.n);
    if (rc != CTXDB_OK) ThrowStatus(env, rc, db);
    return out.ToJs(env);
  }

  // eventsIter(sessionId: string | null, fromSeq: number, toSeq: number)
  Napi::Value EventsIter(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    ctxdb_db *db = Live(env);
    std::string sid;
    bool has_sid = GetOptString(info, 0, "sessionId", &sid);
    int64_t from = has_sid ? GetInt64(info, 1, "fromSeq") : 0;
    int64_t to = has_sid ? GetInt64(info, 2, "toSeq") : -1;
    return OpenIter(env, db, [&](ctxdb_iter **it) {
      return ctxdb_events_iter(db, has_sid ? sid.data() : nullptr, has_sid ? sid.size() : 0, from,
                               to, it);
    });
  }

  // branchFork(sessionId: string, specJson: string)
  Napi::Value BranchFork(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    ctxdb_db *db = Live(env);
    std::string sid = GetString(info, 0, "sessionId");
    std::string spec = GetString(info, 1, "spec");
    return Output(env, db, [&](char **out, size_t *n) {
      return ctxdb_branch_fork(db, sid.data(), sid.size(), spec.data(), spec.size(), out, n);
    });
  }

  Napi::Value BranchList(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    ctxdb_db *db = Live(env);
    std::string sid = GetString(info, 0, "sessionId");
    return Output(env, db, [&](char **out, size_t *n) {
      return ctxdb_branch_list(db, sid.data(), sid.size(), out, n);
    });
  }

  // branchPath(sessionId: string, branch: string | null)
  Napi::Value BranchPath(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    ctxdb_db *db = Live(env);
    std::string sid = GetString(info, 0, "sessionId");
    std::string branch;
    bool has_branch = GetOptString(info, 1, "branch", &branch);
    return OpenIter(env, db, [&](ctxdb_iter **it) {
      return ctxdb_branch_path(db, sid.data(), sid.size(), has_branch ? branch.data() : nullptr,
                               has_branch ? branch.size() : 0, it);
    });
  }

  // exportIter(sessionId: string | null): the export stream, artifacts included.
  Napi::Value ExportIter(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    ctxdb_db *db = Live(env);
    std::string sid;
    bool has_sid = GetOptString(info, 0, "sessionId", &sid);
    return OpenIter(env, db, [&](ctxdb_iter **it) {
      return ctxdb_export(db, has_sid ? sid.data() : nullptr, has_sid ? sid.size() : 0, it);
    });
  }

  Napi::Value EventChildren(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    ctxdb_db *db = Live(env);
    std::string id = GetString(info, 0, "eventId");
    return Output(env, db, [&](char **out, size_t *n) {
      return ctxdb_event_children(db, id.data(), id.size(), out, n);
    });
  }

  // The views of a branch: name(sessionId: string, branch: string | null).
  using ViewFn = int (*)(ctxdb_db *, const char *, size_t, const char *, size_t, char **, size_t *);
  Napi::Value BranchView(const Napi::CallbackInfo &info, ViewFn fn) {
    Napi::Env env = info.Env();
    ctxdb_db *db = Live(env);
    std::string sid = GetString(info, 0, "sessionId");
    std::string branch;
    bool has_branch = GetOptString(info, 1, "branch", &branch);
    return Output(env, db, [&](char **out, size_t *n) {
      return fn(db, sid.data(), sid.size(), has_branch ? branch.data() : nullptr,
                has_branch ? branch.size() : 0, out, n);
    });
  }

  Napi::Value MessagesList(const Napi::CallbackInfo &info) {
    return BranchView(info, ctxdb_messages_list);
  }
  Napi::Value ToolCallsList(const Napi::CallbackInfo &info) {
    return BranchView(info, ctxdb_tool_calls_list);
  }
  Napi::Value FilesList(const Napi::CallbackInfo &info) {
    return BranchView(info, ctxdb_files_list);
  }

  // stateGet(sessionId: string, queryJson: string)
  Napi::Value StateGet(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    ctxdb_db *db = Live(env);
    std::string sid = GetString(info, 0, "sessionId");
    std::string query = GetString(info, 1, "query");
    return Output(env, db, [&](char **out, size_t *n) {
      return ctxdb_state_get(db, sid.data(), sid.size(), query.data(), query.size(), out, n);
    });
  }

  // statsGet(sessionId: string | null)
  Napi::Value StatsGet(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    ctxdb_db *db = Live(env);
    std::string sid;
    bool has_sid = GetOptString(info, 0, "sessionId", &sid);
    return Output(env, db, [&](char **out, size_t *n) {
      return ctxdb_stats_get(db, has_sid ? sid.data() : nullptr, has_sid ? sid.size() : 0, out, n);
    });
  }

  // artifactPut(data: string | Uint8Array, metaJson: string)
  Napi::Value ArtifactPut(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    ctxdb_db *db = Live(env);
    Bytes data = GetBytes(info, 0, "data");
    std::string meta = GetString(info, 1, "meta");
    return Output(env, db, [&](char **out, size_t *n) {
      return ctxdb_artifact_put(db, data.p, data.n, meta.data(), meta.size(), out, n);
    });
  }

  // ---- the streaming put (ctxdb_artifact_writer_*) ----
  // The writer is an External over a WriterBox: free() empties it at once,
  // the finalizer frees what free() did not (never twice: a freed writer's
  // address may be reused by a new one).
  struct WriterBox {
    ctxdb_artifact_writer *w = nullptr;
    std::shared_ptr<DbState> state; // keeps the handle while the writer lives
  };

  static WriterBox &Box(const Napi::CallbackInfo &info) {
    if (!info[0].IsExternal())
      throw Napi::TypeError::New(info.Env(), "writer must be an artifact writer");
    return *info[0].As<Napi::External<WriterBox>>().Data();
  }

  // artifactWriterOpen(metaJson: string) -> External
  Napi::Value ArtifactWriterOpen(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    ctxdb_db *db = Live(env);
    std::string meta = GetString(info, 0, "meta");
    ctxdb_artifact_writer *w = nullptr;
    int rc = ctxdb_artifact_writer_open(db, meta.data(), meta.size(), &w);
    if (rc != CTXDB_OK) ThrowStatus(env, rc, db);
    auto *box = new WriterBox{w, state_};
    return Napi::External<WriterBox>::New(env, box, [](Napi::Env, WriterBox *b) {
      ctxdb_artifact_writer_free(b->w);
      delete b;
    });
  }

  // artifactWriterWrite(writer, data: string | Uint8Array)
  Napi::Value ArtifactWriterWrite(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    WriterBox &box = Box(info);
    Bytes data = GetBytes(info, 1, "data");
    int rc = ctxdb_artifact_writer_write(box.w, data.p, data.n);
    if (rc != CTXDB_OK) throw StatusError(env, rc, ErrMsg(nullptr));
    return env.Undefined();
  }

  // artifactWriterCommit(writer) -> the artifact JSON
  Napi::Value ArtifactWriterCommit(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    WriterBox &box = Box(info);
    OwnedBuf out;
    int rc = ctxdb_artifact_writer_commit(box.w, &out.p, &out.n);
    if (rc != CTXDB_OK) throw StatusError(env, rc, ErrMsg(nullptr));
    return out.ToJs(env);
  }

  // artifactWriterFree(writer): an abort unless committed.
  Napi::Value ArtifactWriterFree(const Napi::CallbackInfo &info) {
    WriterBox &box = Box(info);
    ctxdb_artifact_writer_free(std::exchange(box.w, nullptr));
    box.state.reset();
    return info.Env().Undefined();
  }

  // ---- (end of the streaming put) ----

  // artifactRead(id: string, offset: number, length: number) -> Buffer
  Napi::Value ArtifactRead(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    ctxdb_db *db = Live(env);
    std::string id = GetString(info, 0, "id");
    int64_t offset = GetInt64(info, 1, "offset");
    int64_t length = GetInt64(info, 2, "length");
    OwnedBuf out;
    void *p = nullptr;
    int rc = ctxdb_artifact_read(db, id.data(), id.size(), offset, length, &p, &out.n);
    out.p = static_cast<char *>(p);
    if (rc != CTXDB_OK) ThrowStatus(env, rc, db);
    return Napi::Buffer<char>::Copy(env, out.p ? out.p : "", out.n);
  }

  Napi::Value ArtifactInfo(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    ctxdb_db *db = Live(env);
    std::string id = GetString(info, 0, "id");
    return Output(env, db, [&](char **out, size_t *n) {
      return ctxdb_artifact_info(db, id.data(), id.size(), out, n);
    });
  }

  // artifactList(sessionId: string | null)
  Napi::Value ArtifactList(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    ctxdb_db *db = Live(env);
    std::string sid;
    bool has_sid = GetOptString(info, 0, "sessionId", &sid);
    return Output(env, db, [&](char **out, size_t *n) {
      return ctxdb_artifact_list(db, has_sid ? sid.data() : nullptr, has_sid ? sid.size() : 0, out,
                                 n);
    });
  }

  // artifactLines(id: string, first: number, count: number)
  Napi::Value ArtifactLines(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    ctxdb_db *db = Live(env);
    std::string id = GetString(info, 0, "id");
    int64_t first = GetInt64(info, 1, "first");
    int64_t count = GetInt64(info, 2, "count");
    return Output(env, db, [&](char **out, size_t *n) {
      return ctxdb_artifact_lines(db, id.data(), id.size(), first, count, out, n);
    });
  }

  // artifactPreview(id: string, specJson: string)
  Napi::Value ArtifactPreview(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    ctxdb_db *db = Live(env);
    std::string id = GetString(info, 0, "id");
    std::string spec = GetString(info, 1, "spec");
    return Output(env, db, [&](char **out, size_t *n) {
      return ctxdb_artifact_preview(db, id.data(), id.size(), spec.data(), spec.size(), out, n);
    });
  }

  // --- Memory: (id, json) and (json) calls returning JSON ---------------------
  using IdJsonFn = int (*)(ctxdb_db *, const char *, size_t, const char *, size_t, char **,
                           size_t *);
  using JsonFn = int (*)(ctxdb_db *, const char *, size_t, char **, size_t *);

  Napi::Value IdJson(const Napi::CallbackInfo &info, IdJsonFn fn, const char *id_name) {
    Napi::Env env = info.Env();
    ctxdb_db *db = Live(env);
    std::string id = GetString(info, 0, id_name);
    std::string json = GetString(info, 1, "json");
    return Output(env, db, [&](char **out, size_t *n) {
      return fn(db, id.data(), id.size(), json.data(), json.size(), out, n);
    });
  }

  Napi::Value Json(const Napi::CallbackInfo &info, JsonFn fn, const char *name) {
    Napi::Env env = info.Env();
    ctxdb_db *db = Live(env);
    std::string text = GetString(info, 0, name);
    return Output(env, db,
                  [&](char **out, size_t *n) { return fn(db, text.data(), text.size(), out, n); });
  }

  // memoryWrite(sessionId: string, memoryJson: string)
  Napi::Value MemoryWrite(const Napi::CallbackInfo &info) {
    return IdJson(info, ctxdb_memory_write, "sessionId");
  }
  // memoryUpdate(memoryId: string, updateJson: string)
  Napi::Value MemoryUpdate(const Napi::CallbackInfo &info) {
    return IdJson(info, ctxdb_memory_update, "memoryId");
  }
  // memoryForget(memoryId: string, optionsJson: string)
  Napi::Value MemoryForget(const Napi::CallbackInfo &info) {
    return IdJson(info, ctxdb_memory_forget, "memoryId");
  }
  // memoryPromote(sessionId: string, candidatesJson: string)
  Napi::Value MemoryPromote(const Napi::CallbackInfo &info) {
    return IdJson(info, ctxdb_memory_promote, "sessionId");
  }
  // memoryGet(memoryId: string)
  Napi::Value MemoryGet(const Napi::CallbackInfo &info) {
    return Json(info, ctxdb_memory_get, "memoryId");
  }
  // memoryList(queryJson: string)
  Napi::Value MemoryList(const Napi::CallbackInfo &info) {
    return Json(info, ctxdb_memory_list, "query");
  }
  // memoryRetrieve(queryJson: string)
  Napi::Value MemoryRetrieve(const Napi::CallbackInfo &info) {
    return Json(info, ctxdb_memory_retrieve, "query");
  }

  // artifactSearch(id: string, pattern: string, optionsJson: string)
  Napi::Value ArtifactSearch(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    ctxdb_db *db = Live(env);
    std::string id = GetString(info, 0, "id");
    std::string pattern = GetString(info, 1, "pattern");
    std::string options = GetString(info, 2, "options");
    return Output(env, db, [&](char **out, size_t *n) {
      return ctxdb_artifact_search(db, id.data(), id.size(), pattern.data(), pattern.size(),
                                   options.data(), options.size(), out, n);
    });
  }

  // ---- the context compiler ----

  // compile(requestJson: string | Uint8Array)
  Napi::Value Compile(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    ctxdb_db *db = Live(env);
    Bytes req = GetBytes(info, 0, "request");
    return Output(env, db,
                  [&](char **out, size_t *n) { return ctxdb_compile(db, req.p, req.n, out, n); });
  }

  Napi::Value CompileAsync(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    Live(env);
    Bytes req = GetBytes(info, 0, "request");
    req.Own();
    return Queue(env, CallWorker::Kind::kCompile, std::string(), false, std::move(req.owned));
  }

  // bundleConvert(bundleJson: string | Uint8Array, format: string)
  Napi::Value BundleConvert(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    ctxdb_db *db = Live(env);
    Bytes bundle = GetBytes(info, 0, "bundle");
    std::string format = GetString(info, 1, "format");
    return Output(env, db, [&](char **out, size_t *n) {
      return ctxdb_bundle_convert(db, bundle.p, bundle.n, format.data(), format.size(), out, n);
    });
  }

  // setTokenCounter(name: string | null, fn: Function | null)
  Napi::Value SetTokenCounter(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    ctxdb_db *db = Live(env);
    // A worker queued before the counter was set would call it off the
    // main thread.
    if (state_->pending > 0)
      throw StatusError(env, CTXDB_MISUSE,
                        "setTokenCounter while async calls on this database are running; "
                        "await them first");
    if (info[1].IsNull() || info[1].IsUndefined()) {
      int rc = ctxdb_token_counter_set(db, nullptr, 0, nullptr, nullptr);
      if (rc != CTXDB_OK) ThrowStatus(env, rc, db);
      state_->counter.Reset();
      return env.Undefined();
    }
    std::string name = GetString(info, 0, "name");
    if (!info[1].IsFunction()) throw Napi::TypeError::New(env, "fn must be a function or null");
    int rc = ctxdb_token_counter_set(db, name.data(), name.size(), CountTokens, state_.get());
    if (rc != CTXDB_OK) ThrowStatus(env, rc, db); // the previous counter stays
    state_->counter = Napi::Persistent(info[1].As<Napi::Function>());
    return env.Undefined();
  }

  // The ctxdb_token_count_fn of a JS counter; user_data is the DbState.
  // Runs inside a synchronous ctxdb call on the main thread. Nothing may
  // escape into C: a throw or an answer that is not a count is kept for
  // ThrowStatus and reported as CTXDB_INTERNAL.
  static int CountTokens(void *user_data, const char *text, size_t len, int64_t *out_tokens) {
    auto *state = static_cast<DbState *>(user_data);
    Napi::Env env = state->counter.Env();
    AddonData *data = env.GetInstanceData<AddonData>();
    auto failed = [&](std::string why) {
      if (!data->counter_failed) {
        data->counter_failed = true;
        data->counter_failure = std::move(why);
      }
      return CTXDB_INTERNAL;
    };
    try {
      Napi::HandleScope scope(env);
      state->in_counter = true;
      Napi::Value r = state->counter.Call({Napi::String::New(env, text, len)});
      state->in_counter = false;
      if (r.IsNumber()) {
        double n = r.As<Napi::Number>().DoubleValue();
        if (n >= 0 && n <= 9007199254740991.0 && n == static_cast<double>(int64_t(n))) {
          *out_tokens = int64_t(n);
          return CTXDB_OK;
        }
      }
      return failed("the token counter must return a non-negative integer, got " +
                    std::string(r.IsNumber() ? r.ToString().Utf8Value() : TypeName(r)));
    } catch (const Napi::Error &e) {
      state->in_counter = false;
      if (!data->counter_failed) {
        Napi::HandleScope scope(env);
        Napi::Value thrown = e.Value();
        if (thrown.IsObject()) data->counter_error = Napi::Persistent(thrown.As<Napi::Object>());
      }
      return failed(e.Message().empty() ? std::string("the token counter threw")
                                        : "the token counter threw: " + e.Message());
    } catch (...) {
      state->in_counter = false;
      return failed("the token counter failed");
    }
  }

  static std::string TypeName(Napi::Value v) {
    switch (v.Type()) {
    case napi_undefined: return "undefined";
    case napi_null: return "null";
    case napi_boolean: return "a boolean";
    case napi_string: return "a string";
    case napi_object: return "an object";
    default: return "a value of another type";
    }
  }

  // ---- Search ----
  // search(query: string, optionsJson: string)
  Napi::Value Search(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    ctxdb_db *db = Live(env);
    std::string query = GetString(info, 0, "query");
    std::string options = GetString(info, 1, "options");
    return Output(env, db, [&](char **out, size_t *n) {
      return ctxdb_search(db, query.data(), query.size(), options.data(), options.size(), out, n);
    });
  }

  // A wrapped Iterator over what open(&iter) opens (it returns the status).
  // ---- Compaction ----

  // compactShould / compactPlan(sessionId: string, policyJson: string)
  using PolicyFn = int (*)(ctxdb_db *, const char *, size_t, const char *, size_t, char **,
                           size_t *);
  Napi::Value PolicyCall(const Napi::CallbackInfo &info, PolicyFn fn) {
    Napi::Env env = info.Env();
    ctxdb_db *db = Live(env);
    std::string sid = GetString(info, 0, "sessionId");
    std::string policy = GetString(info, 1, "policy");
    return Output(env, db, [&](char **out, size_t *n) {
      return fn(db, sid.data(), sid.size(), policy.data(), policy.size(), out, n);
    });
  }
  Napi::Value CompactShould(const Napi::CallbackInfo &info) {
    return PolicyCall(info, ctxdb_compact_should);
  }
  Napi::Value CompactPlan(const Napi::CallbackInfo &info) {
    return PolicyCall(info, ctxdb_compact_plan);
  }

  // compactCommit(sessionId: string, planJson: string, summaryJson: string)
  Napi::Value CompactCommit(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    ctxdb_db *db = Live(env);
    std::string sid = GetString(info, 0, "sessionId");
    std::string plan = GetString(info, 1, "plan");
    std::string summary = GetString(info, 2, "summary");
    return Output(env, db, [&](char **out, size_t *n) {
      return ctxdb_compact_commit(db, sid.data(), sid.size(), plan.data(), plan.size(),
                                  summary.data(), summary.size(), out, n);
    });
  }

  // A JS summarizer called synchronously from inside ctxdb_compact, on this
  // (the main) thread: planJson in, summary JSON text out. What it throws
  // is caught here (nothing may cross the C ABI) and reported to ctxdb.
  struct JsSummarizer {
    Napi::Env env;
    Napi::Function fn;
  };
  static int CallJsSummarizer(void *user, const char *plan, size_t len, ctxdb_summary_ctx *ctx) {
    auto *s = static_cast<JsSummarizer *>(user);
    std::string message;
    try {
      Napi::Value r = s->fn.Call({Napi::String::New(s->env, plan, len)});
      if (r.IsString()) {
        std::string text = r.As<Napi::String>().Utf8Value();
        return ctxdb_summary_set(ctx, text.data(), text.size());
      }
      message = "the summarizer returned no string";
    } catch (const Napi::Error &e) {
      message = e.Message();
    }
    ctxdb_summary_error(ctx, message.data(), message.size());
    return CTXDB_INTERNAL;
  }

  // compact(sessionId: string, policyJson: string, summarizer: Function | null)
  Napi::Value Compact(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    ctxdb_db *db = Live(env);
    std::string sid = GetString(info, 0, "sessionId");
    std::string policy = GetString(info, 1, "policy");
    bool has_fn = info[2].IsFunction();
    if (!has_fn && !info[2].IsNull() && !info[2].IsUndefined())
      throw Napi::TypeError::New(env, "summarizer must be a function or null");
    JsSummarizer js{env, has_fn ? info[2].As<Napi::Function>() : Napi::Function()};
    return Output(env, db, [&](char **out, size_t *n) {
      return ctxdb_compact(db, sid.data(), sid.size(), policy.data(), policy.size(),
                           has_fn ? CallJsSummarizer : nullptr, has_fn ? &js : nullptr, out, n);
    });
  }

  // compactAsync(sessionId: string, policyJson: string): the built-in
  // summarizer only (a JS one could run on the main thread alone).
  Napi::Value CompactAsync(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    Live(env);
    std::string sid = GetString(info, 0, "sessionId");
    std::string policy = GetString(info, 1, "policy");
    return Queue(env, CallWorker::Kind::kCompact, std::move(sid), true, std::move(policy));
  }

  // branchSummarize(sessionId: string, fromLeaf: string, toEvent: string)
  Napi::Value BranchSummarize(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    ctxdb_db *db = Live(env);
    std::string sid = GetString(info, 0, "sessionId");
    std::string from = GetString(info, 1, "fromLeaf");
    std::string to = GetString(info, 2, "toEvent");
    return Output(env, db, [&](char **out, size_t *n) {
      return ctxdb_branch_summarize(db, sid.data(), sid.size(), from.data(), from.size(), to.data(),
                                    to.size(), out, n);
    });
  }

  Napi::Value CompactionsList(const Napi::CallbackInfo &info) {
    return BranchView(info, ctxdb_compactions_list);
  }

  template <class Open> Napi::Value OpenIter(Napi::Env env, const ctxdb_db *db, Open &&open) {
    AddonData *data = env.GetInstanceData<AddonData>();
    Napi::Object obj = data->iterator_ctor.New({});
    ctxdb_iter *it = nullptr;
    int rc = open(&it);
    if (rc != CTXDB_OK) ThrowStatus(env, rc, db);
    Iterator::Unwrap(obj)->Attach(state_, it);
    return obj;
  }

  Napi::Value Verify(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    ctxdb_db *db = Live(env);
    std::string sid;
    bool has_sid = GetOptString(info, 0, "sessionId", &sid);
    OwnedBuf out;
    int rc =
        ctxdb_verify(db, has_sid ? sid.data() : nullptr, has_sid ? sid.size() : 0, &out.p, &out.n);
    if (rc != CTXDB_OK) ThrowStatus(env, rc, db);
    return out.ToJs(env);
  }

  Napi::Value VerifyAsync(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    Live(env);
    std::string sid;
    bool has_sid = GetOptString(info, 0, "sessionId", &sid);
    return Queue(env, CallWorker::Kind::kVerify, std::move(sid), has_sid, std::string());
  }

  // verifyWith(optionsJson: string)
  Napi::Value VerifyWith(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    ctxdb_db *db = Live(env);
    std::string options = GetString(info, 0, "options");
    OwnedBuf out;
    int rc = ctxdb_verify_with(db, options.data(), options.size(), &out.p, &out.n);
    if (rc != CTXDB_OK) ThrowStatus(env, rc, db);
    return out.ToJs(env);
  }

  Napi::Value VerifyWithAsync(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    Live(env);
    std::string options = GetString(info, 0, "options");
    return Queue(env, CallWorker::Kind::kVerifyWith, std::string(), false, std::move(options));
  }

  // anchor(): the digest of the whole history (no options yet).
  Napi::Value Anchor(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    ctxdb_db *db = Live(env);
    OwnedBuf out;
    int rc = ctxdb_anchor(db, nullptr, 0, &out.p, &out.n);
    if (rc != CTXDB_OK) ThrowStatus(env, rc, db);
    return out.ToJs(env);
  }

  // rebuild(optionsJson?: string)
  Napi::Value Rebuild(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    ctxdb_db *db = Live(env);
    std::string options;
    bool has_options = GetOptString(info, 0, "options", &options);
    OwnedBuf out;
    int rc = ctxdb_rebuild(db, has_options ? options.data() : nullptr,
                           has_options ? options.size() : 0, &out.p, &out.n);
    if (rc != CTXDB_OK) ThrowStatus(env, rc, db);
    return out.ToJs(env);
  }

  Napi::Value RebuildAsync(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    Live(env);
    std::string options;
    GetOptString(info, 0, "options", &options);
    return Queue(env, CallWorker::Kind::kRebuild, std::string(), false, std::move(options));
  }

  // optimize(): merges the full-text indexes (no options yet).
  Napi::Value Optimize(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    ctxdb_db *db = Live(env);
    OwnedBuf out;
    int rc = ctxdb_optimize(db, nullptr, 0, &out.p, &out.n);
    if (rc != CTXDB_OK) ThrowStatus(env, rc, db);
    return out.ToJs(env);
  }

  Napi::Value OptimizeAsync(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    Live(env);
    return Queue(env, CallWorker::Kind::kOptimize, std::string(), false, std::string());
  }

  Napi::Value Import(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    ctxdb_db *db = Live(env);
    Bytes nd = GetBytes(info, 0, "ndjson");
    OwnedBuf out;
    int rc = ctxdb_import(db, nd.p, nd.n, &out.p, &out.n);
    if (rc != CTXDB_OK) ThrowStatus(env, rc, db);
    return out.ToJs(env);
  }

  Napi::Value ImportAsync(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    Live(env);
    Bytes nd = GetBytes(info, 0, "ndjson");
    nd.Own();
    return Queue(env, CallWorker::Kind::kImport, std::string(), false, std::move(nd.owned));
  }

  // transcriptImport(optionsJson: string)
  Napi::Value TranscriptImport(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    ctxdb_db *db = Live(env);
    std::string options = GetString(info, 0, "options");
    OwnedBuf out;
    int rc = ctxdb_transcript_import(db, options.data(), options.size(), &out.p, &out.n);
    if (rc != CTXDB_OK) ThrowStatus(env, rc, db);
    return out.ToJs(env);
  }

  Napi::Value TranscriptImportAsync(const Napi::CallbackInfo &info) {
    Napi::Env env = info.Env();
    Live(env);
    std::string options = GetString(info, 0, "options");
    return Queue(env, CallWorker::Kind::kTranscriptImport, std::string(), false,
                 std::move(options));
  }

  // ---- Tokenizer: tokensCount / tokensEncode(encoding, text, specials)
  Napi::Value TokensCount(const Napi::CallbackInfo &info) {
    return ::TokensCount(info, Live(info.Env()));
  }
  Napi::Value TokensEncode(const Napi::CallbackInfo &info) {
    return ::TokensEncode(info, Live(info.Env()));
  }

  Napi::Value Queue(Napi::Env env, CallWorker::Kind kind, std::string sid, bool has_sid,
                    std::string data, std::string extra = {}) {
    // A worker thread must never call JS: with a JS token counter set, a
    // call that may count tokens (appends, imports, rebuilds, compiles,
    // compactions) runs only synchronously; verify and optimize never count.
    if (!state_->counter.IsEmpty() && kind != CallWorker::Kind::kVerify &&
        kind != CallWorker::Kind::kOptimize)
      throw StatusError(env, CTXDB_MISUSE,
                        "an async call that may count tokens cannot run while a JS token "
                        "counter is set (it would have to call JS off the main thread); use "
                        "the synchronous call, or setTokenCounter(null) first");
    auto *w = new CallWorker(env, state_, kind, std::move(sid), has_sid, std::move(data),
                             std::move(extra));
    Napi::Promise p = w->Promise();
    w->Queue(); // deletes itself after OnOK/OnError
    return p;
  }

  std::shared_ptr<DbState> state_;
};

std::string TakeCounterFailure(Napi::Env env, Napi::Value *cause) {
  AddonData *data = env.GetInstanceData<AddonData>();
  if (!data || !data->counter_failed) return std::string();
  std::string why = ": " + data->counter_failure;
  if (!data->counter_error.IsEmpty()) *cause = data->counter_error.Value();
  data->counter_failed = false;
  data->counter_failure.clear();
  data->counter_error.Reset();
  return why;
}

// Module functions ------------------------------------------------------------------

Napi::Value Version(const Napi::CallbackInfo &info) {
  return Napi::String::New(info.Env(), ctxdb_version());
}

Napi::Value VersionNumber(const Napi::CallbackInfo &info) {
  return Napi::Number::New(info.Env(), ctxdb_version_number());
}

Napi::Value AbiVersion(const Napi::CallbackInfo &info) {
  return Napi::Number::New(info.Env(), ctxdb_abi_version());
}

Napi::Value ErrStr(const Napi::CallbackInfo &info) {
  return Napi::String::New(info.Env(), ctxdb_errstr(int(GetInt64(info, 0, "code"))));
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  auto *data = new AddonData();
  data->iterator_ctor = Napi::Persistent(Iterator::Define(env));
  env.SetInstanceData(data); // deleted with the environment
  exports.Set("Database", Database::Define(env));
  exports.Set("version", Napi::Function::New<Version>(env, "version"));
  exports.Set("versionNumber", Napi::Function::New<VersionNumber>(env, "versionNumber"));
  exports.Set("abiVersion", Napi::Function::New<AbiVersion>(env, "abiVersion"));
  exports.Set("errstr", Napi::Function::New<ErrStr>(env, "errstr"));
  // Tokenizer, without a database
  exports.Set(
      "tokensCount",
      Napi::Function::New(
          env, [](const Napi::CallbackInfo &i) { return TokensCount(i, nullptr); }, "tokensCount"));
  exports.Set("tokensEncode",
              Napi::Function::New(
                  env, [](const Napi::CallbackInfo &i) { return TokensEncode(i, nullptr); },
                  "tokensEncode"));
  // The ABI this addon was compiled against, and the one the loaded
  // library reports (they differ only if the wrong libctxdb was found).
  exports.Set("headerAbiVersion", Napi::Number::New(env, CTXDB_ABI_VERSION));
  exports.Set("loadedAbiVersion", Napi::Number::New(env, ctxdb_abi_version()));
  return exports;
}

} // namespace

NODE_API_MODULE(ctxdb, Init)
