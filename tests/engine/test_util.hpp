// Helpers shared by the engine tests: a scratch directory per test.
#pragma once

#include "error.hpp"

#include <simdjson.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace ctxdb::test {

class TempDir {
public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "ctxdb-test-XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string file(const std::string &name) const { return (path_ / name).string(); }

private:
  std::filesystem::path path_;
};

// The code fn() throws, or kOk.
template <class Fn> Code code_of(Fn &&fn) {
  try {
    fn();
    return Code::kOk;
  } catch (const Error &e) {
    return e.code();
  }
}

// A top-level field of a JSON object: a string's value, else its JSON.
inline std::string field(const std::string &json, const char *key) {
  simdjson::dom::parser p;
  simdjson::dom::element e = p.parse(json)[key];
  if (e.is_string()) return std::string(e.get_string().value());
  return simdjson::minify(e);
}

} // namespace ctxdb::test
