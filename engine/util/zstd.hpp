// zstd.hpp — zstd frames in and out, each object reusing one zstd context
// (creating a context per frame costs more than compressing a small one).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

struct ZSTD_CCtx_s;
struct ZSTD_DCtx_s;

namespace ctxdb::util {

// The level for values that are written often and read rarely (stored
// agent states): zstd's fastest regular level still shrinks compact JSON
// about tenfold.
inline constexpr int kZstdFastLevel = 1;

class ZstdCompressor {
public:
  explicit ZstdCompressor(int level = kZstdFastLevel);
  ~ZstdCompressor();
  ZstdCompressor(const ZstdCompressor &) = delete;
  ZstdCompressor &operator=(const ZstdCompressor &) = delete;

  // One frame holding raw (its size recorded in the frame header), valid
  // until the next call.
  std::string_view compress(std::string_view raw);

private:
  ZSTD_CCtx_s *ctx_;
  // Grown to the largest bound seen and never shrunk or cleared (resizing
  // a std::string per frame zero-fills it each time).
  std::unique_ptr<char[]> buf_;
  size_t cap_ = 0;
};

class ZstdDecompressor {
public:
  ZstdDecompressor();
  ~ZstdDecompressor();
  ZstdDecompressor(const ZstdDecompressor &) = delete;
  ZstdDecompressor &operator=(const ZstdDecompressor &) = delete;

  // The bytes of one frame that records its size, as compress() writes it.
  // Throws kCorrupt naming `what` ("the state of branch 3") when the bytes
  // are not such a frame or do not decompress to the size it records.
  std::string decompress(std::string_view frame, std::string_view what);

private:
  ZSTD_DCtx_s *ctx_;
};

} // namespace ctxdb::util
