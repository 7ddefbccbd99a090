#include "artifact/artifact_store.hpp"

#include "artifact/text.hpp"
#include "error.hpp"

#include <sqlite3.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <future>

namespace ctxdb::artifact {

namespace {

constexpr const char *kFindSql = "SELECT no FROM artifacts WHERE id=?";
constexpr const char *kNextNoSql = "SELECT max(coalesce((SELECT max(no) FROM artifacts),0),"
                                   "coalesce((SELECT max(artifact_no) FROM artifact_chunks),0))+1";
constexpr const char *kInsertChunkSql =
    "INSERT INTO artifact_chunks(artifact_no,idx,raw_size,codec,newlines,sha256,data,sha256_of)"
    " VALUES(?,?,?,?,?,?,?,'stored')";
constexpr const char *kDropChunksSql = "DELETE FROM artifact_chunks WHERE artifact_no=?";
constexpr const char *kInsertArtifactSql =
    "INSERT INTO artifacts(no,id,raw_size,stored_size,chunk_size,chunk_count,line_count,kind,"
    "mime,name,created_ts) VALUES(?,?,?,?,?,?,?,?,?,?,?)";
constexpr const char *kInsertRefSql =
    "INSERT OR IGNORE INTO artifact_refs(artifact_no,event_id,role) VALUES(?,?,?)";
constexpr const char *kInfoColumns =
    "a.no,a.id,a.raw_size,a.stored_size,a.chunk_size,a.chunk_count,a.line_count,a.kind,a.mime,"
    "a.name,a.created_ts";
const std::string kInfoSql = std::string("SELECT ") + kInfoColumns + " FROM artifacts a WHERE id=?";
const std::string kListSql =
    std::string("SELECT ") + kInfoColumns + " FROM artifacts a ORDER BY no";
const std::string kListSessionSql =
    std::string("SELECT ") + kInfoColumns +
    " FROM artifacts a WHERE a.no IN (SELECT r.artifact_no FROM chains c"
    " JOIN events e ON e.session_no=c.session_no JOIN artifact_refs r ON r.event_id=e.id"
    " WHERE c.session_id=?) ORDER BY a.no";
constexpr const char *kChunksSql =
    "SELECT raw_size,newlines FROM artifact_chunks WHERE artifact_no=? ORDER BY idx";
constexpr const char *kChunkSql =
    "SELECT codec,sha256,data,sha256_of FROM artifact_chunks WHERE artifact_no=? AND idx=?";
constexpr const char *kRefsSql =
    "SELECT r.event_id,r.role,c.session_id FROM artifact_refs r"
    " LEFT JOIN events e ON e.id=r.event_id LEFT JOIN chains c ON c.session_no=e.session_no"
    " WHERE r.artifact_no=? ORDER BY r.event_id,r.role";

int64_t now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

std::string id_of(const util::Digest &d) { return std::string(kIdPrefix) + util::to_hex(d); }

void check_id(std::string_view id) {
  if (!is_content_id(id))
    throw Error(Code::kInvalidArg,
                "'" + std::string(id) +
                    "' is not an artifact id (art_ and 64 lowercase hex digits)");
}

// A TEXT column without a copy (valid until the statement steps or resets).
std::string_view column_text(const SQLite::Column &c) {
  const char *text = c.getText(); // before getBytes, as SQLite asks
  return std::string_view(text, size_t(c.getBytes()));
}

std::optional<int64_t> find_no(store::Store &store, std::string_view id) {
  auto q = store.statement(kFindSql);
  store::bind_text(*q, 1, id);
  if (!q->executeStep()) return std::nullopt;
  return q->getColumn(0).getInt64();
}

Info info_from(SQLite::Statement &q, int64_t &no) {
  Info i;
  no = q.getColumn(0).getInt64();
  i.id = q.getColumn(1).getString();
  i.raw_size = q.getColumn(2).getInt64();
  i.stored_size = q.getColumn(3).getInt64();
  i.chunk_size = q.getColumn(4).getInt64();
  i.chunk_count = q.getColumn(5).getInt64();
  i.line_count = q.getColumn(6).getInt64();
  i.kind = parse_kind(q.getColumn(7).getString());
  i.mime = q.getColumn(8).getString();
  i.name = q.getColumn(9).getString();
  i.created_ts = q.getColumn(10).getInt64();
  return i;
}

} // namespace

// The transaction a Writer's rows live in: its own, or a savepoint inside
// the caller's (see artifact_store.hpp).
class PutScope {
public:
  explicit PutScope(store::Store &store) : store_(store) {
    store_.require_writable();
    if (sqlite3_get_autocommit(store_.db().getHandle()))
      own_.emplace(store_);
    else
      store_.db().exec("SAVEPOINT ctxdb_artifact_put");
  }
  ~PutScope() {
    if (done_ || own_) return; // own_ rolls itself back
    try {
      store_.db().exec("ROLLBACK TO ctxdb_artifact_put; RELEASE ctxdb_artifact_put");
    } catch (...) {
      // The caller's transaction is gone already; so is everything we wrote.
    }
  }
  void commit() {
    if (own_)
      own_->commit();
    else
      store_.db().exec("RELEASE ctxdb_artifact_put");
    done_ = true;
  }

private:
  store::Store &store_;
  std::optional<store::Store::WriteTransaction> own_;
  bool done_ = false;
};

struct ArtifactStore::Writer::State {
  State(ArtifactStore &a, const Meta &m) : owner(a), meta(m), scope(a.store_) {}
  ~State() { owner.writing_ = false; }

  ArtifactStore &owner;
  Meta meta;
  PutScope scope;
  int64_t no = 0;
  int64_t chunks = 0;
  int64_t raw_size = 0;
  int64_t stored_size = 0;
  int64_t newlines = 0;
  char last = '\n'; // the content's last byte ('\n' while it is empty)
  std::string pending;
  util::Sha256 whole;
  bool hash_whole = true; // false: put() hashes the bytes itself (known_id)
  std::string known_id;
  util::Sha256 chunk_hash;
  bool finished = false;

  void store_chunk(std::string_view raw);
};

void ArtifactStore::Writer::State::store_chunk(std::string_view raw) {
  std::string_view frame;
  Codec codec = owner.encoder_.encode(raw, &frame);
  std::string_view data = codec == Codec::kZstd ? frame : raw;
  util::Digest sha = chunk_hash.update(data).finish(); // of the stored bytes (sha256_of)
  int64_t lines = count_newlines(raw);
  auto q = owner.store_.statement(kInsertChunkSql);
  q->bind(1, no);
  q->bind(2, chunks);
  q->bind(3, int64_t(raw.size()));
  store::bind_text(*q, 4, codec_name(codec));
  q->bind(5, lines);
  q->bindNoCopy(6, sha.data(), int(sha.size()));
  q->bindNoCopy(7, data.data(), int(data.size()));
  q->exec();
  if (hash_whole) whole.update(raw);
  ++chunks;
  raw_size += int64_t(raw.size());
  stored_size += int64_t(data.size());
  newlines += lines;
  if (!raw.empty()) last = raw.back();
}

ArtifactStore::Writer::Writer(std::unique_ptr<State> state) : s_(std::move(state)) {}
ArtifactStore::Writer::Writer(Writer &&) noexcept = default;
ArtifactStore::Writer::~Writer() = default;

void ArtifactStore::Writer::write(std::string_view piece) {
  if (!s_ || s_->finished) throw Error(Code::kMisuse, "artifact writer already finished");
  size_t size = s_->owner.options_.chunk_size;
  // Top up a partly filled chunk first; whole chunks of a large piece are
  // then stored straight from it, without a copy.
  if (!s_->pending.empty()) {
    size_t take = std::min(piece.size(), size - s_->pending.size());
    s_->pending.append(piece.substr(0, take));
    piece.remove_prefix(take);
    if (s_->pending.size() < size) return;
    s_->store_chunk(s_->pending);
    s_->pending.clear();
  }
  while (piece.size() >= size) {
    s_->store_chunk(piece.substr(0, size));
    piece.remove_prefix(size);
  }
  s_->pending.assign(piece);
}

std::string ArtifactStore::Writer::finish(Info *stored) {
  if (!s_ || s_->finished) throw Error(Code::kMisuse, "artifact writer already finished");
  State &s = *s_;
  if (!s.pending.empty()) s.store_chunk(s.pending);
  s.pending.clear();
  std::string id = s.hash_whole ? id_of(s.whole.finish()) : s.known_id;
  store::Store &store = s.owner.store_;
  if (auto existing = find_no(store, id)) {
    auto q = store.statement(kDropChunksSql);
    q->bind(1, s.no);
    q->exec();
    s.no = *existing;
  } else {
    auto q = store.statement(kInsertArtifactSql);
    q->bind(1, s.no);
    store::bind_text(*q, 2, id);
    q->bind(3, s.raw_size);
    q->bind(4, s.stored_size);
    q->bind(5, int64_t(s.owner.options_.chunk_size));
    q->bind(6, s.chunks);
    q->bind(7, s.newlines + (s.last != '\n' ? 1 : 0));
    store::bind_text(*q, 8, kind_name(s.meta.kind));
    if (!s.meta.mime.empty()) store::bind_text(*q, 9, s.meta.mime);
    if (!s.meta.name.empty()) store::bind_text(*q, 10, s.meta.name);
    q->bind(11, s.meta.created_ts.value_or(now_ms()));
    q->exec();
  }
  s.owner.add_ref(s.no, s.meta);
  if (stored) *stored = s.owner.info(id);
  s.scope.commit();
  s.finished = true;
  s_.reset();
  return id;
}

ArtifactStore::ArtifactStore(store::Store &store, Options options)
    : store_(store), options_(options), encoder_(options.level) {
  if (options_.chunk_size == 0 || options_.chunk_size > (64u << 20))
    throw Error(Code::kInvalidArg, "artifact chunk size must be 1 byte to 64 MiB");
}

ArtifactStore::~ArtifactStore() = default;

ArtifactStore::Writer ArtifactStore::writer(const Meta &meta) {
  if (writing_) throw Error(Code::kMisuse, "another artifact put is in progress on this handle");
  auto state = std::make_unique<Writer::State>(*this, meta);
  writing_ = true;
  auto q = store_.statement(kNextNoSql);
  q->executeStep();
  state->no = q->getColumn(0).getInt64();
  return Writer(std::move(state));
}

std::string ArtifactStore::put(std::string_view bytes, const Meta &meta, Info *stored) {
  if (bytes.size() >= kHashAsideBytes) return put_hashing_aside(bytes, meta, stored);
  std::string id = content_id(bytes);
  Writer w = writer(meta);
  if (auto existing = find_no(store_, id)) {
    add_ref(*existing, meta);
    if (stored) *stored = info(id);
    w.s_->scope.commit();
    w.s_->finished = true;
    return id;
  }
  w.s_->hash_whole = false;
  w.s_->known_id = id;
  w.write(bytes);
  return w.finish(stored);
}

// The SHA-256 of the whole (the id) is a pass over the bytes that costs a
// fifth of compressing them. For large content it runs on a second thread
// while the chunks compress; once it is done, bytes that are stored
// already stop the compression, and finish() drops the chunks written.
std::string ArtifactStore::put_hashing_aside(std::string_view bytes, const Meta &meta,
                                             Info *stored) {
  std::future<std::string> hashing =
      std::async(std::launch::async, [bytes] { return content_id(bytes); });
  Writer w = writer(meta);
  w.s_->hash_whole = false;
  std::optional<std::string> id;
  for (size_t at = 0; at < bytes.size(); at += options_.chunk_size) {
    w.write(bytes.substr(at, options_.chunk_size));
    if (!id && hashing.wait_for(std::chrono::seconds(0)) == std::future_status::ready) {
      id = hashing.get();
      if (find_no(store_, *id)) break; // a duplicate: only its reference is added
    }
  }
  w.s_->known_id = id ? *id : hashing.get();
  return w.finish(stored);
}

void ArtifactStore::add_ref(int64_t no, const Meta &meta) {
  if (meta.event_id.empty()) return;
  auto q = store_.statement(kInsertRefSql);
  q->bind(1, no);
  store::bind_text(*q, 2, meta.event_id);
  store::bind_text(*q, 3, meta.role.empty() ? std::string_view("output") : meta.role);
  q->exec();
}

Layout ArtifactStore::layout(std::string_view id) {
  check_id(id);
  Layout l;
  {
    auto q = store_.statement(kInfoSql.c_str());
    store::bind_text(*q, 1, id);
    if (!q->executeStep()) throw Error(Code::kNotFound, "no artifact " + std::string(id));
    l.info = info_from(*q, l.no);
  }
  auto q = store_.statement(kChunksSql);
  q->bind(1, l.no);
  int64_t offset = 0;
  while (q->executeStep()) {
    Layout::Chunk c{offset, q->getColumn(0).getInt64(), q->getColumn(1).getInt64()};
    offset += c.raw_size;
    l.newlines += c.newlines;
    l.chunks.push_back(c);
  }
  if (int64_t(l.chunks.size()) != l.info.chunk_count || offset != l.info.raw_size)
    throw Error(Code::kCorrupt,
                "artifact " + std::string(id) + " has " + std::to_string(l.chunks.size()) +
                    " chunks of " + std::to_string(offset) + " bytes, not " +
                    std::to_string(l.info.chunk_count) + " of " + std::to_string(l.info.raw_size));
  return l;
}

Info ArtifactStore::info(std::string_view id) {
  Layout l = layout(id);
  l.info.refs = refs(l.no);
  return std::move(l.info);
}

void ArtifactStore::load_chunk(const Layout &l, size_t i, std::string &out) {
  size_t at = out.size();
  out.resize(at + size_t(l.chunks.at(i).raw_size));
  decode_chunk(l, i, out.data() + at);
}

void ArtifactStore::decode_chunk(const Layout &l, size_t i, char *dst) {
  ChunkJob job;
  job.raw_size = size_t(l.chunks.at(i).raw_size);
  job.dst = dst;
  job.name = {l.info.id, i};
  auto q = store_.statement(kChunkSql);
  q->bind(1, l.no);
  q->bind(2, int64_t(i));
  if (!q->executeStep()) throw Error(Code::kCorrupt, job.name.str() + " is missing");
  job.codec = parse_codec(column_text(q->getColumn(0)));
  SQLite::Column sha = q->getColumn(1);
  if (sha.getBytes() != int(job.sha256.size()))
    throw Error(Code::kCorrupt, job.name.str() + " has no SHA-256");
  std::memcpy(job.sha256.data(), sha.getBlob(), job.sha256.size());
  // The blob as SQLite holds it for the row: no copy of ours.
  SQLite::Column data = q->getColumn(2);
  job.stored = std::string_view(static_cast<const char *>(data.getBlob()), size_t(data.getBytes()));
  job.hash_of = column_text(q->getColumn(3)) == "stored" ? HashOf::kStored : HashOf::kRaw;
  decoder_.decode(job);
}

ChunkDecoder::HashAside ArtifactStore::hash_aside(size_t chunks) {
  return ChunkDecoder::HashAside(decoder_, chunks >= kHashAsideChunks);
}

ArtifactStore::StoredChunk ArtifactStore::stored_chunk(const Layout &l, size_t i) {
  l.chunks.at(i);
  auto q = store_.statement(kChunkSql);
  q->bind(1, l.no);
  q->bind(2, int64_t(i));
  if (!q->executeStep())
    throw Error(Code::kCorrupt,
                "chunk " + std::to_string(i) + " of artifact " + l.info.id + " is missing");
  SQLite::Column data = q->getColumn(2);
  return {parse_codec(q->getColumn(0).getString()),
          std::string(static_cast<const char *>(data.getBlob()), size_t(data.getBytes()))};
}

void ArtifactStore::add_reference(std::string_view id, std::string_view event_id,
                                  std::string_view role) {
  check_id(id);
  auto no = find_no(store_, id);
  if (!no) throw Error(Code::kNotFound, "no artifact " + std::string(id));
  Meta meta;
  meta.event_id = event_id;
  meta.role = role;
  add_ref(*no, meta);
}

void ArtifactStore::scan(const Layout &l, int64_t offset, int64_t length,
                         const std::function<bool(std::string_view)> &fn) {
  int64_t end = length > l.info.raw_size - offset ? l.info.raw_size : offset + length;
  // The first chunk that holds offset (chunks are full but the last), and
  // the one after the last that holds a byte before end.
  size_t first = l.info.chunk_size ? size_t(offset / l.info.chunk_size) : 0, last = first;
  while (last < l.chunks.size() && l.chunks[last].offset < end) ++last;
  auto aside = hash_aside(last - std::min(first, last));
  // One buffer for every chunk, sized once (a resize per chunk would
  // zero-fill it each time).
  std::string buf(size_t(l.info.chunk_size), '\0');
  for (size_t i = first; i < last; ++i) {
    const Layout::Chunk &c = l.chunks[i];
    decode_chunk(l, i, buf.data());
    int64_t from = std::max(offset, c.offset) - c.offset;
    int64_t to = std::min(end, c.offset + c.raw_size) - c.offset;
    if (!fn(std::string_view(buf).substr(size_t(from), size_t(to - from)))) return;
  }
}

std::string ArtifactStore::read(std::string_view id) { return read_range(id, 0, INT64_MAX); }

std::string ArtifactStore::read_range(std::string_view id, int64_t offset, int64_t length) {
  std::string out;
  read_range_into(id, offset, length, [&](size_t n) {
    out.resize(n);
    return out.data();
  });
  return out;
}

size_t ArtifactStore::read_range_into(std::string_view id, int64_t offset, int64_t length,
                                      const std::function<char *(size_t)> &alloc) {
  Layout l = layout(id);
  if (offset < 0 || length < 0 || offset > l.info.raw_size)
    throw Error(Code::kInvalidArg, "byte range (" + std::to_string(offset) + ", " +
                                       std::to_string(length) + ") is outside artifact " +
                                       l.info.id + " of " + std::to_string(l.info.raw_size) +
                                       " bytes");
  int64_t end = length > l.info.raw_size - offset ? l.info.raw_size : offset + length;
  char *dst = alloc(size_t(end - offset));
  auto aside = hash_aside(size_t((end - offset) / std::max<int64_t>(l.info.chunk_size, 1)));
  std::string partial; // a chunk the range holds only part of
  for (size_t i = 0; i < l.chunks.size(); ++i) {
    const Layout::Chunk &c = l.chunks[i];
    if (c.offset + c.raw_size <= offset || c.offset >= end) continue;
    if (c.offset >= offset && c.offset + c.raw_size <= end) {
      decode_chunk(l, i, dst + (c.offset - offset));
      continue;
    }
    partial.resize(size_t(c.raw_size));
    decode_chunk(l, i, partial.data());
    int64_t from = std::max(offset, c.offset), to = std::min(end, c.offset + c.raw_size);
    std::memcpy(dst + (from - offset), partial.data() + (from - c.offset), size_t(to - from));
  }
  return size_t(end - offset);
}

int64_t ArtifactStore::line_offset(const Layout &l, int64_t line) {
  int64_t want = line - 1; // newlines before the line starts
  if (want <= 0) return 0;
  if (want > l.newlines) return l.info.raw_size;
  int64_t seen = 0;
  size_t i = 0;
  while (seen + l.chunks[i].newlines < want) seen += l.chunks[i++].newlines;
  std::string buf;
  load_chunk(l, i, buf);
  size_t pos = 0;
  for (int64_t k = seen; k < want; ++k) pos = buf.find('\n', pos) + 1;
  return l.chunks[i].offset + int64_t(pos);
}

std::string ArtifactStore::read_lines(std::string_view id, int64_t first, int64_t count) {
  Layout l = layout(id);
  if (first < 1 || count < 0 || first > l.info.line_count + 1)
    throw Error(Code::kInvalidArg, "line range (" + std::to_string(first) + ", " +
                                       std::to_string(count) + ") is outside artifact " +
                                       l.info.id + " of " + std::to_string(l.info.line_count) +
                                       " lines");
  int64_t begin = line_offset(l, first);
  int64_t end = count >= l.info.line_count ? l.info.raw_size : line_offset(l, first + count);
  std::string out;
  scan(l, begin, end - begin, [&](std::string_view piece) {
    out.append(piece);
    return true;
  });
  return out;
}

std::vector<Ref> ArtifactStore::refs(int64_t no) {
  std::vector<Ref> out;
  auto q = store_.statement(kRefsSql);
  q->bind(1, no);
  while (q->executeStep())
    out.push_back(
        {q->getColumn(0).getString(), q->getColumn(1).getString(), q->getColumn(2).getString()});
  return out;
}

std::vector<Info> ArtifactStore::list(const std::optional<std::string> &session_id) {
  std::vector<std::pair<int64_t, Info>> rows;
  {
    auto q = store_.statement(session_id ? kListSessionSql.c_str() : kListSql.c_str());
    if (session_id) store::bind_text(*q, 1, *session_id);
    while (q->executeStep()) {
      int64_t no = 0;
      Info i = info_from(*q, no);
      rows.emplace_back(no, std::move(i));
    }
  }
  std::vector<Info> out;
  out.reserve(rows.size());
  for (auto &[no, i] : rows) {
    i.refs = refs(no);
    out.push_back(std::move(i));
  }
  return out;
}

} // namespace ctxdb::artifact
