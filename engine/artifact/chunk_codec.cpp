#include "artifact/chunk_codec.hpp"

#include "error.hpp"

#include <zstd.h>

#include <cstring>
#include <new>

namespace ctxdb::artifact {

std::string_view codec_name(Codec c) { return c == Codec::kZstd ? "zstd" : "raw"; }

Codec parse_codec(std::string_view name) {
  if (name == "zstd") return Codec::kZstd;
  if (name == "raw") return Codec::kRaw;
  throw Error(Code::kCorrupt, "artifact chunk with unknown codec '" + std::string(name) + "'");
}

ChunkEncoder::ChunkEncoder(int level) : ctx_(ZSTD_createCCtx()) {
  if (!ctx_) throw std::bad_alloc();
  ZSTD_CCtx_setParameter(ctx_, ZSTD_c_compressionLevel, level);
}

ChunkEncoder::~ChunkEncoder() { ZSTD_freeCCtx(ctx_); }

Codec ChunkEncoder::encode(std::string_view raw, std::string_view *frame) {
  size_t bound = ZSTD_compressBound(raw.size());
  if (bound > cap_) {
    buf_.reset(new char[bound]);
    cap_ = bound;
  }
  size_t n = ZSTD_compress2(ctx_, buf_.get(), cap_, raw.data(), raw.size());
  if (ZSTD_isError(n))
    throw Error(Code::kInternal, std::string("zstd compression failed: ") + ZSTD_getErrorName(n));
  if (n >= raw.size()) return Codec::kRaw;
  *frame = std::string_view(buf_.get(), n);
  return Codec::kZstd;
}

ChunkDecoder::ChunkDecoder() : ctx_(ZSTD_createDCtx()) {
  if (!ctx_) throw std::bad_alloc();
}

ChunkDecoder::~ChunkDecoder() { ZSTD_freeDCtx(ctx_); }

std::string ChunkName::str() const {
  return "chunk " + std::to_string(idx) + " of artifact " + std::string(artifact_id);
}

void ChunkDecoder::decode(Codec codec, std::string_view stored, size_t raw_size, HashOf hash_of,
                          const util::Digest &sha256, char *dst, const ChunkName &name) {
  if (hash_of == HashOf::kStored && hash_.update(stored).finish() != sha256)
    throw Error(Code::kCorrupt, name.str() + " does not match its SHA-256");
  decode_unchecked(codec, stored, raw_size, dst, name);
  if (hash_of == HashOf::kRaw && hash_.update(dst, raw_size).finish() != sha256)
    throw Error(Code::kCorrupt, name.str() + " does not match its SHA-256");
}

void ChunkDecoder::decode_unchecked(Codec codec, std::string_view stored, size_t raw_size,
                                    char *dst, const ChunkName &name) {
  if (codec == Codec::kRaw) {
    if (stored.size() != raw_size)
      throw Error(Code::kCorrupt, name.str() + " holds " + std::to_string(stored.size()) +
                                      " bytes, not " + std::to_string(raw_size));
    std::memcpy(dst, stored.data(), raw_size);
    return;
  }
  size_t n = ZSTD_decompressDCtx(ctx_, dst, raw_size, stored.data(), stored.size());
  if (ZSTD_isError(n) || n != raw_size)
    throw Error(Code::kCorrupt,
                name.str() + " does not decompress to its " + std::to_string(raw_size) + " bytes" +
                    (ZSTD_isError(n) ? std::string(": ") + ZSTD_getErrorName(n) : std::string()));
}

} // namespace ctxdb::artifact
