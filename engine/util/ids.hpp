// ids.hpp — time-sortable unique ids and the clock.
//
// An id is a prefix plus a ULID: 48 bits of milliseconds and 80 random bits
// in Crockford base32 (26 characters), so ids sort by creation time and do
// not collide across processes. Within a process they are strictly
// increasing even inside one millisecond.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ctxdb::util {

int64_t now_ms();

// e.g. new_id("evt_") -> "evt_01JD3Q…"
std::string new_id(std::string_view prefix);

} // namespace ctxdb::util
