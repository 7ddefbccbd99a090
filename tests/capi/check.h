/*
 * check.h — the assertions of the C ABI tests.
 *
 * CHECK(expr) records one check; a failure prints file:line, the expression
 * and ctxdb_errmsg(NULL) (the last error of this thread), and is counted.
 * CHECK_RC compares status codes and prints both names. Every test's main
 * ends with `return check_finish("name");`, non-zero when anything failed.
 */
#ifndef CTXDB_TEST_CHECK_H
#define CTXDB_TEST_CHECK_H

#include <ctxdb/ctxdb.h>

#include <stdio.h>
#include <string.h>

static int check_total_ = 0;
static int check_failed_ = 0;

static inline const char *check_msg_(const char *m) { return m ? m : "(null)"; }

/* Records one check; returns ok so callers can guard dependent checks. */
static inline int check_at(int ok, const char *file, int line, const char *expr) {
  ++check_total_;
  if (!ok) {
    ++check_failed_;
    fprintf(stderr, "%s:%d: CHECK failed: %s\n    ctxdb_errmsg(NULL): %s\n", file, line, expr,
            check_msg_(ctxdb_errmsg(NULL)));
    fflush(stderr);
  }
  return ok;
}

static inline int check_rc_at(int got, int want, const char *file, int line, const char *expr) {
  ++check_total_;
  if (got != want) {
    ++check_failed_;
    fprintf(stderr,
            "%s:%d: CHECK_RC failed: %s\n    got %s (%d), want %s (%d)\n"
            "    ctxdb_errmsg(NULL): %s\n",
            file, line, expr, ctxdb_errstr(got), got, ctxdb_errstr(want), want,
            check_msg_(ctxdb_errmsg(NULL)));
    fflush(stderr);
  }
  return got == want;
}

#define CHECK(expr) check_at((expr) != 0, __FILE__, __LINE__, #expr)
#define CHECK_RC(call, want) check_rc_at((call), (want), __FILE__, __LINE__, #call)
/* For helpers that report at their caller's line. */
#define CHECK_AT(file, line, expr) check_at((expr) != 0, file, line, #expr)

static inline int check_finish(const char *name) {
  fprintf(stderr, "%s: %d checks, %d failed\n", name, check_total_, check_failed_);
  return check_failed_ ? 1 : 0;
}

#endif /* CTXDB_TEST_CHECK_H */
