// redactor.hpp — the redaction pass of the context compiler: replaces
// secrets (keys, tokens, passwords) in segment text before it can reach a
// model prompt, and counts what it replaced for the bundle's explanation.
//
// Two kinds of rules run in one left-to-right pass over the text:
// - the built-in detectors (builtin_rules(): names are stable, they appear
//   in bundle explanations). Each is a PCRE2 JIT pattern tried only where
//   a cheap 4-byte prefilter sees one of its anchors (its literal start:
//   "AKIA", "ghp_", "-----BEGIN", "password", …), so text with no anchor
//   costs one hashing scan and no regex work.
// - the policy's own rules: PCRE2 patterns (UTF mode), each searched over
//   the whole text with JIT.
// At each point the leftmost match wins (ties: built-ins first, then rule
// order); the scan resumes after it, so matches never overlap and a
// replacement is never matched again.
//
// Replacement: a rule's `replacement` is literal text (no group
// references); an empty one means "[REDACTED:<name>]". Where only part of
// a secret-bearing span must go (the password of a URL, the value of
// `password = …`, the token after `Bearer`), the built-in pattern keeps
// the rest out of the reported match with \K and lookarounds, so the
// replacement covers exactly the secret. Policy rules may do the same.
#pragma once

#include "json/json_writer.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ctxdb::policy {

struct RedactionRule {
  std::string name;
  std::string pattern;     // PCRE2 syntax, UTF mode
  std::string replacement; // literal; empty => "[REDACTED:<name>]"
};

struct RedactionHit {
  std::string rule;
  int64_t count = 0;
};

class Redactor {
public:
  // rules: the policy's own rules; builtin: also run the built-in
  // detectors. Throws ctxdb::Error kInvalidArg for an empty or repeated
  // rule name (a policy rule may not take a built-in's name), a pattern
  // that does not compile (naming the rule, PCRE2's message and the
  // offset), and a pattern that can match the empty string (PCRE2's
  // minimum length 0). A match that still comes out empty (`a\K`,
  // `(?=a)`) is skipped: it would redact nothing.
  Redactor(std::vector<RedactionRule> rules, bool builtin);
  ~Redactor();
  Redactor(Redactor &&) noexcept;
  Redactor &operator=(Redactor &&) noexcept;

  // Replaces every match in `text` (UTF-8; invalid sequences never match)
  // with its rule's replacement. Adds each matching rule's count to
  // `hits`: to the entry of that name if there is one (so a caller can
  // pass one vector for every segment of a compile), else a new entry
  // appended in rule order. Returns true when the text changed.
  //
  // Not thread-safe: the match data is allocated once per Redactor and
  // reused, so one thread at a time per Redactor (the compiler owns one
  // per compile).
  // False when no rule can match anything in text: the cheap test (the
  // built-ins' anchor scan; true whenever policy rules exist) that lets a
  // caller skip copying text it would otherwise hand to redact().
  bool may_match(std::string_view text) const;
  bool redact(std::string &text, std::vector<RedactionHit> &hits) const;

  static const std::vector<RedactionRule> &builtin_rules();

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Routes every string value a JsonWriter writes through the redactor,
// adding to `hits` (as redact() does). The caller owns the buffer, so a
// writer reused over many values allocates nothing for those that hold
// no secret.
class RedactingFilter final : public json::StringFilter {
public:
  RedactingFilter(const Redactor &r, std::string &buffer, std::vector<RedactionHit> &hits)
      : redactor_(r), buffer_(buffer), hits_(hits) {}
  std::string_view apply(std::string_view s) override {
    if (!redactor_.may_match(s)) return s;
    buffer_.assign(s);
    return redactor_.redact(buffer_, hits_) ? std::string_view(buffer_) : s;
  }

private:
  const Redactor &redactor_;
  std::string &buffer_;
  std::vector<RedactionHit> &hits_;
};

} // namespace ctxdb::policy
