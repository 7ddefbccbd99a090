// chunk_codec.hpp — one artifact chunk in and out of its stored form.
//
// Each chunk is its own zstd frame, so any chunk can be decoded without the
// others; a chunk that compression would not shrink (already-compressed
// images, random bytes) is stored raw. Decoding checks the chunk's SHA-256,
// so a caller never receives bytes that differ from what was put.
#pragma once

#include "util/sha256.hpp"
#include "util/zstd.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

struct ZSTD_DCtx_s;

namespace ctxdb::artifact {

enum class Codec { kZstd, kRaw };

std::string_view codec_name(Codec c);
// Throws kCorrupt on a name the schema does not allow.
Codec parse_codec(std::string_view name);

class ChunkEncoder {
public:
  explicit ChunkEncoder(int level);

  // Compresses raw; returns kZstd with the frame in *frame (valid until
  // the next encode), or kRaw when the frame would not be smaller than raw.
  Codec encode(std::string_view raw, std::string_view *frame);

private:
  util::ZstdCompressor zstd_;
};

// Names a chunk in error messages ("chunk 3 of artifact art_…"), built
// only when there is an error to report.
struct ChunkName {
  std::string_view artifact_id;
  size_t idx = 0;
  std::string str() const;
};

// What a chunk's stored SHA-256 covers (schema/sql/010_artifact_chunk_hash.sql).
enum class HashOf { kRaw, kStored };

// One chunk to decode: its stored bytes, what they hash to, and where its
// raw_size bytes go.
struct ChunkJob {
  Codec codec = Codec::kRaw;
  std::string_view stored;
  size_t raw_size = 0;
  HashOf hash_of = HashOf::kStored;
  util::Digest sha256{};
  char *dst = nullptr;
  ChunkName name;
};

class AsideHasher;

class ChunkDecoder {
public:
  ChunkDecoder();
  ~ChunkDecoder();
  ChunkDecoder(const ChunkDecoder &) = delete;
  ChunkDecoder &operator=(const ChunkDecoder &) = delete;

  // Writes the chunk's raw bytes to job.dst, checked against job.sha256
  // (of the stored bytes before decoding them, or of the raw bytes after);
  // throws kCorrupt naming the chunk on any mismatch.
  void decode(const ChunkJob &job);
  // Writes the chunk's raw_size bytes to dst without a hash check (the
  // caller checked the stored bytes); kCorrupt when they do not decode to
  // exactly raw_size bytes.
  void decode_unchecked(Codec codec, std::string_view stored, size_t raw_size, char *dst,
                        const ChunkName &name);

  // While one with on = true lives, decode() hashes each stored frame on
  // a second thread as it decompresses the frame (the SHA-256 of a frame
  // costs a fifth of decompressing it); a read of many chunks holds one.
  // Nested guards, and a thread that cannot be started, leave decoding as
  // it is.
  class HashAside {
  public:
    HashAside(ChunkDecoder &decoder, bool on);
    ~HashAside();
    HashAside(const HashAside &) = delete;
    HashAside &operator=(const HashAside &) = delete;

  private:
    ChunkDecoder &decoder_;
    bool owner_ = false;
  };

private:
  ZSTD_DCtx_s *ctx_;
  util::Sha256 hash_;
  std::unique_ptr<AsideHasher> aside_; // while a HashAside lives
};

} // namespace ctxdb::artifact
