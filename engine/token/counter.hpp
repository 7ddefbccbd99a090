// counter.hpp — how the engine counts tokens. Projections count each
// message once, at append, and store the count with the counter's name, so
// a later change of counter is visible instead of silently mixing counts.
#pragma once

#include <cstdint>
#include <string_view>

namespace ctxdb::token {

class Counter {
public:
  virtual ~Counter() = default;
  // Stored next to every count it produced, e.g. "approx-v1".
  virtual std::string_view name() const = 0;
  virtual int64_t count(std::string_view text) const = 0;
};

// The default until an exact tokenizer is configured: an estimate from the
// shape of the text that lands near cl100k/o200k counts for English prose
// and code. A word is a token, and long words one more per six letters beyond four;
// digits one per three; punctuation one each; non-ASCII one per two bytes;
// newlines and indentation runs one each. It classifies 16 bytes at a time
// (SSE2), since every message of every append is counted. Deterministic,
// allocation-free.
class ApproxCounter final : public Counter {
public:
  std::string_view name() const override { return "approx-v1"; }
  int64_t count(std::string_view text) const override;
};

// The counter the engine uses.
const Counter &default_counter();

} // namespace ctxdb::token
