// image_info.hpp — an image's pixel size from the first bytes of its file
// (PNG, JPEG, GIF, WebP), and the tokens each provider documents for an
// image of that size: what a compile counts an image in a bundle as.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace ctxdb::artifact {

struct ImageSize {
  int64_t width = 0, height = 0;
};

// How many leading bytes image_size needs at most: a JPEG's frame header
// may follow EXIF data (thumbnails included) of up to 64 KiB.
inline constexpr int64_t kImageHeadBytes = 64 * 1024 + 1024;

// The size read from `head` (the file's first bytes), or nullopt when it
// is none of the four formats or is cut before its size.
std::optional<ImageSize> image_size(std::string_view head);

// Image tokens by each provider's documented rule (see image_info.cpp).
int64_t anthropic_image_tokens(ImageSize s);
int64_t openai_image_tokens(ImageSize s);
int64_t gemini_image_tokens(ImageSize s);
// The largest of the three: what a bundle for no one provider counts.
int64_t max_image_tokens(ImageSize s);

} // namespace ctxdb::artifact
