/*
 * test_multiprocess.c — several writers on one file.
 *
 * 1. NPROC processes (each opens its own handle after fork) append to the
 *    same session at once, mixing single appends and batches. Afterwards
 *    every event is there, seqs are gapless 1..N, each writer's events keep
 *    its order, and the hash chain verifies.
 * 2. NPROC processes open a file that does not exist yet, all at once (the
 *    schema is created exactly once), and each creates a session.
 * 3. Threads share one handle (calls on a handle are serialized); each
 *    thread's error message is its own.
 */
#include "check.h"
#include "util.h"

#include <ctxdb/ctxdb.h>

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define NPROC 4
#define PER_PROC 200
#define BLOCK 10 /* events per single-append block and per batch */
#define NTHREADS 4
#define PER_THREAD 100
#define CREATE_ROUNDS 10 /* the create race is timing-dependent: repeat it */

static const char *kBusyConfig = "{\"busy_timeout_ms\":60000}";

static void child_fail(int idx, const char *what, int rc, ctxdb_db *db) {
  fprintf(stderr, "child %d: %s failed: %s: %s\n", idx, what, ctxdb_errstr(rc),
          check_msg_(ctxdb_errmsg(db)));
  _exit(1);
}

/* Blocks until the parent closes the start pipe. */
static void wait_for_start(int fd) {
  char c;
  while (read(fd, &c, 1) > 0) {
  }
  close(fd);
}

/* One writer: PER_PROC events, alternating blocks of single appends and
 * one batch of BLOCK lines. Payloads carry (writer, k) so order is checked. */
/* Writer idx's event k: prompts and state updates alternate, so every
 * projection (messages, state, stats, the tree) is written by several
 * processes at once; p and k say who appended it, in which order. */
static size_t event_line(char *buf, size_t size, int idx, int k) {
  if (k % 2 == 0)
    return (size_t)snprintf(buf, size,
                            "{\"type\":\"UserPromptSubmitted\",\"actor\":\"w%d\",\"payload\":"
                            "{\"text\":\"w%d k%d\",\"p\":%d,\"k\":%d}}",
                            idx, idx, k, idx, k);
  return (size_t)snprintf(buf, size,
                          "{\"type\":\"StateUpdated\",\"actor\":\"w%d\",\"payload\":{\"ops\":"
                          "[{\"op\":\"add_fact\",\"content\":\"w%d k%d\"}],\"p\":%d,\"k\":%d}}",
                          idx, idx, k, idx, k);
}

static void writer_child(int idx, const char *path, const char *sid, int start_fd) {
  ctxdb_db *db = NULL;
  int rc, k = 0, block = 0;
  char *out = NULL;
  size_t n;
  rc = ctxdb_open(path, kBusyConfig, strlen(kBusyConfig), &db);
  if (rc != CTXDB_OK) child_fail(idx, "ctxdb_open", rc, NULL);
  wait_for_start(start_fd);
  while (k < PER_PROC) {
    if (block % 2 == 0) {
      int i;
      for (i = 0; i < BLOCK && k < PER_PROC; ++i, ++k) {
        char ev[256];
        event_line(ev, sizeof ev, idx, k);
        rc = ctxdb_append(db, sid, strlen(sid), ev, strlen(ev), &out, &n);
        if (rc != CTXDB_OK) child_fail(idx, "ctxdb_append", rc, db);
        ctxdb_free(out);
      }
    } else {
      char nd[BLOCK * 256];
      size_t used = 0;
      int i, first = k;
      for (i = 0; i < BLOCK && k < PER_PROC; ++i, ++k) {
        used += event_line(nd + used, sizeof nd - used, idx, k);
        nd[used++] = '\n';
      }
      rc = ctxdb_append_batch(db, sid, strlen(sid), nd, used, &out, &n);
      if (rc != CTXDB_OK) child_fail(idx, "ctxdb_append_batch", rc, db);
      {
        int ok;
        int64_t count = jint(out, "count", &ok);
        if (!ok || count != k - first) {
          fprintf(stderr, "child %d: batch count %lld, want %d: %s\n", idx, (long long)count,
                  k - first, out);
          _exit(1);
        }
      }
      ctxdb_free(out);
    }
    ++block;
  }
  rc = ctxdb_close(db);
  if (rc != CTXDB_OK) child_fail(idx, "ctxdb_close", rc, NULL);
  _exit(0);
}

/* Forks NPROC children running fn(idx); returns after releasing them all at
 * once and reaping them. Each child must exit 0. */
typedef void (*child_fn)(int idx, const char *path, const char *sid, int start_fd);

static void run_children(child_fn fn, const char *path, const char *sid) {
  pid_t pids[NPROC];
  int start[2], i;
  if (pipe(start) != 0) {
    perror("pipe");
    exit(2);
  }
  fflush(NULL);
  for (i = 0; i < NPROC; ++i) {
    pids[i] = fork();
    if (pids[i] < 0) {
      perror("fork");
      exit(2);
    }
    if (pids[i] == 0) {
      close(start[1]);
      fn(i, path, sid, start[0]);
      _exit(0);
    }
  }
  close(start[0]);
  sleep_ms(50); /* let the children open their handles */
  close(start[1]);
  for (i = 0; i < NPROC; ++i) {
    int status = 0;
    waitpid(pids[i], &status, 0);
    if (!CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0))
      fprintf(stderr, "    child %d ended with status %d\n", i, status);
  }
}

static void test_concurrent_writers(const char *path) {
  ctxdb_db *db = NULL;
  char *out = NULL, *sid = NULL, *text, **lines;
  size_t n;
  int rows, nl, i;
  int next_k[NPROC];
  const int64_t total = 1 + (int64_t)NPROC * PER_PROC;

  /* The parent creates the session, then closes its handle before fork. */
  if (!CHECK_RC(ctxdb_open(path, NULL, 0, &db), CTXDB_OK)) return;
  {
    const char *j = "{\"payload\":{\"agent_id\":\"mp\"}}";
    if (CHECK_RC(ctxdb_session_create(db, j, strlen(j), &out, &n), CTXDB_OK)) sid = jstr(out, "id");
  }
  ctxdb_free(out);
  CHECK_RC(ctxdb_close(db), CTXDB_OK);
  if (!CHECK(sid != NULL)) return;

  run_children(writer_child, path, sid);

  db = NULL;
  if (!CHECK_RC(ctxdb_open(path, NULL, 0, &db), CTXDB_OK)) return;
  out = NULL;
  CHECK_RC(ctxdb_session_get(db, sid, strlen(sid), &out, &n), CTXDB_OK);
  CHECK(jnum(out, "event_count") == total);
  CHECK(jnum(out, "last_seq") == total);
  ctxdb_free(out);

  text = rows_of(db, sid, 1, -1, &rows);
  CHECK(text != NULL);
  if (!CHECK(rows == total))
    fprintf(stderr, "    %d rows stored, want %lld\n", rows, (long long)total);
  for (i = 0; i < NPROC; ++i) next_k[i] = 0;
  nl = split_lines(text, &lines);
  for (i = 0; i < nl; ++i) {
    int64_t seq = jnum(lines[i], "seq");
    if (!CHECK(seq == i + 1)) fprintf(stderr, "    row %d has seq %lld\n", i + 1, (long long)seq);
    if (i > 0) {
      char *payload = jraw(lines[i], "payload");
      int64_t p = jnum(payload, "p"), k = jnum(payload, "k");
      if (CHECK(p >= 0 && p < NPROC)) {
        /* Each writer's events appear in the order it appended them. */
        if (!CHECK(k == next_k[p]))
          fprintf(stderr, "    writer %lld: k %lld at seq %lld, want %d\n", (long long)p,
                  (long long)k, (long long)seq, next_k[p]);
        next_k[p] = (int)k + 1;
      }
      free(payload);
    }
    free(lines[i]);
  }
  free(lines);
  free(text);
  for (i = 0; i < NPROC; ++i) CHECK(next_k[i] == PER_PROC);

  out = NULL;
  CHECK_RC(ctxdb_verify(db, NULL, 0, &out, &n), CTXDB_OK);
  CHECK(jbool(out, "ok") == 1);
  CHECK(jnum(out, "events") == total);
  CHECK(jnum(out, "sessions") == 1);
  ctxdb_free(out);
  /* What each process kept in memory between its transactions never hid
   * another's writes: a replay of the log gives the same derived tables. */
  out = NULL;
  CHECK_RC(ctxdb_rebuild(db, "{\"check\":true}", 14, &out, &n), CTXDB_OK);
  ctxdb_free(out);
  out = NULL;
  CHECK_RC(ctxdb_stats_get(db, sid, strlen(sid), &out, &n), CTXDB_OK);
  CHECK(out && jnum(out, "events") == total);
  ctxdb_free(out);
  CHECK_RC(ctxdb_close(db), CTXDB_OK);
  free(sid);
}

/* ---- concurrent creation of a new file ----------------------------------- */

static void creator_child(int idx, const char *path, const char *sid, int start_fd) {
  ctxdb_db *db = NULL;
  char json[128], nd[64 * 20];
  char *out = NULL, *my_sid;
  size_t n, used = 0;
  int rc, i;
  (void)sid;
  wait_for_start(start_fd); /* all open the missing file at once */
  rc = ctxdb_open(path, kBusyConfig, strlen(kBusyConfig), &db);
  if (rc != CTXDB_OK) child_fail(idx, "ctxdb_open (new file)", rc, NULL);
  snprintf(json, sizeof json, "{\"id\":\"ses_c%d\",\"payload\":{\"agent_id\":\"c%d\"}}", idx, idx);
  rc = ctxdb_session_create(db, json, strlen(json), &out, &n);
  if (rc != CTXDB_OK) child_fail(idx, "ctxdb_session_create", rc, db);
  my_sid = jstr(out, "id");
  ctxdb_free(out);
  for (i = 0; i < 20; ++i)
    used += (size_t)snprintf(nd + used, sizeof nd - used,
                             "{\"type\":\"Note\",\"actor\":\"c\",\"payload\":{\"i\":%d}}\n", i);
  rc = ctxdb_append_batch(db, my_sid, strlen(my_sid), nd, used, &out, &n);
  if (rc != CTXDB_OK) child_fail(idx, "ctxdb_append_batch", rc, db);
  ctxdb_free(out);
  free(my_sid);
  rc = ctxdb_close(db);
  if (rc != CTXDB_OK) child_fail(idx, "ctxdb_close", rc, NULL);
  _exit(0);
}

static void test_concurrent_create(const char *path) {
  ctxdb_db *db = NULL;
  char *out = NULL, **items;
  size_t n;
  int count, i;

  CHECK(!file_exists(path));
  run_children(creator_child, path, NULL);
  if (!CHECK_RC(ctxdb_open(path, NULL, 0, &db), CTXDB_OK)) return;
  CHECK_RC(ctxdb_session_list(db, &out, &n), CTXDB_OK);
  count = jarray(out, &items);
  CHECK(count == NPROC);
  for (i = 0; i < count; ++i) {
    CHECK(jnum(items[i], "event_count") == 21);
    CHECK(jnum(items[i], "last_seq") == 21);
  }
  if (count > 0) jfree_items(items, count);
  ctxdb_free(out);
  out = NULL;
  CHECK_RC(ctxdb_verify(db, NULL, 0, &out, &n), CTXDB_OK);
  CHECK(jbool(out, "ok") == 1);
  CHECK(jnum(out, "sessions") == NPROC);
  CHECK(jnum(out, "events") == NPROC * 21);
  ctxdb_free(out);
  CHECK_RC(ctxdb_close(db), CTXDB_OK);
}

/* ---- threads on one handle ------------------------------------------------ */

struct thread_arg {
  ctxdb_db *db;
  const char *sid;
  int idx;
  int failures;
  char first_error[256];
};

static void thread_failed(struct thread_arg *a, const char *msg) {
  if (a->failures++ == 0) snprintf(a->first_error, sizeof a->first_error, "%s", msg);
}

static void *thread_main(void *p) {
  struct thread_arg *a = (struct thread_arg *)p;
  int k, rc;
  char ev[256], key[32];
  char *out;
  size_t n;
  snprintf(key, sizeof key, "bogus_t%d", a->idx);
  for (k = 0; k < PER_THREAD; ++k) {
    snprintf(ev, sizeof ev, "{\"type\":\"Note\",\"actor\":\"t%d\",\"payload\":{\"t\":%d,\"k\":%d}}",
             a->idx, a->idx, k);
    out = NULL;
    rc = ctxdb_append(a->db, a->sid, strlen(a->sid), ev, strlen(ev), &out, &n);
    if (rc != CTXDB_OK) thread_failed(a, ctxdb_errmsg(a->db));
    ctxdb_free(out);
    if (k % 10 == 0) {
      /* A failing call whose message names this thread's own key. */
      const char *m;
      snprintf(ev, sizeof ev, "{\"type\":\"Note\",\"actor\":\"t\",\"payload\":{},\"%s\":1}", key);
      out = (char *)&n;
      rc = ctxdb_append(a->db, a->sid, strlen(a->sid), ev, strlen(ev), &out, &n);
      if (rc != CTXDB_INVALID_ARG) thread_failed(a, "bad event not refused");
      if (out != NULL) thread_failed(a, "out not cleared");
      m = ctxdb_errmsg(a->db);
      if (!m || !strstr(m, key)) thread_failed(a, "errmsg(db) is another thread's");
      m = ctxdb_errmsg(NULL);
      if (!m || !strstr(m, key)) thread_failed(a, "errmsg(NULL) is another thread's");
    }
  }
  return NULL;
}

static void test_threads_share_a_handle(const char *path) {
  ctxdb_db *db = NULL;
  pthread_t th[NTHREADS];
  struct thread_arg args[NTHREADS];
  char *out = NULL, *sid = NULL, *text, **lines;
  size_t n;
  int i, rows, nl;
  const int64_t total = 1 + (int64_t)NTHREADS * PER_THREAD;

  if (!CHECK_RC(ctxdb_open(path, NULL, 0, &db), CTXDB_OK)) return;
  {
    const char *j = "{\"payload\":{\"agent_id\":\"th\"}}";
    CHECK_RC(ctxdb_session_create(db, j, strlen(j), &out, &n), CTXDB_OK);
  }
  sid = jstr(out, "id");
  ctxdb_free(out);
  if (!CHECK(sid != NULL)) return;
  for (i = 0; i < NTHREADS; ++i) {
    args[i].db = db;
    args[i].sid = sid;
    args[i].idx = i;
    args[i].failures = 0;
    args[i].first_error[0] = '\0';
    CHECK(pthread_create(&th[i], NULL, thread_main, &args[i]) == 0);
  }
  for (i = 0; i < NTHREADS; ++i) {
    pthread_join(th[i], NULL);
    if (!CHECK(args[i].failures == 0))
      fprintf(stderr, "    thread %d: %d failures, first: %s\n", i, args[i].failures,
              args[i].first_error);
  }
  text = rows_of(db, sid, 1, -1, &rows);
  CHECK(rows == total);
  nl = split_lines(text, &lines);
  for (i = 0; i < nl; ++i) {
    CHECK(jnum(lines[i], "seq") == i + 1);
    free(lines[i]);
  }
  free(lines);
  free(text);
  out = NULL;
  CHECK_RC(ctxdb_verify(db, sid, strlen(sid), &out, &n), CTXDB_OK);
  CHECK(jbool(out, "ok") == 1 && jnum(out, "events") == total);
  ctxdb_free(out);
  CHECK_RC(ctxdb_close(db), CTXDB_OK);
  free(sid);
}

int main(void) {
  scratch_init("mp");
  test_concurrent_writers(scratch_path("shared.ctxdb"));
  {
    int r;
    for (r = 0; r < CREATE_ROUNDS; ++r) {
      char name[32];
      int failed_before = check_failed_;
      snprintf(name, sizeof name, "created%d.ctxdb", r);
      test_concurrent_create(scratch_path(name));
      if (check_failed_ != failed_before)
        fprintf(stderr, "    (concurrent creation, round %d)\n", r);
    }
  }
  test_threads_share_a_handle(scratch_path("threads.ctxdb"));
  scratch_cleanup();
  return check_finish("test_multiprocess");
}
