#include "artifact/verify.hpp"

#include "artifact/chunk_codec.hpp"
#include "error.hpp"
#include "util/sha256.hpp"

#include <SQLiteCpp/SQLiteCpp.h>

#include <algorithm>
#include <cstring>
#include <optional>

namespace ctxdb::artifact {

namespace {

constexpr char kArtifacts[] =
    "SELECT no,id,raw_size,stored_size,chunk_count,line_count FROM artifacts ORDER BY no";
// The same order as kArtifacts, so the two are read side by side once.
constexpr char kChunks[] = "SELECT artifact_no,idx,raw_size,codec,newlines,sha256,sha256_of,data "
                           "FROM artifact_chunks ORDER BY artifact_no,idx";

std::string_view blob(const SQLite::Column &c) {
  return {static_cast<const char *>(c.getBlob()), size_t(c.getBytes())};
}

struct Artifact {
  int64_t no = 0;
  std::string id;
  int64_t raw_size = 0, stored_size = 0, chunk_count = 0, line_count = 0;
};

// What one artifact's chunks added up to.
struct Sums {
  int64_t chunks = 0, raw = 0, stored = 0, newlines = 0;
  bool ends_in_newline = false;
};

class Checker {
public:
  Checker(store::Store &store, VerifyReport &r)
      : r_(r), chunks_(store.statement(kChunks)), more_(chunks_->executeStep()) {}

  // Checks one artifact and its chunks; false at the first problem.
  bool check(const Artifact &a) {
    if (!skip_orphans_before(a.no)) return false;
    ++r_.artifacts;
    Sums s;
    while (more_ && chunk_no() == a.no) {
      if (!check_chunk(a, s)) return false;
      more_ = chunks_->executeStep();
    }
    return check_sums(a, s);
  }

  // Chunks left after the last artifact own none.
  bool finish() { return skip_orphans_before(INT64_MAX); }

private:
  int64_t chunk_no() { return chunks_->getColumn(0).getInt64(); }

  // A chunk whose artifact row is gone (or never came: a put's chunks are
  // written before its row, and a put that fails rolls back both).
  bool skip_orphans_before(int64_t no) {
    if (!more_ || chunk_no() >= no) return true;
    std::string owner = "<artifact no " + std::to_string(chunk_no()) + ">";
    return fail_chunk(owner, chunks_->getColumn(1).getInt64(),
                      "is stored without the artifact that owns it");
  }

  bool check_chunk(const Artifact &a, Sums &s) {
    SQLite::Statement &q = *chunks_;
    ChunkJob job;
    job.name = {a.id, size_t(s.chunks)};
    int64_t idx = q.getColumn(1).getInt64();
    if (idx != s.chunks)
      return fail_chunk(a.id, s.chunks, idx > s.chunks ? "is missing" : "is stored twice");
    int64_t raw_size = q.getColumn(2).getInt64();
    job.stored = blob(q.getColumn(7));
    SQLite::Column sha = q.getColumn(5);
    if (raw_size < 0 || sha.getBytes() != int(job.sha256.size()))
      return fail_chunk(a.id, idx, "has no SHA-256 or a negative size");
    std::memcpy(job.sha256.data(), sha.getBlob(), job.sha256.size());
    job.hash_of = q.getColumn(6).getString() == "stored" ? HashOf::kStored : HashOf::kRaw;
    job.raw_size = size_t(raw_size);
    int64_t newlines = q.getColumn(4).getInt64();
    ++s.chunks;
    ++r_.chunks;
    s.raw += raw_size;
    s.stored += int64_t(job.stored.size());
    s.newlines += newlines;
    r_.bytes += int64_t(job.stored.size());
    try {
      job.codec = parse_codec(q.getColumn(3).getString());
      if (r_.mode == VerifyMode::kQuick && job.hash_of == HashOf::kStored) return quick(a, job);
      return decode(a, job, newlines, s);
    } catch (const Error &e) {
      return fail(a.id, idx, e.what());
    }
  }

  // The stored bytes against their hash, without decoding them.
  bool quick(const Artifact &a, const ChunkJob &job) {
    if (hash_.update(job.stored).finish() != job.sha256)
      return fail_chunk(a.id, int64_t(job.name.idx), "does not match its SHA-256");
    if (job.codec == Codec::kRaw && job.stored.size() != job.raw_size)
      return fail_chunk(a.id, int64_t(job.name.idx), "does not hold its raw_size bytes");
    return true;
  }

  // The chunk as a reader gets it: decoded, checked, and (full) hashed
  // into its artifact's content.
  bool decode(const Artifact &a, ChunkJob &job, int64_t newlines, Sums &s) {
    raw_.resize(job.raw_size);
    job.dst = raw_.data();
    decoder_.decode(job);
    if (r_.mode != VerifyMode::kFull) return true;
    content_.update(raw_);
    if (std::count(raw_.begin(), raw_.end(), '\n') != newlines)
      return fail_chunk(a.id, int64_t(job.name.idx), "does not hold the lines recorded for it");
    if (!raw_.empty()) s.ends_in_newline = raw_.back() == '\n';
    return true;
  }

  bool check_sums(const Artifact &a, const Sums &s) {
    if (s.chunks != a.chunk_count || s.raw != a.raw_size || s.stored != a.stored_size)
      return fail(a.id, -1,
                  "artifact " + a.id + " has " + std::to_string(s.chunks) + " chunks of " +
                      std::to_string(s.raw) + " bytes (" + std::to_string(s.stored) +
                      " stored), not " + std::to_string(a.chunk_count) + " of " +
                      std::to_string(a.raw_size) + " (" + std::to_string(a.stored_size) + ")");
    if (r_.mode != VerifyMode::kFull) return true;
    util::Digest d = content_.finish();
    if (util::to_hex("art_", d) != a.id)
      return fail(a.id, -1, "artifact " + a.id + ": its content does not hash to its id");
    int64_t lines = s.newlines + (s.raw > 0 && !s.ends_in_newline ? 1 : 0);
    if (lines != a.line_count)
      return fail(a.id, -1, "artifact " + a.id + ": its line count is not its content's");
    return true;
  }

  bool fail_chunk(const std::string &artifact_id, int64_t idx, std::string_view what) {
    return fail(artifact_id, idx,
                ChunkName{artifact_id, size_t(idx)}.str() + " " + std::string(what));
  }

  bool fail(std::string artifact_id, int64_t chunk, std::string problem) {
    r_.ok = false;
    r_.artifact_id = std::move(artifact_id);
    r_.chunk = chunk;
    r_.problem = std::move(problem);
    return false;
  }

  VerifyReport &r_;
  store::Store::Stmt chunks_;
  bool more_;
  ChunkDecoder decoder_;
  util::Sha256 hash_, content_;
  std::string raw_;
};

} // namespace

std::string_view mode_name(VerifyMode m) {
  return m == VerifyMode::kFull ? "full" : m == VerifyMode::kQuick ? "quick" : "none";
}

VerifyMode parse_mode(std::string_view name) {
  return name == "full"    ? VerifyMode::kFull
         : name == "quick" ? VerifyMode::kQuick
                           : VerifyMode::kNone;
}

VerifyReport verify_artifacts(store::Store &store, VerifyMode mode) {
  VerifyReport r;
  r.mode = mode;
  if (mode == VerifyMode::kNone) return r;
  store::Store::ReadTransaction snapshot(store);
  auto artifacts = store.statement(kArtifacts);
  Checker checker(store, r);
  bool ok = true;
  while (ok && artifacts->executeStep()) {
    SQLite::Statement &q = *artifacts;
    ok = checker.check({q.getColumn(0).getInt64(), q.getColumn(1).getString(),
                        q.getColumn(2).getInt64(), q.getColumn(3).getInt64(),
                        q.getColumn(4).getInt64(), q.getColumn(5).getInt64()});
  }
  if (ok) checker.finish();
  return r;
}

} // namespace ctxdb::artifact
