#include "artifact/image_info.hpp"

#include <algorithm>
#include <cmath>

namespace ctxdb::artifact {

namespace {

uint32_t be16(std::string_view b, size_t at) {
  return uint32_t(uint8_t(b[at])) << 8 | uint8_t(b[at + 1]);
}
uint32_t be32(std::string_view b, size_t at) { return be16(b, at) << 16 | be16(b, at + 2); }
uint32_t le16(std::string_view b, size_t at) {
  return uint32_t(uint8_t(b[at])) | uint32_t(uint8_t(b[at + 1])) << 8;
}
uint32_t le24(std::string_view b, size_t at) {
  return le16(b, at) | uint32_t(uint8_t(b[at + 2])) << 16;
}

std::optional<ImageSize> sized(uint32_t w, uint32_t h) {
  if (w == 0 || h == 0) return std::nullopt;
  return ImageSize{int64_t(w), int64_t(h)};
}

// PNG: the signature, then the IHDR chunk: width and height, big-endian.
std::optional<ImageSize> png(std::string_view b) {
  if (b.size() < 24 || b.substr(12, 4) != "IHDR") return std::nullopt;
  return sized(be32(b, 16), be32(b, 20));
}

// GIF: the logical screen's width and height, little-endian.
std::optional<ImageSize> gif(std::string_view b) {
  if (b.size() < 10) return std::nullopt;
  return sized(le16(b, 6), le16(b, 8));
}

// WebP: a RIFF file whose first chunk is VP8 (lossy: a key frame's 14-bit
// sizes), VP8L (lossless: 14-bit sizes minus one after the 0x2f byte) or
// VP8X (extended: 24-bit canvas sizes minus one).
std::optional<ImageSize> webp(std::string_view b) {
  if (b.size() < 30) return std::nullopt;
  std::string_view chunk = b.substr(12, 4);
  if (chunk == "VP8 ") return sized(le16(b, 26) & 0x3fff, le16(b, 28) & 0x3fff);
  if (chunk == "VP8L" && uint8_t(b[20]) == 0x2f) {
    uint32_t bits = le16(b, 21) | uint32_t(le16(b, 23)) << 16;
    return sized((bits & 0x3fff) + 1, ((bits >> 14) & 0x3fff) + 1);
  }
  if (chunk == "VP8X") return sized(le24(b, 24) + 1, le24(b, 27) + 1);
  return std::nullopt;
}

// JPEG: the markers after SOI, each with its length, up to a start of
// frame (SOF0..SOF15 but DHT C4, JPG C8, DAC CC), which holds height then
// width.
std::optional<ImageSize> jpeg(std::string_view b) {
  size_t at = 2;
  while (at + 4 <= b.size()) {
    if (uint8_t(b[at]) != 0xff) return std::nullopt;
    uint8_t marker = uint8_t(b[at + 1]);
    if (marker == 0xff) { // fill byte
      ++at;
      continue;
    }
    if (marker == 0xd8 || (marker >= 0xd0 && marker <= 0xd7) || marker == 0x01) {
      at += 2; // no length
      continue;
    }
    uint32_t length = be16(b, at + 2);
    bool sof =
        marker >= 0xc0 && marker <= 0xcf && marker != 0xc4 && marker != 0xc8 && marker != 0xcc;
    if (sof) {
      if (at + 9 > b.size()) return std::nullopt;
      return sized(be16(b, at + 7), be16(b, at + 5));
    }
    if (marker == 0xd9 || marker == 0xda || length < 2) return std::nullopt;
    at += 2 + length;
  }
  return std::nullopt;
}

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Scales (w, h) down, keeping the aspect, so neither exceeds the limit
// for its side.
ImageSize scaled(ImageSize s, double factor) {
  return {std::max<int64_t>(1, int64_t(std::floor(double(s.width) * factor))),
          std::max<int64_t>(1, int64_t(std::floor(double(s.height) * factor)))};
}

} // namespace

std::optional<ImageSize> image_size(std::string_view b) {
  if (b.starts_with("\x89PNG\r\n\x1a\n")) return png(b);
  if (b.starts_with("GIF87a") || b.starts_with("GIF89a")) return gif(b);
  if (b.size() >= 12 && b.starts_with("RIFF") && b.substr(8, 4) == "WEBP") return webp(b);
  if (b.starts_with("\xff\xd8")) return jpeg(b);
  return std::nullopt;
}

// https://docs.anthropic.com/en/docs/build-with-claude/vision ("Evaluate
// image size"): an image whose long edge exceeds 1568 px, or that would
// cost more than about 1600 tokens, is first scaled down, keeping its
// aspect; then tokens = (width px * height px) / 750.
int64_t anthropic_image_tokens(ImageSize s) {
  int64_t edge = std::max(s.width, s.height);
  if (edge > 1568) s = scaled(s, 1568.0 / double(edge));
  double area = double(s.width) * double(s.height);
  if (area / 750.0 > 1600.0) s = scaled(s, std::sqrt(1600.0 * 750.0 / area));
  return ceil_div(s.width * s.height, 750);
}

// https://platform.openai.com/docs/guides/images-vision ("Calculating
// costs", detail high, GPT-4o family): fit within 2048 x 2048, then scale
// so the shortest side is 768 px; count the 512 px tiles; 170 tokens per
// tile plus 85.
int64_t openai_image_tokens(ImageSize s) {
  int64_t edge = std::max(s.width, s.height);
  if (edge > 2048) s = scaled(s, 2048.0 / double(edge));
  int64_t shortest = std::min(s.width, s.height);
  if (shortest > 768) s = scaled(s, 768.0 / double(shortest));
  return 85 + 170 * ceil_div(s.width, 512) * ceil_div(s.height, 512);
}

// https://ai.google.dev/gemini-api/docs/tokens ("Multimodal tokens",
// images): both sides at most 384 px is 258 tokens; a larger image is cut
// into 768 x 768 tiles, 258 tokens each.
int64_t gemini_image_tokens(ImageSize s) {
  if (s.width <= 384 && s.height <= 384) return 258;
  return 258 * ceil_div(s.width, 768) * ceil_div(s.height, 768);
}

int64_t max_image_tokens(ImageSize s) {
  return std::max({anthropic_image_tokens(s), openai_image_tokens(s), gemini_image_tokens(s)});
}

} // namespace ctxdb::artifact
