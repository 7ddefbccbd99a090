// number.hpp — a double as JSON: confidences and scores, rounded to six
// significant digits so the output does not carry float noise.
#pragma once

#include "json/json_writer.hpp"

#include <charconv>
#include <cmath>

namespace ctxdb::memory {

inline json::JsonWriter &write_number(json::JsonWriter &w, double d) {
  if (!std::isfinite(d)) return w.null();
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::general, 6);
  return w.raw(std::string_view(buf, size_t(r.ptr - buf)));
}

} // namespace ctxdb::memory
