/*
 * test_compact.c — compaction through the C ABI: the built-in summarizer,
 * a host summarizer answering through ctxdb_summary_set, the callback's
 * failures (each leaves the log as before plus exactly one
 * CompactionFailed), bad input (NULL, garbage, invalid UTF-8, malformed
 * JSON, unknown ids), re-entry from the callback, and a process killed
 * inside the summarizer, which leaves no partial compaction.
 */
#include "check.h"
#include "util.h"

#include <ctxdb/ctxdb.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *const S = "s";
static const char *const KEEP = "{\"keep_recent_tokens\":60}";

static void append(ctxdb_db *db, const char *json) {
  char *out = NULL;
  size_t n = 0;
  CHECK_RC(ctxdb_append(db, S, 1, json, strlen(json), &out, &n), CTXDB_OK);
  ctxdb_free(out);
}

static ctxdb_db *open_session(const char *name, int turns) {
  ctxdb_db *db = NULL;
  char *out = NULL;
  size_t n = 0;
  int i;
  char line[512];
  const char *create = Q("{'id':'s','payload':{'agent_id':'a'}}");
  CHECK_RC(ctxdb_open(scratch_path(name), NULL, 0, &db), CTXDB_OK);
  CHECK_RC(ctxdb_session_create(db, create, strlen(create), &out, &n), CTXDB_OK);
  ctxdb_free(out);
  for (i = 0; i < turns; ++i) {
    snprintf(line, sizeof line, "%s%d%s",
             Q("{'type':'UserPromptSubmitted','actor':'user','payload':{'text':'turn "), i,
             Q(" fix it'}}"));
    append(db, line);
    snprintf(line, sizeof line, "%s%d%s",
             Q("{'type':'AssistantMessageCreated','actor':'a','payload':{'content':[{'type':'tool_"
               "call','id':'c"),
             i, Q("','name':'bash','args':{}}]}}"));
    append(db, line);
    snprintf(line, sizeof line, "%s%d%s",
             Q("{'type':'ToolCallFinished','actor':'tool','payload':{'tool_call_id':'c"), i,
             Q("','output':'all tests passed, all tests passed, all tests passed'}}"));
    append(db, line);
    snprintf(line, sizeof line, "%s%d%s",
             Q("{'type':'FileWritten','actor':'tool','payload':{'path':'src/m"), i, Q(".py'}}"));
    append(db, line);
  }
  return db;
}

/* A summary naming every file written and the range's last event. */
static char *summary_for(const char *plan) {
  char *range = jraw(plan, "range"), *to = jstr(range, "to_event_id");
  char *buf = (char *)malloc(4096);
  snprintf(
      buf, 4096,
      "{\"goal\":{\"current_task\":\"t\"},\"next_steps\":[\"n\"],\"files\":{\"modified\":["
      "{\"path\":\"src/m0.py\"},{\"path\":\"src/m1.py\"},{\"path\":\"src/m2.py\"},"
      "{\"path\":\"src/m3.py\"},{\"path\":\"src/m4.py\"},{\"path\":\"src/m5.py\"}]},"
      "\"provenance\":"
      "{\"source_event_ids\":[\"%s\"],\"summarizer\":{\"name\":\"c-host\",\"version\":\"1\"}}}",
      to ? to : "");
  free(range);
  free(to);
  return buf;
}

/* ---- summarizers ---- */

static int good_summarizer(void *user, const char *plan, size_t len, ctxdb_summary_ctx *ctx) {
  char *copy = (char *)malloc(len + 1), *summary;
  int rc;
  memcpy(copy, plan, len);
  copy[len] = '\0';
  summary = summary_for(copy);
  rc = ctxdb_summary_set(ctx, summary, strlen(summary));
  ++*(int *)user;
  free(copy);
  free(summary); /* ctxdb copied it */
  return rc;
}

static int failing_summarizer(void *user, const char *plan, size_t len, ctxdb_summary_ctx *ctx) {
  (void)user, (void)plan, (void)len;
  ctxdb_summary_error(ctx, "model unavailable", 17);
  return CTXDB_INTERNAL;
}

static int silent_summarizer(void *user, const char *plan, size_t len, ctxdb_summary_ctx *ctx) {
  (void)user, (void)plan, (void)len, (void)ctx;
  return CTXDB_OK; /* OK without a summary */
}

static int garbage_summarizer(void *user, const char *plan, size_t len, ctxdb_summary_ctx *ctx) {
  (void)user, (void)plan, (void)len;
  return ctxdb_summary_set(ctx, "\xff\xfe{", 3);
}

static int slow_summarizer(void *user, const char *plan, size_t len, ctxdb_summary_ctx *ctx) {
  sleep_ms(80);
  return good_summarizer(user, plan, len, ctx);
}

static ctxdb_db *g_reenter_db;
static int reentering_summarizer(void *user, const char *plan, size_t len, ctxdb_summary_ctx *ctx) {
  char *out = NULL;
  size_t n = 0;
  /* The handle is busy with the call that runs this callback. */
  CHECK_RC(ctxdb_state_get(g_reenter_db, S, 1, NULL, 0, &out, &n), CTXDB_MISUSE);
  return good_summarizer(user, plan, len, ctx);
}

static int dying_summarizer(void *user, const char *plan, size_t len, ctxdb_summary_ctx *ctx) {
  (void)user, (void)plan, (void)len, (void)ctx;
  kill(getpid(), SIGKILL);
  return CTXDB_INTERNAL;
}

/* ---- tests ---- */

static void test_builtin_and_list(void) {
  ctxdb_db *db = open_session("builtin.ctxdb", 6);
  char *out = NULL, *list = NULL, **items = NULL;
  size_t n = 0;
  int count;
  CHECK_RC(ctxdb_compact_should(db, S, 1, NULL, 0, &out, &n), CTXDB_OK);
  CHECK(jstr_eq(out, "level", "ok"));
  ctxdb_free(out);
  CHECK_RC(ctxdb_compact_plan(db, S, 1, KEEP, strlen(KEEP), &out, &n), CTXDB_OK);
  CHECK(jstr_eq(out, "status", "ready"));
  CHECK(strstr(out, "src/m0.py") != NULL);
  ctxdb_free(out);
  CHECK_RC(ctxdb_compact(db, S, 1, KEEP, strlen(KEEP), NULL, NULL, &out, &n), CTXDB_OK);
  CHECK(jstr_eq(out, "status", "compacted"));
  CHECK(jnum(out, "tokens_after") < jnum(out, "tokens_before"));
  ctxdb_free(out);
  CHECK_RC(ctxdb_compactions_list(db, S, 1, NULL, 0, &list, &n), CTXDB_OK);
  count = jarray(list, &items);
  CHECK(count == 1);
  jfree_items(items, count);
  ctxdb_free(list);
  CHECK_RC(ctxdb_close(db), CTXDB_OK);
}

static void test_host_summarizer(void) {
  ctxdb_db *db = open_session("host.ctxdb", 6);
  char *out = NULL, *plan = NULL, *summary;
  size_t n = 0, plan_len = 0;
  int calls = 0;
  CHECK_RC(ctxdb_compact(db, S, 1, KEEP, strlen(KEEP), good_summarizer, &calls, &out, &n),
           CTXDB_OK);
  CHECK(calls == 1);
  CHECK(jstr_eq(out, "status", "compacted"));
  CHECK(strstr(out, "c-host") != NULL);
  ctxdb_free(out);
  /* plan, then commit */
  append(db, Q("{'type':'UserPromptSubmitted','actor':'user','payload':{'text':'more'}}"));
  append(db, Q("{'type':'UserPromptSubmitted','actor':'user','payload':{'text':'again'}}"));
  CHECK_RC(ctxdb_compact_plan(db, S, 1, Q("{'keep_recent_tokens':5}"),
                              strlen("{'keep_recent_tokens':5}"), &plan, &plan_len),
           CTXDB_OK);
  summary = summary_for(plan);
  CHECK_RC(ctxdb_compact_commit(db, S, 1, plan, plan_len, summary, strlen(summary), &out, &n),
           CTXDB_OK);
  CHECK(jstr_eq(out, "status", "compacted"));
  ctxdb_free(out);
  /* The same plan again: its leaf moved, so the commit conflicts (and is
   * recorded as a failure). */
  CHECK_RC(ctxdb_compact_commit(db, S, 1, plan, plan_len, summary, strlen(summary), &out, &n),
           CTXDB_CONFLICT);
  CHECK(out == NULL && n == 0);
  free(summary);
  ctxdb_free(plan);
  CHECK_RC(ctxdb_close(db), CTXDB_OK);
}

/* Runs a compaction that must fail with `want`; the log must be what it
 * was plus exactly one CompactionFailed. */
static void expect_failure(ctxdb_db *db, const char *policy, ctxdb_summarize_fn fn, void *user,
                           int want, const char *named) {
  int before_rows, after_rows;
  char *before = export_all(db, &before_rows), *after, *out = (char *)1;
  size_t n = 7;
  CHECK_RC(ctxdb_compact(db, S, 1, policy, strlen(policy), fn, user, &out, &n), want);
  CHECK(out == NULL && n == 0);
  if (named && !strstr(ctxdb_errmsg(db), named)) {
    fprintf(stderr, "message lacks '%s': %s\n", named, ctxdb_errmsg(db));
    CHECK(0);
  }
  after = export_all(db, &after_rows);
  CHECK(after_rows == before_rows + 1);
  CHECK(strncmp(after, before, strlen(before)) == 0);
  CHECK(strstr(after + strlen(before), "\"type\":\"CompactionFailed\"") != NULL);
  free(before);
  free(after);
}

static void test_failures(void) {
  ctxdb_db *db = open_session("fail.ctxdb", 6);
  int calls = 0;
  const char *timeout = "{\"keep_recent_tokens\":60,\"timeout_ms\":20}";
  expect_failure(db, KEEP, failing_summarizer, NULL, CTXDB_CHECK_FAILED, "model unavailable");
  expect_failure(db, KEEP, silent_summarizer, NULL, CTXDB_CHECK_FAILED, "ctxdb_summary_set");
  expect_failure(db, KEEP, garbage_summarizer, NULL, CTXDB_CHECK_FAILED, "summary_json");
  expect_failure(db, timeout, slow_summarizer, &calls, CTXDB_CHECK_FAILED, "timeout_ms");
  g_reenter_db = db;
  {
    char *out = NULL;
    size_t n = 0;
    CHECK_RC(ctxdb_compact(db, S, 1, KEEP, strlen(KEEP), reentering_summarizer, &calls, &out, &n),
             CTXDB_OK);
    ctxdb_free(out);
  }
  /* Outside a callback the context is misuse. */
  CHECK_RC(ctxdb_summary_set(NULL, "{}", 2), CTXDB_MISUSE);
  CHECK_RC(ctxdb_summary_error(NULL, "x", 1), CTXDB_MISUSE);
  CHECK_RC(ctxdb_close(db), CTXDB_OK);
}

static void test_bad_input(void) {
  ctxdb_db *db = open_session("bad.ctxdb", 2);
  char *out = (char *)1;
  size_t n = 5;
  CHECK_RC(ctxdb_compact_plan(NULL, S, 1, NULL, 0, &out, &n), CTXDB_MISUSE);
  CHECK(out == NULL && n == 0);
  CHECK_RC(ctxdb_compact_plan(db, S, 1, NULL, 0, NULL, &n), CTXDB_MISUSE);
  CHECK_RC(ctxdb_compact_plan(db, NULL, 3, NULL, 0, &out, &n), CTXDB_MISUSE);
  CHECK_RC(ctxdb_compact_plan(db, "", 0, NULL, 0, &out, &n), CTXDB_INVALID_ARG);
  CHECK_RC(ctxdb_compact_plan(db, "\xff", 1, NULL, 0, &out, &n), CTXDB_INVALID_UTF8);
  CHECK_RC(ctxdb_compact_plan(db, "nope", 4, NULL, 0, &out, &n), CTXDB_NOT_FOUND);
  CHECK_RC(ctxdb_compact_plan(db, S, 1, "{", 1, &out, &n), CTXDB_INVALID_JSON);
  CHECK_RC(ctxdb_compact_plan(db, S, 1, "{\"x\":\xff}", 7, &out, &n), CTXDB_INVALID_UTF8);
  CHECK_RC(ctxdb_compact_should(db, S, 1, "[1]", 3, &out, &n), CTXDB_INVALID_ARG);
  CHECK_RC(ctxdb_compact_should(db, S, 1, "{\"keep_recent_tokens\":\"a\"}", 26, &out, &n),
           CTXDB_INVALID_ARG);
  CHECK_RC(ctxdb_compact(db, S, 1, "garbage", 7, NULL, NULL, &out, &n), CTXDB_INVALID_JSON);
  CHECK_RC(ctxdb_compact(db, S, 1, "{\"branch_id\":\"nope\"}", 20, NULL, NULL, &out, &n),
           CTXDB_NOT_FOUND);
  CHECK_RC(ctxdb_compact_commit(db, S, 1, "{", 1, "{}", 2, &out, &n), CTXDB_INVALID_JSON);
  CHECK_RC(ctxdb_compact_commit(db, S, 1, "{}", 2, "{}", 2, &out, &n), CTXDB_INVALID_ARG);
  CHECK_RC(ctxdb_compact_commit(db, S, 1, NULL, 4, "{}", 2, &out, &n), CTXDB_MISUSE);
  {
    const char *plan = Q("{'leaf_event_id':'evt_nope','cut':{'first_kept_event_id':null}}");
    CHECK_RC(ctxdb_compact_commit(db, S, 1, plan, strlen(plan), "{}", 2, &out, &n),
             CTXDB_NOT_FOUND);
  }
  CHECK_RC(ctxdb_compactions_list(db, "nope", 4, NULL, 0, &out, &n), CTXDB_NOT_FOUND);
  CHECK_RC(ctxdb_compactions_list(db, S, 1, "nope", 4, &out, &n), CTXDB_NOT_FOUND);
  CHECK(out == NULL && n == 0);
  CHECK_RC(ctxdb_close(db), CTXDB_OK);
}

/* A process killed inside the summarizer leaves no partial compaction. */
static void test_killed_midway(void) {
  ctxdb_db *db = open_session("kill.ctxdb", 6);
  char path[600], *out = NULL, *before, *after, *v;
  size_t n = 0;
  int status, before_rows, after_rows;
  pid_t pid;
  snprintf(path, sizeof path, "%s", scratch_path("kill.ctxdb"));
  before = export_all(db, &before_rows);
  CHECK_RC(ctxdb_close(db), CTXDB_OK);
  pid = fork();
  if (pid == 0) {
    ctxdb_db *child = NULL;
    if (ctxdb_open(path, NULL, 0, &child) != CTXDB_OK) _exit(3);
    ctxdb_compact(child, S, 1, KEEP, strlen(KEEP), dying_summarizer, NULL, &out, &n);
    _exit(4); /* not reached */
  }
  CHECK(waitpid(pid, &status, 0) == pid);
  CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  CHECK_RC(ctxdb_open(path, NULL, 0, &db), CTXDB_OK);
  after = export_all(db, &after_rows);
  CHECK(after_rows == before_rows);
  CHECK(after && before && strcmp(after, before) == 0);
  CHECK_RC(ctxdb_verify(db, NULL, 0, &v, &n), CTXDB_OK);
  CHECK(jbool(v, "ok") == 1);
  ctxdb_free(v);
  CHECK_RC(ctxdb_compact(db, S, 1, KEEP, strlen(KEEP), NULL, NULL, &out, &n), CTXDB_OK);
  ctxdb_free(out);
  free(before);
  free(after);
  CHECK_RC(ctxdb_close(db), CTXDB_OK);
}

static void test_branch_summary(void) {
  ctxdb_db *db = open_session("branch.ctxdb", 3);
  char *out = NULL, *rows, **lines = NULL, *first = NULL, *last = NULL;
  size_t n = 0;
  int count, nrows, i;
  rows = export_all(db, &nrows);
  count = split_lines(rows, &lines);
  first = jstr(lines[1], "id"); /* the first prompt */
  last = jstr(lines[count - 1], "id");
  CHECK_RC(ctxdb_branch_summarize(db, S, 1, last, strlen(last), first, strlen(first), &out, &n),
           CTXDB_OK);
  CHECK(jstr_eq(out, "common_ancestor_event_id", first));
  CHECK(!jstr_eq(out, "branch_id", "main"));
  ctxdb_free(out);
  CHECK_RC(ctxdb_branch_summarize(db, S, 1, first, strlen(first), last, strlen(last), &out, &n),
           CTXDB_INVALID_ARG);
  CHECK_RC(ctxdb_branch_summarize(db, S, 1, "evt_x", 5, first, strlen(first), &out, &n),
           CTXDB_NOT_FOUND);
  CHECK_RC(ctxdb_branch_summarize(db, S, 1, NULL, 0, first, strlen(first), &out, &n),
           CTXDB_INVALID_ARG);
  CHECK_RC(ctxdb_branch_summarize(db, S, 1, "\xff", 1, first, strlen(first), &out, &n),
           CTXDB_INVALID_UTF8);
  CHECK(out == NULL && n == 0);
  for (i = 0; i < count; ++i) free(lines[i]);
  free(lines);
  free(rows);
  free(first);
  free(last);
  CHECK_RC(ctxdb_close(db), CTXDB_OK);
}

int main(void) {
  scratch_init("compact");
  test_builtin_and_list();
  test_host_summarizer();
  test_failures();
  test_bad_input();
  test_killed_midway();
  test_branch_summary();
  scratch_cleanup();
  return check_finish("test_compact");
}
