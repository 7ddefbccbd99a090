// json_writer.hpp — compact JSON output.
//
// Every JSON the engine returns is built here, so all bindings see the same
// bytes: no spaces, keys in the order written, strings escaped minimally
// (", \, and control characters; UTF-8 passes through).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ctxdb::json {

class JsonWriter {
public:
  JsonWriter() { out_.reserve(256); }

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

  // key + value in one call.
  template <class T> JsonWriter &field(std::string_view k, const T &v) {
    key(k);
    return value(v);
  }
  JsonWriter &raw_field(std::string_view k, std::string_view json) {
    key(k);
    return raw(json);
  }

  const std::string &str() const { return out_; }
  std::string take() { return std::move(out_); }

private:
  void before_value();
  void open(char bracket);
  std::string out_;
  // Per open container: no element written yet. A fixed stack (the engine
  // writes shallow documents) keeps the writer free of allocations.
  static constexpr int kMaxDepth = 32;
  bool first_[kMaxDepth] = {};
  int depth_ = 0;
  bool after_key_ = false;
};

// Appends s as a quoted, escaped JSON string.
void append_quoted(std::string &out, std::string_view s);

} // namespace ctxdb::json
