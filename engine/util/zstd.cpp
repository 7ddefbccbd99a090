#include "util/zstd.hpp"

#include "error.hpp"

#include <zstd.h>

#include <cstdint>
#include <new>

namespace ctxdb::util {

ZstdCompressor::ZstdCompressor(int level) : ctx_(ZSTD_createCCtx()) {
  if (!ctx_) throw std::bad_alloc();
  ZSTD_CCtx_setParameter(ctx_, ZSTD_c_compressionLevel, level);
}

ZstdCompressor::~ZstdCompressor() { ZSTD_freeCCtx(ctx_); }

std::string_view ZstdCompressor::compress(std::string_view raw) {
  size_t bound = ZSTD_compressBound(raw.size());
  if (bound > cap_) {
    buf_.reset(new char[bound]);
    cap_ = bound;
  }
  size_t n = ZSTD_compress2(ctx_, buf_.get(), cap_, raw.data(), raw.size());
  if (ZSTD_isError(n))
    throw Error(Code::kInternal, std::string("zstd compression failed: ") + ZSTD_getErrorName(n));
  return {buf_.get(), n};
}

ZstdDecompressor::ZstdDecompressor() : ctx_(ZSTD_createDCtx()) {
  if (!ctx_) throw std::bad_alloc();
}

ZstdDecompressor::~ZstdDecompressor() { ZSTD_freeDCtx(ctx_); }

namespace {

// Whether the bytes begin a regular zstd frame. A skippable frame (magic
// 0x184D2A5?) records a content size of 0 and would read as "".
bool has_frame_magic(std::string_view frame) {
  if (frame.size() < 4) return false;
  auto byte = [&](size_t i) { return uint32_t(static_cast<unsigned char>(frame[i])); };
  return (byte(0) | byte(1) << 8 | byte(2) << 16 | byte(3) << 24) == ZSTD_MAGICNUMBER;
}

} // namespace

std::string ZstdDecompressor::decompress(std::string_view frame, std::string_view what) {
  unsigned long long size = has_frame_magic(frame)
                                ? ZSTD_getFrameContentSize(frame.data(), frame.size())
                                : ZSTD_CONTENTSIZE_ERROR;
  if (size == ZSTD_CONTENTSIZE_ERROR || size == ZSTD_CONTENTSIZE_UNKNOWN)
    throw Error(Code::kCorrupt, std::string(what) + " is not a zstd frame that records its size");
  // The size comes from the file: a forged header must not make us
  // allocate what its bytes could never hold. A block yields at most 128
  // KiB and takes at least 4 bytes (an RLE block: a 3-byte header and the
  // byte it repeats).
  if (size / ZSTD_BLOCKSIZE_MAX > frame.size() / 4)
    throw Error(Code::kCorrupt, std::string(what) + " claims " + std::to_string(size) +
                                    " bytes, more than its frame can hold");
  std::string out;
  try {
    out.assign(size_t(size), '\0');
  } catch (const std::bad_alloc &) {
    throw Error(Code::kNoMem, std::string(what) + " claims " + std::to_string(size) +
                                  " bytes, more than could be allocated");
  }
  size_t n = ZSTD_decompressDCtx(ctx_, out.data(), out.size(), frame.data(), frame.size());
  if (ZSTD_isError(n) || n != out.size())
    throw Error(Code::kCorrupt,
                std::string(what) + " does not decompress to its " + std::to_string(size) +
                    " bytes" +
                    (ZSTD_isError(n) ? std::string(": ") + ZSTD_getErrorName(n) : std::string()));
  return out;
}

} // namespace ctxdb::util
