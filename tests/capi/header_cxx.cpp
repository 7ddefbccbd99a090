// header_cxx.cpp — ctxdb.h compiles alone as strict C++20 with every warning
// an error (-std=c++20 -pedantic -Werror -Wall -Wextra); the build failing
// is the test.
#include <ctxdb/ctxdb.h>

static_assert(CTXDB_OK == 0 && CTXDB_MISUSE == 1 && CTXDB_NOTADB == 16);
static_assert(CTXDB_ROW == 100 && CTXDB_DONE == 101);
static_assert(CTXDB_VERSION_NUMBER ==
              CTXDB_VERSION_MAJOR * 1000000 + CTXDB_VERSION_MINOR * 1000 + CTXDB_VERSION_PATCH);

int main() {
  // C linkage and the declared types.
  int (*open_fn)(const char *, const char *, size_t, ctxdb_db **) = ctxdb_open;
  const char *(*errmsg_fn)(const ctxdb_db *) = ctxdb_errmsg;
  (void)open_fn;
  (void)errmsg_fn;
  return ctxdb_abi_version() == CTXDB_ABI_VERSION ? 0 : 1;
}
