/*
 * util.h — helpers shared by the C ABI tests: a scratch directory, file
 * bytes, a tiny reader for the engine's compact JSON output (top-level
 * fields of an object, elements of an array; enough to check values without
 * a JSON library), and the export stream as one string.
 */
#ifndef CTXDB_TEST_UTIL_H
#define CTXDB_TEST_UTIL_H

#include "check.h"

#include <ctxdb/ctxdb.h>

#include <sqlite3.h>

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

/* ---- scratch directory ------------------------------------------------- */

static char scratch_dir_[512];

/* Creates a fresh directory under $TMPDIR (or /tmp); exits if impossible. */
static inline const char *scratch_init(const char *tag) {
  const char *tmp = getenv("TMPDIR");
  if (!tmp || !*tmp) tmp = "/tmp";
  snprintf(scratch_dir_, sizeof scratch_dir_, "%s/ctxdb-capi-%s-XXXXXX", tmp, tag);
  if (!mkdtemp(scratch_dir_)) {
    fprintf(stderr, "mkdtemp(%s): %s\n", scratch_dir_, strerror(errno));
    exit(2);
  }
  return scratch_dir_;
}

/* A path inside the scratch directory (a static rotating buffer). */
static inline const char *scratch_path(const char *name) {
  static char bufs[8][600];
  static int next = 0;
  char *b = bufs[next++ % 8];
  snprintf(b, sizeof bufs[0], "%s/%s", scratch_dir_, name);
  return b;
}

/* Removes a directory and everything in it. */
static inline void remove_tree(const char *dir) {
  DIR *d = opendir(dir);
  struct dirent *e;
  char p[1200];
  if (!d) return;
  while ((e = readdir(d)) != NULL) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    if (snprintf(p, sizeof p, "%s/%s", dir, e->d_name) >= (int)sizeof p) continue;
    if (unlink(p) != 0) remove_tree(p);
  }
  closedir(d);
  rmdir(dir);
}

/* Removes the scratch directory and what the test left in it. */
static inline void scratch_cleanup(void) { remove_tree(scratch_dir_); }

static inline int file_exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

/* Reads a whole file (malloc'd, NUL-terminated); NULL when unreadable. */
static inline char *file_read(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  char *buf = NULL;
  size_t cap = 0, n = 0, r;
  if (!f) return NULL;
  do {
    if (n + 4096 + 1 > cap) {
      char *nb;
      cap = cap ? cap * 2 : 8192;
      nb = (char *)realloc(buf, cap);
      if (!nb) {
        free(buf);
        fclose(f);
        return NULL;
      }
      buf = nb;
    }
    r = fread(buf + n, 1, 4096, f);
    n += r;
  } while (r > 0);
  fclose(f);
  buf[n] = '\0';
  if (len) *len = n;
  return buf;
}

static inline int file_write(const char *path, const void *data, size_t len) {
  FILE *f = fopen(path, "wb");
  size_t w;
  if (!f) return 0;
  w = fwrite(data, 1, len, f);
  return fclose(f) == 0 && w == len;
}

static inline int64_t now_ms(void) {
  struct timeval tv;
  gettimeofday(&tv, NULL);
  return (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

/* Runs SQL on the file behind ctxdb's back (as a damaged or tampered file
 * would be); prints SQLite's message and returns 0 when it fails. */
static inline int sql_exec(const char *path, const char *sql) {
  sqlite3 *s = NULL;
  char *err = NULL;
  int rc = sqlite3_open(path, &s);
  if (rc == SQLITE_OK) rc = sqlite3_exec(s, sql, NULL, NULL, &err);
  if (rc != SQLITE_OK)
    fprintf(stderr, "    sqlite3 (%s): %s\n", sql, err ? err : sqlite3_errmsg(s));
  sqlite3_free(err);
  sqlite3_close(s);
  return rc == SQLITE_OK;
}

/* Whether the len bytes at s are UTF-8 (RFC 3629: no overlong forms, no
 * surrogates, nothing above U+10FFFF). */
static inline int is_utf8(const char *s, size_t len) {
  const unsigned char *p = (const unsigned char *)s, *e = p + len;
  while (p < e) {
    unsigned c = *p++, need, lo = 0x80, hi = 0xBF;
    if (c < 0x80) continue;
    if (c >= 0xC2 && c <= 0xDF)
      need = 1;
    else if (c >= 0xE0 && c <= 0xEF)
      need = 2, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    else if (c >= 0xF0 && c <= 0xF4)
      need = 3, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    else
      return 0;
    for (; need > 0; --need, lo = 0x80, hi = 0xBF) {
      if (p == e || *p < lo || *p > hi) return 0;
      ++p;
    }
  }
  return 1;
}

static inline void sleep_ms(long ms) {
  struct timespec ts;
  ts.tv_sec = ms / 1000;
  ts.tv_nsec = (ms % 1000) * 1000000L;
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

/* ---- JSON written with single quotes ------------------------------------ */

/* Q("{'type':'x'}") is "{\"type\":\"x\"}": test JSON stays readable. The
 * result lives in a static rotating buffer (16 slots). */
static inline const char *Q(const char *s) {
  static char bufs[16][8192];
  static int next = 0;
  char *b = bufs[next++ % 16];
  size_t i = 0;
  for (; *s && i + 1 < sizeof bufs[0]; ++s) b[i++] = (*s == '\'') ? '"' : *s;
  b[i] = '\0';
  return b;
}

/* ---- databases in the scratch directory ---------------------------------- */

/* Opens (creating it) the database scratch/name; NULL, checked, on failure. */
static inline ctxdb_db *open_scratch(const char *name) {
  ctxdb_db *db = NULL;
  CHECK_RC(ctxdb_open(scratch_path(name), NULL, 0, &db), CTXDB_OK);
  return db;
}

/* Appends one event, checking that it is stored. */
static inline void append_ok(ctxdb_db *db, const char *sid, const char *json) {
  char *out = NULL;
  size_t n = 0;
  CHECK_RC(ctxdb_append(db, sid, strlen(sid), json, strlen(json), &out, &n), CTXDB_OK);
  ctxdb_free(out);
}

/* ---- a reader for compact JSON ------------------------------------------ */

static inline const char *jl_ws(const char *p, const char *e) {
  while (p < e && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) ++p;
  return p;
}

/* p at '"'; returns just past the closing quote, or NULL. */
static inline const char *jl_string(const char *p, const char *e) {
  if (p >= e || *p != '"') return NULL;
  for (++p; p < e; ++p) {
    if (*p == '\\') {
      ++p;
      continue;
    }
    if (*p == '"') return p + 1;
  }
  return NULL;
}

/* Skips one value; returns just past it, or NULL when malformed. */
static inline const char *jl_value(const char *p, const char *e) {
  p = jl_ws(p, e);
  if (p >= e) return NULL;
  if (*p == '"') return jl_string(p, e);
  if (*p == '{' || *p == '[') {
    int depth = 0;
    while (p < e) {
      if (*p == '"') {
        p = jl_string(p, e);
        if (!p) return NULL;
        continue;
      }
      if (*p == '{' || *p == '[') ++depth;
      if (*p == '}' || *p == ']') {
        if (--depth == 0) return p + 1;
      }
      ++p;
    }
    return NULL;
  }
  {
    const char *s = p;
    while (p < e && !strchr(",}] \t\r\n", *p)) ++p;
    return p > s ? p : NULL;
  }
}

/* Finds the top-level field `key` of the object json[0..len); sets the raw
 * value span. Returns 1 when found. */
static inline int jget(const char *json, size_t len, const char *key, const char **val,
                       size_t *vlen) {
  const char *p, *e;
  size_t klen = strlen(key);
  if (!json) return 0;
  p = json;
  e = json + len;
  p = jl_ws(p, e);
  if (p >= e || *p != '{') return 0;
  ++p;
  for (;;) {
    const char *ks, *ke, *vs, *ve;
    p = jl_ws(p, e);
    if (p >= e || *p == '}') return 0;
    ks = p + 1;
    ke = jl_string(p, e);
    if (!ke) return 0;
    p = jl_ws(ke, e);
    if (p >= e || *p != ':') return 0;
    vs = jl_ws(p + 1, e);
    ve = jl_value(vs, e);
    if (!ve) return 0;
    if ((size_t)(ke - 1 - ks) == klen && memcmp(ks, key, klen) == 0) {
      *val = vs;
      *vlen = (size_t)(ve - vs);
      return 1;
    }
    p = jl_ws(ve, e);
    if (p < e && *p == ',') {
      ++p;
      continue;
    }
    return 0;
  }
}

/* An integer field; sets *ok to 0 when absent or not an integer. */
static inline int64_t jint(const char *json, const char *key, int *ok) {
  const char *v;
  size_t n;
  char buf[32], *end;
  long long x;
  *ok = 0;
  if (!json || !jget(json, strlen(json), key, &v, &n) || n == 0 || n >= sizeof buf) return 0;
  memcpy(buf, v, n);
  buf[n] = '\0';
  errno = 0;
  x = strtoll(buf, &end, 10);
  if (*end != '\0' || errno) return 0;
  *ok = 1;
  return (int64_t)x;
}

/* An integer field, or INT64_MIN when absent or not an integer. */
static inline int64_t jnum(const char *json, const char *key) {
  int ok;
  int64_t x = jint(json, key, &ok);
  return ok ? x : INT64_MIN;
}

/* A string field's raw contents (no unescaping), malloc'd; NULL when absent
 * or not a string. */
static inline char *jstr(const char *json, const char *key) {
  const char *v;
  size_t n;
  char *s;
  if (!json || !jget(json, strlen(json), key, &v, &n) || n < 2 || v[0] != '"') return NULL;
  s = (char *)malloc(n - 1);
  if (!s) return NULL;
  memcpy(s, v + 1, n - 2);
  s[n - 2] = '\0';
  return s;
}

/* The raw text of any field (an object, an array, a literal), malloc'd. */
static inline char *jraw(const char *json, const char *key) {
  const char *v;
  size_t n;
  char *s;
  if (!json || !jget(json, strlen(json), key, &v, &n)) return NULL;
  s = (char *)malloc(n + 1);
  if (!s) return NULL;
  memcpy(s, v, n);
  s[n] = '\0';
  return s;
}

/* 1 for true, 0 for false, -1 when absent or not a boolean. */
static inline int jbool(const char *json, const char *key) {
  const char *v;
  size_t n;
  if (!json || !jget(json, strlen(json), key, &v, &n)) return -1;
  if (n == 4 && memcmp(v, "true", 4) == 0) return 1;
  if (n == 5 && memcmp(v, "false", 5) == 0) return 0;
  return -1;
}

/* Whether a string field equals want. */
static inline int jstr_eq(const char *json, const char *key, const char *want) {
  char *s = jstr(json, key);
  int eq = s && want && strcmp(s, want) == 0;
  free(s);
  return eq;
}

static inline int jstr_prefix(const char *json, const char *key, const char *prefix) {
  char *s = jstr(json, key);
  int ok = s && strncmp(s, prefix, strlen(prefix)) == 0 && strlen(s) > strlen(prefix);
  free(s);
  return ok;
}

/* Whether a string field is 64 lowercase hex digits (a SHA-256). */
static inline int jhex64(const char *json, const char *key) {
  char *s = jstr(json, key);
  int ok = s && strlen(s) == 64 && strspn(s, "0123456789abcdef") == 64;
  free(s);
  return ok;
}

/* The elements of a JSON array as malloc'd strings; returns the count, or
 * -1 when json is not an array. *items must be freed with jfree_items. */
static inline int jarray(const char *json, char ***items) {
  const char *p, *e;
  int n = 0;
  *items = NULL;
  if (!json) return -1;
  e = json + strlen(json);
  p = jl_ws(json, e);
  if (p >= e || *p != '[') return -1;
  ++p;
  for (;;) {
    const char *vs, *ve;
    char **ni;
    p = jl_ws(p, e);
    if (p < e && *p == ']') return n;
    vs = p;
    ve = jl_value(vs, e);
    if (!ve) return -1;
    ni = (char **)realloc(*items, sizeof(char *) * (size_t)(n + 1));
    if (!ni) return -1;
    *items = ni;
    (*items)[n] = (char *)malloc((size_t)(ve - vs) + 1);
    memcpy((*items)[n], vs, (size_t)(ve - vs));
    (*items)[n][ve - vs] = '\0';
    ++n;
    p = jl_ws(ve, e);
    if (p < e && *p == ',') {
      ++p;
      continue;
    }
    if (p < e && *p == ']') return n;
    return -1;
  }
}

static inline void jfree_items(char **items, int n) {
  int i;
  for (i = 0; i < n; ++i) free(items[i]);
  free(items);
}

/* Whether text mentions the decimal number n as a whole token. */
static inline int mentions_number(const char *text, long long n) {
  char num[32];
  const char *p;
  size_t k;
  if (!text) return 0;
  snprintf(num, sizeof num, "%lld", n);
  k = strlen(num);
  for (p = strstr(text, num); p; p = strstr(p + 1, num)) {
    int before = (p > text) && p[-1] >= '0' && p[-1] <= '9';
    int after = p[k] >= '0' && p[k] <= '9';
    if (!before && !after) return 1;
  }
  return 0;
}

/* ---- the export stream -------------------------------------------------- */

/* Every row of an open iterator joined with '\n' (each row followed by
 * one), malloc'd; *rows gets the row count. Frees the iterator. NULL on
 * error. */
static inline char *iter_rows(ctxdb_iter *it, int *rows) {
  const char *row;
  size_t rlen, n = 0, cap = 1024;
  char *buf;
  int rc, count = 0;
  *rows = 0;
  buf = (char *)malloc(cap);
  buf[0] = '\0';
  while ((rc = ctxdb_iter_next(it, &row, &rlen)) == CTXDB_ROW) {
    if (n + rlen + 2 > cap) {
      while (n + rlen + 2 > cap) cap *= 2;
      buf = (char *)realloc(buf, cap);
    }
    memcpy(buf + n, row, rlen);
    n += rlen;
    buf[n++] = '\n';
    buf[n] = '\0';
    ++count;
  }
  ctxdb_iter_free(it);
  if (rc != CTXDB_DONE) {
    free(buf);
    return NULL;
  }
  *rows = count;
  return buf;
}

/* Every row of events_iter(session or NULL), as iter_rows. */
static inline char *rows_of(ctxdb_db *db, const char *session_id, int64_t from, int64_t to,
                            int *rows) {
  ctxdb_iter *it = NULL;
  *rows = 0;
  if (ctxdb_events_iter(db, session_id, session_id ? strlen(session_id) : 0, from, to, &it) !=
      CTXDB_OK)
    return NULL;
  return iter_rows(it, rows);
}

static inline char *export_all(ctxdb_db *db, int *rows) { return rows_of(db, NULL, 0, -1, rows); }

/* Splits text at '\n' into malloc'd lines (blank lines dropped). */
static inline int split_lines(const char *text, char ***lines) {
  int n = 0;
  const char *p = text, *nl;
  *lines = NULL;
  if (!text) return 0;
  while (*p) {
    size_t k;
    nl = strchr(p, '\n');
    k = nl ? (size_t)(nl - p) : strlen(p);
    if (k > 0) {
      *lines = (char **)realloc(*lines, sizeof(char *) * (size_t)(n + 1));
      (*lines)[n] = (char *)malloc(k + 1);
      memcpy((*lines)[n], p, k);
      (*lines)[n][k] = '\0';
      ++n;
    }
    p += k;
    if (*p == '\n') ++p;
  }
  return n;
}

#endif /* CTXDB_TEST_UTIL_H */
