// base64.hpp — decoding the base64 images hosts put inside messages
// (OpenSSL's decoder, with the strict checks it leaves out).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace ctxdb::util {

// The bytes `text` encodes (standard alphabet, '=' padding, line breaks
// and other ASCII whitespace ignored), or nullopt when it is not base64.
std::optional<std::string> decode_base64(std::string_view text);

} // namespace ctxdb::util
