// bpe.hpp — exact token counts: tiktoken's byte-pair encodings
// (o200k_base, cl100k_base) loaded from standard .tiktoken rank files.
//
// Encoding is tiktoken's, step for step: PCRE2 (UTF, UCP, JIT) splits the
// text with the encoding's pattern, a piece that is a token is that token,
// any other piece is merged pairwise, lowest rank first (leftmost on ties),
// from single bytes. Special tokens are disallowed (an error naming them),
// allowed (their ids), or text (encode_ordinary).
//
// Rank files: "<data_dir>/<encoding>.tiktoken" (lines "base64 rank"),
// checked against the SHA-256 of the standard file before use; a missing
// or different file is an error at load, never a wrong count. The data
// dir is the database's "tokenizer_data_dir", else $CTXDB_TOKENIZER_DATA,
// else the standard files the library carries (token/embedded_ranks.hpp).
//
// Text must be valid UTF-8 (kInvalidUtf8 naming the byte offset
// otherwise): tiktoken encodes strings, so there is no reference count for
// bytes that are not text.
#pragma once

#include "token/counter.hpp"
#include "token/encodings.hpp"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ctxdb::token {

// What to do with the text of a special token ("<|endoftext|>").
enum class Specials {
  kDisallow, // kInvalidArg naming the special tokens found (tiktoken's default)
  kAllow,    // encode each as its special id
  kText,     // encode it as ordinary text (tiktoken's encode_ordinary)
};
// "disallow" | "allow" | "text"; kInvalidArg otherwise.
Specials parse_specials(std::string_view name);

class Bpe {
public:
  // Loads the ranks of `spec` from the rank file at `path`: kNotFound when
  // it is missing, kCorrupt when its SHA-256 is not the standard file's.
  static std::unique_ptr<Bpe> load(const EncodingSpec &spec, const std::string &path);
  // The same from a rank file's bytes; `what` names them in errors.
  static std::unique_ptr<Bpe> from_bytes(const EncodingSpec &spec, std::string_view bytes,
                                         const std::string &what);
  ~Bpe();
  Bpe(const Bpe &) = delete;
  Bpe &operator=(const Bpe &) = delete;

  const EncodingSpec &spec() const;
  // Thread-safe; count() builds no id vector.
  int64_t count(std::string_view text, Specials specials) const;
  void encode(std::string_view text, Specials specials, std::vector<uint32_t> &out) const;
  // The bytes of the tokens (kInvalidArg for an id that is none).
  std::string decode(std::span<const uint32_t> ids) const;

private:
  struct Impl;
  explicit Bpe(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// An exact counter: name() is the encoding's name; special tokens count as
// text, as a host's own text would.
class BpeCounter final : public Counter {
public:
  explicit BpeCounter(const Bpe &bpe) : bpe_(bpe) {}
  std::string_view name() const override { return bpe_.spec().name; }
  int64_t count(std::string_view text) const override { return bpe_.count(text, Specials::kText); }
  const Bpe &bpe() const { return bpe_; }

private:
  const Bpe &bpe_;
};

// The "tokenizer_data_dir" of a database config (already validated
// against config.schema.json; empty text is {}), "" when absent.
std::string config_data_dir(std::string_view config_json);
// The database config's "token_counter" ("" when it names none).
std::string config_counter(std::string_view config_json);

// The data dir to use: `configured` when not empty, else the environment's
// CTXDB_TOKENIZER_DATA, else "".
std::string tokenizer_data_dir(std::string_view configured);

// The encoding `name` with its ranks from data_dir (tokenizer_data_dir()
// decides), loaded once per process and rank file and kept; thread-safe.
// An unknown name is kInvalidArg; no data dir and no embedded ranks
// kNotFound; see Bpe::load.
const Bpe &encoding_named(std::string_view name, std::string_view configured_data_dir);

// A counter by name: "estimate" (or "approx-v2") is default_counter(),
// an encoding name its BpeCounter (loaded as encoding_named does).
const Counter &counter_named(std::string_view name, std::string_view configured_data_dir);

} // namespace ctxdb::token
