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
// shape of the text (words, digits, punctuation, non-ASCII bytes) that
// lands near cl100k/o200k counts for English prose and code. Deterministic,
// allocation-free.
class ApproxCounter final : public Counter {
public:
  std::string_view name() const override { return "approx-v1"; }
  int64_t count(std::string_view text) const override;
};

// The counter the engine uses.
const Counter &default_counter();

} // namespace ctxdb::token
