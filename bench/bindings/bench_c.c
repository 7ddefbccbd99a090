/* bench_c.c -- the C side of bench/bindings: the reference the Python and
 * Node bindings are measured against.
 *
 *   bench_bindings_c EVENTS.ndjson DB_DIR SINGLE_N BATCH_N BATCH_SIZE
 *
 * Reads the event lines the driver generated (run.py), then, each on a
 * fresh database file in DB_DIR (durability "normal"):
 *   single: ctxdb_append of lines 1..SINGLE_N, one call (one transaction)
 *           per event;
 *   batch:  ctxdb_append_batch of lines 1..BATCH_N in NDJSON chunks of
 *           BATCH_SIZE lines (the chunks are built before timing, as a host
 *           has its lines ready).
 * Only the append calls are timed, each including ctxdb_free of its result.
 * Before that an untimed warm-up (a few appends and one batch on a scratch
 * file) does what the other hosts' warm-ups do. After each scenario,
 * untimed, the session must hold every event and its chain must verify.
 *
 * Prints one JSON line per scenario: {"host":"c","scenario":..,"events":..,
 * "seconds":..,"eps":..}. Exit status 0, or 1 on any error (printed).
 */
#define _POSIX_C_SOURCE 200809L

#include <ctxdb/ctxdb.h>
#include <sqlite3.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void die(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("bench_bindings_c: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  exit(1);
}

static void check_rc(int rc, const char *call, const ctxdb_db *db) {
  if (rc != CTXDB_OK) {
    const char *msg = ctxdb_errmsg(db);
    die("%s failed: %s: %s", call, ctxdb_errstr(rc), msg ? msg : "(no message)");
  }
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- the event lines ---------------------------------------------------- */

typedef struct {
  char *text; /* the whole file; lines point into it */
  const char **line;
  size_t *len; /* without the newline */
  size_t count;
} Lines;

static Lines read_lines(const char *path) {
  Lines l = {0};
  FILE *f = fopen(path, "rb");
  if (!f) die("cannot open %s", path);
  if (fseek(f, 0, SEEK_END) != 0) die("cannot seek %s", path);
  long size = ftell(f);
  if (size < 0 || fseek(f, 0, SEEK_SET) != 0) die("cannot size %s", path);
  l.text = malloc((size_t)size + 1);
  if (!l.text) die("out of memory");
  if (fread(l.text, 1, (size_t)size, f) != (size_t)size) die("cannot read %s", path);
  fclose(f);
  l.text[size] = '\0';
  size_t cap = 1024;
  l.line = malloc(cap * sizeof *l.line);
  l.len = malloc(cap * sizeof *l.len);
  for (char *p = l.text; *p;) {
    char *nl = strchr(p, '\n');
    size_t n = nl ? (size_t)(nl - p) : strlen(p);
    if (n > 0) {
      if (l.count == cap) {
        cap *= 2;
        l.line = realloc(l.line, cap * sizeof *l.line);
        l.len = realloc(l.len, cap * sizeof *l.len);
      }
      if (!l.line || !l.len) die("out of memory");
      l.line[l.count] = p;
      l.len[l.count] = n;
      l.count++;
    }
    p = nl ? nl + 1 : p + n;
  }
  return l;
}

/* ---- one database -------------------------------------------------------- */

typedef struct {
  ctxdb_db *db;
  char sid[128];
  size_t sid_len;
} Db;

static void remove_db(const char *path) {
  static const char *const suffix[] = {"", "-wal", "-shm", "-journal"};
  char buf[4096];
  for (size_t i = 0; i < sizeof suffix / sizeof *suffix; ++i) {
    snprintf(buf, sizeof buf, "%s%s", path, suffix[i]);
    unlink(buf);
  }
}

/* The string value of "key" in a small engine output (first match). */
static int json_string(const char *json, const char *key, char *out, size_t cap) {
  char pat[64];
  snprintf(pat, sizeof pat, "\"%s\":\"", key);
  const char *p = strstr(json, pat);
  if (!p) return 0;
  p += strlen(pat);
  const char *end = strchr(p, '"');
  if (!end || (size_t)(end - p) >= cap) return 0;
  memcpy(out, p, (size_t)(end - p));
  out[end - p] = '\0';
  return 1;
}

static long long json_int(const char *json, const char *key) {
  char pat[64];
  snprintf(pat, sizeof pat, "\"%s\":", key);
  const char *p = strstr(json, pat);
  return p ? strtoll(p + strlen(pat), NULL, 10) : -1;
}

static Db db_open(const char *path) {
  Db d = {0};
  remove_db(path);
  static const char config[] = "{\"durability\":\"normal\"}";
  check_rc(ctxdb_open(path, config, sizeof config - 1, &d.db), "ctxdb_open", NULL);
  static const char session[] = "{\"actor\":\"host\",\"payload\":{\"agent_id\":\"bench-agent\"}}";
  char *out = NULL;
  check_rc(ctxdb_session_create(d.db, session, sizeof session - 1, &out, NULL),
           "ctxdb_session_create", d.db);
  if (!json_string(out, "id", d.sid, sizeof d.sid)) die("no session id in %s", out);
  d.sid_len = strlen(d.sid);
  ctxdb_free(out);
  return d;
}

/* Untimed: every event is there and the chain verifies. */
static void db_check_close(Db *d, size_t appended, const char *path) {
  char *out = NULL;
  check_rc(ctxdb_session_get(d->db, d->sid, d->sid_len, &out, NULL), "ctxdb_session_get", d->db);
  long long count = json_int(out, "event_count");
  /* Whether SessionStarted counts is the engine's business; allow both. */
  if (count != (long long)appended && count != (long long)appended + 1)
    die("session holds %lld events after %zu appends", count, appended);
  ctxdb_free(out);
  check_rc(ctxdb_verify(d->db, d->sid, d->sid_len, &out, NULL), "ctxdb_verify", d->db);
  if (!strstr(out, "\"ok\":true")) die("ctxdb_verify: %s", out);
  ctxdb_free(out);
  check_rc(ctxdb_close(d->db), "ctxdb_close", NULL);
  d->db = NULL;
  remove_db(path);
}

/* ---- scenarios ----------------------------------------------------------- */

static double run_single(const char *path, const Lines *l, size_t n) {
  Db d = db_open(path);
  double t0 = now();
  for (size_t i = 0; i < n; ++i) {
    char *out = NULL;
    size_t out_len = 0;
    int rc = ctxdb_append(d.db, d.sid, d.sid_len, l->line[i], l->len[i], &out, &out_len);
    check_rc(rc, "ctxdb_append", d.db);
    ctxdb_free(out);
  }
  double secs = now() - t0;
  db_check_close(&d, n, path);
  return secs;
}

typedef struct {
  char *text;
  size_t len;
} Chunk;

static Chunk *make_chunks(const Lines *l, size_t n, size_t size, size_t *count) {
  *count = (n + size - 1) / size;
  Chunk *c = calloc(*count, sizeof *c);
  if (!c) die("out of memory");
  for (size_t k = 0; k < *count; ++k) {
    size_t first = k * size, last = first + size < n ? first + size : n;
    size_t bytes = 0;
    for (size_t i = first; i < last; ++i) bytes += l->len[i] + 1;
    c[k].text = malloc(bytes);
    if (!c[k].text) die("out of memory");
    for (size_t i = first; i < last; ++i) {
      memcpy(c[k].text + c[k].len, l->line[i], l->len[i]);
      c[k].len += l->len[i];
      c[k].text[c[k].len++] = '\n';
    }
  }
  return c;
}

static double run_batch(const char *path, const Chunk *chunks, size_t count, size_t n) {
  Db d = db_open(path);
  double t0 = now();
  for (size_t k = 0; k < count; ++k) {
    char *out = NULL;
    size_t out_len = 0;
    int rc =
        ctxdb_append_batch(d.db, d.sid, d.sid_len, chunks[k].text, chunks[k].len, &out, &out_len);
    check_rc(rc, "ctxdb_append_batch", d.db);
    ctxdb_free(out);
  }
  double secs = now() - t0;
  db_check_close(&d, n, path);
  return secs;
}

static size_t parse_count(const char *s, const char *what) {
  char *end = NULL;
  unsigned long long v = strtoull(s, &end, 10);
  if (!*s || *end || v == 0) die("%s must be a positive integer, not '%s'", what, s);
  return (size_t)v;
}

static void report(const char *scenario, size_t n, double secs) {
  printf("{\"host\":\"c\",\"scenario\":\"%s\",\"events\":%zu,\"seconds\":%.6f,"
         "\"eps\":%.1f}\n",
         scenario, n, secs, (double)n / secs);
}

int main(int argc, char **argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: bench_bindings_c EVENTS.ndjson DB_DIR SINGLE_N "
                    "BATCH_N BATCH_SIZE\n");
    return 2;
  }
  size_t single_n = parse_count(argv[3], "SINGLE_N");
  size_t batch_n = parse_count(argv[4], "BATCH_N");
  size_t batch_size = parse_count(argv[5], "BATCH_SIZE");
  Lines l = read_lines(argv[1]);
  if (l.count < single_n || l.count < batch_n || l.count < batch_size)
    die("%s has %zu events, fewer than asked for", argv[1], l.count);
  char path[4096];

  /* Warm-up, untimed: the same calls on a scratch file. */
  size_t wn = single_n < 200 ? single_n : 200, wchunks = 0;
  Chunk *warm = make_chunks(&l, batch_size, batch_size, &wchunks);
  snprintf(path, sizeof path, "%s/c-warmup.ctxdb", argv[2]);
  run_single(path, &l, wn);
  run_batch(path, warm, wchunks, batch_size);

  size_t nchunks = 0;
  Chunk *chunks = make_chunks(&l, batch_n, batch_size, &nchunks);

  snprintf(path, sizeof path, "%s/c-single.ctxdb", argv[2]);
  report("single", single_n, run_single(path, &l, single_n));
  snprintf(path, sizeof path, "%s/c-batch.ctxdb", argv[2]);
  report("batch", batch_n, run_batch(path, chunks, nchunks, batch_n));
  /* The SQLite this process loaded is the one libctxdb runs on. */
  printf("{\"host\":\"c\",\"meta\":{\"ctxdb\":\"%s\",\"sqlite\":\"%s\"}}\n", ctxdb_version(),
         sqlite3_libversion());
  return 0;
}
