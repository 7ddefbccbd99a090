// base64.hpp — decoding the base64 images hosts put inside messages
// (OpenSSL's decoder, with the strict checks it leaves out), and encoding
// artifact chunks for the export stream.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace ctxdb::util {

// The bytes `text` encodes (standard alphabet, '=' padding, line breaks
// and other ASCII whitespace ignored), or nullopt when it is not base64.
std::optional<std::string> decode_base64(std::string_view text);

// bytes as base64: standard alphabet, '=' padding, no line breaks.
std::string encode_base64(std::string_view bytes);

} // namespace ctxdb::util
