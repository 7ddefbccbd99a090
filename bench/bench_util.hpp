// bench_util.hpp — what the C-ABI benchmarks share: failing loudly on a
// status code, taking a returned buffer, and medians.
#pragma once

#include <ctxdb/ctxdb.h>

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>
#include <vector>

namespace bench {

using Clock = std::chrono::steady_clock;

// Throws unless rc is OK (or an iterator's ROW/DONE).
inline void check(int rc, ctxdb_db *db, const char *what) {
  if (rc != CTXDB_OK && rc != CTXDB_ROW && rc != CTXDB_DONE)
    throw std::runtime_error(std::string(what) + ": " + ctxdb_errstr(rc) + ": " + ctxdb_errmsg(db));
}

// The buffer a call returned, freed. rc is evaluated (the call made)
// before *out is read.
inline std::string call(int rc, ctxdb_db *db, char **out, const char *what) {
  check(rc, db, what);
  std::string s(*out);
  ctxdb_free(*out);
  return s;
}

inline double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

} // namespace bench
