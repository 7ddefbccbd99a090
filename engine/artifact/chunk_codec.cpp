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

Codec ChunkEncoder::encode(std::string_view raw, std::string &out) {
  out.resize(ZSTD_compressBound(raw.size()));
  size_t n = ZSTD_compress2(ctx_, out.data(), out.size(), raw.data(), raw.size());
  if (ZSTD_isError(n))
    throw Error(Code::kInternal, std::string("zstd compression failed: ") + ZSTD_getErrorName(n));
  if (n >= raw.size()) {
    out.clear();
    return Codec::kRaw;
  }
  out.resize(n);
  return Codec::kZstd;
}

ChunkDecoder::ChunkDecoder() : ctx_(ZSTD_createDCtx()) {
  if (!ctx_) throw std::bad_alloc();
}

ChunkDecoder::~ChunkDecoder() { ZSTD_freeDCtx(ctx_); }

void ChunkDecoder::decode(Codec codec, std::string_view stored, size_t raw_size,
                          const util::Digest &sha256, char *dst, const std::string &what) {
  decode_unchecked(codec, stored, raw_size, dst, what);
  if (hash_.update(dst, raw_size).finish() != sha256)
    throw Error(Code::kCorrupt, what + " does not match its SHA-256");
}

void ChunkDecoder::decode_unchecked(Codec codec, std::string_view stored, size_t raw_size,
                                    char *dst, const std::string &what) {
  if (codec == Codec::kRaw) {
    if (stored.size() != raw_size)
      throw Error(Code::kCorrupt, what + " holds " + std::to_string(stored.size()) +
                                      " bytes, not " + std::to_string(raw_size));
    std::memcpy(dst, stored.data(), raw_size);
  } else {
    size_t n = ZSTD_decompressDCtx(ctx_, dst, raw_size, stored.data(), stored.size());
    if (ZSTD_isError(n) || n != raw_size)
      throw Error(Code::kCorrupt,
                  what + " does not decompress to its " + std::to_string(raw_size) + " bytes" +
                      (ZSTD_isError(n) ? std::string(": ") + ZSTD_getErrorName(n) : std::string()));
  }
}

} // namespace ctxdb::artifact
