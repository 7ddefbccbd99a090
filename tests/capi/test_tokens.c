/*
 * test_tokens.c -- the Tokenizer section of the C ABI: ctxdb_tokens_count
 * and ctxdb_tokens_encode with and without a handle, the data directory
 * from the environment and from the database config, the three modes for
 * special tokens, and every bad input: NULL, unknown encodings, invalid
 * UTF-8, a missing or wrong rank file. The rank files are the ones
 * scripts/setup.sh installs; CTest passes their directory as
 * CTXDB_TOKENIZER_DATA.
 */
#include "check.h"
#include "util.h"

#include <stdlib.h>

static const char *g_data; /* the directory holding the rank files */

#define S(lit) lit, sizeof(lit) - 1

static void test_without_handle(void) {
  int64_t n = -1;
  uint32_t *ids = NULL;
  size_t k = 99;

  CHECK_RC(ctxdb_tokens_count(NULL, S("o200k_base"), S("hello world"), CTXDB_SPECIALS_DISALLOW, &n),
           CTXDB_OK);
  CHECK(n == 2);
  /* NULL/0 encoding is o200k_base. */
  CHECK_RC(ctxdb_tokens_encode(NULL, NULL, 0, S("hello world"), CTXDB_SPECIALS_DISALLOW, &ids, &k),
           CTXDB_OK);
  if (CHECK(ids != NULL && k == 2)) {
    CHECK(ids[0] == 24912 && ids[1] == 2375);
  }
  ctxdb_free(ids);
  CHECK_RC(
      ctxdb_tokens_count(NULL, S("cl100k_base"), S("hello world"), CTXDB_SPECIALS_DISALLOW, &n),
      CTXDB_OK);
  CHECK(n == 2);
  /* The empty text: zero tokens, a non-NULL empty array. */
  CHECK_RC(ctxdb_tokens_count(NULL, S("o200k_base"), NULL, 0, CTXDB_SPECIALS_DISALLOW, &n),
           CTXDB_OK);
  CHECK(n == 0);
  CHECK_RC(ctxdb_tokens_encode(NULL, S("o200k_base"), "", 0, CTXDB_SPECIALS_DISALLOW, &ids, &k),
           CTXDB_OK);
  CHECK(ids != NULL && k == 0);
  ctxdb_free(ids);
  /* Chinese, emoji. */
  CHECK_RC(ctxdb_tokens_count(NULL, S("o200k_base"), S("上下文数据库 👍🏽"),
                              CTXDB_SPECIALS_TEXT, &n),
           CTXDB_OK);
  CHECK(n > 2);
}

static void test_specials(void) {
  int64_t n = -1;
  uint32_t *ids = NULL;
  size_t k = 0;
  const char text[] = "a<|endoftext|>b";

  CHECK_RC(ctxdb_tokens_count(NULL, S("o200k_base"), S(text), CTXDB_SPECIALS_DISALLOW, &n),
           CTXDB_INVALID_ARG);
  CHECK(n == 0);
  CHECK(strstr(ctxdb_errmsg(NULL), "<|endoftext|>") != NULL);
  CHECK_RC(ctxdb_tokens_encode(NULL, S("o200k_base"), S(text), CTXDB_SPECIALS_ALLOW, &ids, &k),
           CTXDB_OK);
  if (CHECK(k == 3)) CHECK(ids[1] == 199999);
  ctxdb_free(ids);
  CHECK_RC(ctxdb_tokens_count(NULL, S("o200k_base"), S(text), CTXDB_SPECIALS_TEXT, &n), CTXDB_OK);
  CHECK(n > 3);
  CHECK_RC(ctxdb_tokens_count(NULL, S("o200k_base"), S(text), 3, &n), CTXDB_INVALID_ARG);
  CHECK_RC(ctxdb_tokens_count(NULL, S("o200k_base"), S(text), -1, &n), CTXDB_INVALID_ARG);
}

static void test_bad_input(void) {
  int64_t n = 7;
  uint32_t *ids = (uint32_t *)&n;
  size_t k = 7;

  CHECK_RC(ctxdb_tokens_count(NULL, S("o200k_base"), S("x"), 0, NULL), CTXDB_MISUSE);
  CHECK_RC(ctxdb_tokens_encode(NULL, S("o200k_base"), S("x"), 0, NULL, &k), CTXDB_MISUSE);
  CHECK_RC(ctxdb_tokens_encode(NULL, S("o200k_base"), S("x"), 0, &ids, NULL), CTXDB_MISUSE);
  CHECK_RC(ctxdb_tokens_count(NULL, S("o200k_base"), NULL, 3, 0, &n), CTXDB_MISUSE);
  CHECK_RC(ctxdb_tokens_count(NULL, NULL, 4, S("x"), 0, &n), CTXDB_MISUSE);
  CHECK_RC(ctxdb_tokens_count(NULL, S("p50k_base"), S("x"), 0, &n), CTXDB_INVALID_ARG);
  CHECK(strstr(ctxdb_errmsg(NULL), "o200k_base") != NULL);
  CHECK_RC(ctxdb_tokens_count(NULL, S("o200k\xff"), S("x"), 0, &n), CTXDB_INVALID_UTF8);
  n = 7;
  CHECK_RC(ctxdb_tokens_count(NULL, S("o200k_base"), S("ab\xff"), 0, &n), CTXDB_INVALID_UTF8);
  CHECK(n == 0);
  CHECK(strstr(ctxdb_errmsg(NULL), "byte 2") != NULL);
  CHECK_RC(ctxdb_tokens_encode(NULL, S("o200k_base"), S("\xed\xa0\x80"), 0, &ids, &k),
           CTXDB_INVALID_UTF8);
  CHECK(ids == NULL && k == 0);
  /* A pointer that is no handle. */
  CHECK_RC(ctxdb_tokens_count((ctxdb_db *)&n, S("o200k_base"), S("x"), 0, &n), CTXDB_MISUSE);
}

static void test_data_dir(void) {
  char config[1200];
  ctxdb_db *db = NULL;
  int64_t n = -1;
  char *dir = (char *)scratch_path("ranks");
  char copy[600];
  size_t len = 0;
  char *ranks;

  /* No data directory: the ranks the library carries. */
  unsetenv("CTXDB_TOKENIZER_DATA");
  CHECK_RC(ctxdb_tokens_count(NULL, S("o200k_base"), S("hello world"), 0, &n), CTXDB_OK);
  CHECK(n == 2);

  /* The database's tokenizer_data_dir. */
  snprintf(config, sizeof config, "{\"tokenizer_data_dir\": \"%s\"}", g_data);
  CHECK_RC(ctxdb_open(scratch_path("tokens.ctxdb"), config, strlen(config), &db), CTXDB_OK);
  CHECK_RC(ctxdb_tokens_count(db, S("cl100k_base"), S("hello world"), 0, &n), CTXDB_OK);
  CHECK(n == 2);
  CHECK_RC(ctxdb_tokens_count(db, S("cl100k_base"), S("\xff"), 0, &n), CTXDB_INVALID_UTF8);
  CHECK(strstr(ctxdb_errmsg(db), "UTF-8") != NULL);
  CHECK_RC(ctxdb_close(db), CTXDB_OK);
  CHECK_RC(ctxdb_tokens_count(db, S("cl100k_base"), S("x"), 0, &n), CTXDB_MISUSE);
  CHECK_RC(ctxdb_open(scratch_path("bad.ctxdb"), S("{\"tokenizer_data_dir\": 3}"), &db),
           CTXDB_INVALID_ARG);

  /* A data directory whose o200k_base.tiktoken differs from the standard. */
  mkdir(dir, 0700);
  snprintf(copy, sizeof copy, "%s/o200k_base.tiktoken", g_data);
  ranks = file_read(copy, &len);
  if (CHECK(ranks != NULL && len > 100)) {
    ranks[len - 2] = ranks[len - 2] == '7' ? '6' : '7'; /* the last rank */
    snprintf(copy, sizeof copy, "%s/o200k_base.tiktoken", dir);
    CHECK(file_write(copy, ranks, len));
    setenv("CTXDB_TOKENIZER_DATA", dir, 1);
    CHECK_RC(ctxdb_tokens_count(NULL, S("o200k_base"), S("x"), 0, &n), CTXDB_CORRUPT);
    CHECK(strstr(ctxdb_errmsg(NULL), "SHA-256") != NULL);
    /* ... and no cl100k_base.tiktoken at all. */
    CHECK_RC(ctxdb_tokens_count(NULL, S("cl100k_base"), S("x"), 0, &n), CTXDB_NOT_FOUND);
    CHECK(strstr(ctxdb_errmsg(NULL), "missing") != NULL);
  }
  free(ranks);
  setenv("CTXDB_TOKENIZER_DATA", g_data, 1);
}

int main(void) {
  g_data = getenv("CTXDB_TOKENIZER_DATA");
  if (!g_data) {
    fprintf(stderr, "test_tokens: CTXDB_TOKENIZER_DATA is not set (run scripts/setup.sh)\n");
    return 1;
  }
  scratch_init("tokens");
  test_without_handle();
  test_specials();
  test_bad_input();
  test_data_dir();
  scratch_cleanup();
  return check_finish("test_tokens");
}
