#include "util/ids.hpp"

#include "error.hpp"

#include <openssl/rand.h>

#include <chrono>
#include <mutex>

namespace ctxdb::util {

int64_t now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

namespace {

struct UlidState {
  std::mutex mu;
  int64_t last_ms = -1;
  uint8_t random[10] = {};
};

// Adds one to the 80-bit random part; false when it wraps.
bool increment(uint8_t (&r)[10]) {
  for (int i = 9; i >= 0; --i)
    if (++r[i] != 0) return true;
  return false;
}

} // namespace

std::string new_id(std::string_view prefix) {
  static UlidState state;
  uint8_t bytes[16];
  {
    std::lock_guard lock(state.mu);
    int64_t ms = now_ms();
    // Monotonic: a clock that stands still or steps back reuses the last
    // millisecond and counts up the random part instead.
    if (ms <= state.last_ms && increment(state.random)) {
      ms = state.last_ms;
    } else {
      if (RAND_bytes(state.random, sizeof state.random) != 1)
        throw Error(Code::kInternal, "RAND_bytes failed");
      if (ms <= state.last_ms) ms = state.last_ms + 1;
    }
    state.last_ms = ms;
    for (int i = 0; i < 6; ++i) bytes[i] = static_cast<uint8_t>(uint64_t(ms) >> (40 - 8 * i));
    for (int i = 0; i < 10; ++i) bytes[6 + i] = state.random[i];
  }
  static const char kCrockford[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
  std::string id(prefix);
  id.reserve(prefix.size() + 26);
  // 128 bits as 26 base32 digits: the first digit carries the top 3 bits.
  unsigned __int128 v = 0;
  for (uint8_t b : bytes) v = v << 8 | b;
  char digits[26];
  for (int i = 25; i >= 0; --i) {
    digits[i] = kCrockford[static_cast<unsigned>(v & 31)];
    v >>= 5;
  }
  id.append(digits, 26);
  return id;
}

} // namespace ctxdb::util
