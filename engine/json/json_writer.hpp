// json_writer.hpp — compact JSON output.
//
// Every JSON the engine returns is built here, so all bindings see the same
// bytes: no spaces, keys in the order written, strings escaped minimally
// (", \, and control characters; UTF-8 passes through). The output is
// always UTF-8: a string or raw value holding bytes that are not (a
// damaged file's) has each maximal invalid sequence replaced by U+FFFD.
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace ctxdb::json {

// Rewrites the string values a writer writes (never keys): the context
// compiler's redaction runs through one, so a secret is caught in any
// field of any block without the writers of those blocks knowing.
class StringFilter {
public:
  // The text to write instead of s; may point into the filter's own
  // buffer, valid until the next call.
  virtual std::string_view apply(std::string_view s) = 0;

protected:
  ~StringFilter() = default;
};

class JsonWriter {
public:
  JsonWriter() { out_.reserve(256); }
  // Sized up front, for a caller that knows roughly how much it writes.
  explicit JsonWriter(size_t capacity) { out_.reserve(capacity); }

  JsonWriter &begin_object();
  JsonWriter &end_object();
  JsonWriter &begin_array();
  JsonWriter &end_array();
  JsonWriter &key(std::string_view k);

  JsonWriter &value(std::string_view s);
  JsonWriter &value(const char *s) { return value(std::string_view(s)); }
  JsonWriter &value(int64_t n);
  JsonWriter &boolean(bool b);
  JsonWriter &null();
  // Inserts already-serialized JSON (e.g. a stored payload) as a value.
  JsonWriter &raw(std::string_view json);
  // A parsed value, written as canonical() writes it, its strings passed
  // through the filter when one is set.
  JsonWriter &element(simdjson::dom::element e);
  // String values written from now on go through `f` (nullptr: none).
  JsonWriter &set_string_filter(StringFilter *f) {
    filter_ = f;
    return *this;
  }

  // key + value in one call.
  template <class T> JsonWriter &field(std::string_view k, const T &v) {
    key(k);
    return value(v);
  }
  JsonWriter &raw_field(std::string_view k, std::string_view json) {
    key(k);
    return raw(json);
  }

  // Room for n more bytes, for a caller that knows roughly what it writes.
  JsonWriter &reserve(size_t n) {
    out_.reserve(out_.size() + n);
    return *this;
  }

  const std::string &str() const { return out_; }
  std::string take() { return std::move(out_); }

private:
  void before_value();
  void open(char bracket);
  std::string out_;
  // Per open container, a bit: no element written yet. A fixed stack as
  // deep as simdjson parses (element() rewrites any parsed document) keeps
  // the writer free of allocations.
  static constexpr int kMaxDepth = 1024;
  uint64_t first_[kMaxDepth / 64] = {};
  int depth_ = 0;
  bool after_key_ = false;
  StringFilter *filter_ = nullptr;
};

// Appends s as a quoted, escaped JSON string (invalid UTF-8 as U+FFFD).
void append_quoted(std::string &out, std::string_view s);

// s with each maximal invalid UTF-8 sequence replaced by U+FFFD (as the
// Unicode standard's "substitution of maximal subparts", which Python's
// and JavaScript's decoders follow too).
std::string valid_utf8(std::string_view s);

} // namespace ctxdb::json
