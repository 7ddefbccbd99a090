/* An outside program on an installed ctxdb: it sees only the installed
 * header and library. Records a session, checks its chain, prints what it
 * did. usage: agent DB_PATH */
#include <ctxdb/ctxdb.h>

#include <stdio.h>
#include <string.h>

static int fail(ctxdb_db *db, const char *what, int rc) {
  fprintf(stderr, "%s: %s: %s\n", what, ctxdb_errstr(rc), ctxdb_errmsg(db));
  return 1;
}

int main(int argc, char **argv) {
  const char *s = "{\"id\":\"s\",\"payload\":{\"agent_id\":\"outside\"}}";
  const char *e =
      "{\"type\":\"UserPromptSubmitted\",\"actor\":\"user\",\"payload\":{\"text\":\"hi\"}}";
  ctxdb_db *db = NULL;
  char *out = NULL;
  size_t n = 0;
  int rc;
  if (argc != 2) return 2;
  if (ctxdb_abi_version() != CTXDB_ABI_VERSION) return fail(NULL, "abi", CTXDB_MISUSE);
  if ((rc = ctxdb_open(argv[1], NULL, 0, &db)) != CTXDB_OK) return fail(NULL, "open", rc);
  if ((rc = ctxdb_session_create(db, s, strlen(s), &out, &n)) != CTXDB_OK)
    return fail(db, "session", rc);
  ctxdb_free(out);
  if ((rc = ctxdb_append(db, "s", 1, e, strlen(e), &out, &n)) != CTXDB_OK)
    return fail(db, "append", rc);
  ctxdb_free(out);
  if ((rc = ctxdb_verify(db, NULL, 0, &out, &n)) != CTXDB_OK) return fail(db, "verify", rc);
  printf("ctxdb %s: %s\n", ctxdb_version(), out);
  ctxdb_free(out);
  return ctxdb_close(db) == CTXDB_OK ? 0 : 1;
}
