// error.hpp — the engine's one error type.
//
// Inside the engine a failure is thrown as ctxdb::Error where it is found;
// only capi/ turns it into a status code. The numbering matches ctxdb.h
// (capi static_asserts that), but the engine never includes the C header.
#pragma once

#include <stdexcept>
#include <string>

namespace ctxdb {

enum class Code : int {
  kOk = 0,
  kMisuse = 1,
  kInvalidArg = 2,
  kInvalidUtf8 = 3,
  kInvalidJson = 4,
  kNotFound = 5,
  kConflict = 6,
  kBusy = 7,
  kBudget = 8,
  kCheckFailed = 9,
  kCorrupt = 10,
  kIo = 11,
  kNoMem = 12,
  kSchema = 13,
  kReadOnly = 14,
  kInternal = 15,
  kNotADb = 16,
};

class Error : public std::runtime_error {
public:
  Error(Code code, const std::string &message) : std::runtime_error(message), code_(code) {}
  Code code() const noexcept { return code_; }

private:
  Code code_;
};

} // namespace ctxdb
