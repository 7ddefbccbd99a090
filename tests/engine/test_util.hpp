// Helpers shared by the engine tests: a scratch directory per test.
#pragma once

#include "error.hpp"

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

// The code of the Error fn throws, or kOk.
inline Code code_of(auto &&fn) {
  try {
    fn();
    return Code::kOk;
  } catch (const Error &e) {
    return e.code();
  }
}

} // namespace ctxdb::test
