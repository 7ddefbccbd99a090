/*
 * header_c99.c — ctxdb.h compiles alone as strict C99 with every warning an
 * error (-std=c99 -pedantic -Werror -Wall -Wextra). The build failing is
 * the test; the run checks that the macros match the library.
 */
#include <ctxdb/ctxdb.h>

/* C99 has no _Static_assert: a negative array size stops the build. */
typedef char ctxdb_assert_ok_is_0[(CTXDB_OK == 0) ? 1 : -1];
typedef char ctxdb_assert_notadb_is_16[(CTXDB_NOTADB == 16) ? 1 : -1];
typedef char ctxdb_assert_row_done[(CTXDB_ROW == 100 && CTXDB_DONE == 101) ? 1 : -1];
typedef char ctxdb_assert_version_number[(CTXDB_VERSION_NUMBER == CTXDB_VERSION_MAJOR * 1000000 +
                                                                      CTXDB_VERSION_MINOR * 1000 +
                                                                      CTXDB_VERSION_PATCH)
                                             ? 1
                                             : -1];

int main(void) {
  /* Every entry point, assigned to a pointer of the type the ABI promises:
   * a changed signature is an incompatible-pointer error. */
  const char *(*version_fn)(void) = ctxdb_version;
  int (*version_number_fn)(void) = ctxdb_version_number;
  int (*abi_fn)(void) = ctxdb_abi_version;
  const char *(*errstr_fn)(int) = ctxdb_errstr;
  const char *(*errmsg_fn)(const ctxdb_db *) = ctxdb_errmsg;
  void (*free_fn)(void *) = ctxdb_free;
  int (*open_fn)(const char *, const char *, size_t, ctxdb_db **) = ctxdb_open;
  int (*close_fn)(ctxdb_db *) = ctxdb_close;
  int (*create_fn)(ctxdb_db *, const char *, size_t, char **, size_t *) = ctxdb_session_create;
  int (*get_fn)(ctxdb_db *, const char *, size_t, char **, size_t *) = ctxdb_session_get;
  int (*list_fn)(ctxdb_db *, char **, size_t *) = ctxdb_session_list;
  int (*append_fn)(ctxdb_db *, const char *, size_t, const char *, size_t, char **, size_t *) =
      ctxdb_append;
  int (*batch_fn)(ctxdb_db *, const char *, size_t, const char *, size_t, char **, size_t *) =
      ctxdb_append_batch;
  int (*event_fn)(ctxdb_db *, const char *, size_t, char **, size_t *) = ctxdb_event_get;
  int (*iter_fn)(ctxdb_db *, const char *, size_t, int64_t, int64_t, ctxdb_iter **) =
      ctxdb_events_iter;
  int (*next_fn)(ctxdb_iter *, const char **, size_t *) = ctxdb_iter_next;
  void (*iter_free_fn)(ctxdb_iter *) = ctxdb_iter_free;
  int (*verify_fn)(ctxdb_db *, const char *, size_t, char **, size_t *) = ctxdb_verify;
  int (*import_fn)(ctxdb_db *, const char *, size_t, char **, size_t *) = ctxdb_import;
  (void)errmsg_fn, (void)free_fn, (void)open_fn, (void)close_fn;
  (void)create_fn, (void)get_fn, (void)list_fn, (void)append_fn;
  (void)batch_fn, (void)event_fn, (void)iter_fn, (void)next_fn;
  (void)iter_free_fn, (void)verify_fn, (void)import_fn;

  return (version_fn() != 0 && version_number_fn() == CTXDB_VERSION_NUMBER &&
          abi_fn() == CTXDB_ABI_VERSION && errstr_fn(CTXDB_OK) != 0)
             ? 0
             : 1;
}
