/* libFuzzer target for a transcript reader (ctxdb_transcript_import),
 * built once per format: FUZZ_FORMAT names it ("claude-code", "codex",
 * "pi") and FUZZ_SESSION_FILE the path, under a folder of its own, of a
 * session file as that agent names it. The readers read files, so the
 * input is written to that file: first up to the line break nearest its
 * middle, imported while the agent may still be writing ("final": false),
 * then whole and imported as final, as an agent's file grows. Whatever
 * the bytes: no crash, no sanitizer report; a third import, of the same
 * bytes written again, finds nothing new or changed; the database still
 * verifies. */
#include "fuzz_harness.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef FUZZ_FORMAT
#error "FUZZ_FORMAT and FUZZ_SESSION_FILE name the format and its file"
#endif

static char fuzz_dir[64], fuzz_file[256];

static void fuzz_remove_file(void) {
  unlink(fuzz_file);
  /* the folders below fuzz_dir, deepest first */
  char path[256];
  snprintf(path, sizeof path, "%s", fuzz_file);
  for (char *slash; (slash = strrchr(path, '/')) && strlen(path) > strlen(fuzz_dir);) {
    *slash = '\0';
    rmdir(path);
  }
}

/* A folder of the process's own on a tmpfs (/dev/shm when there is one),
 * holding the session file's folders. */
static void fuzz_make_file(void) {
  snprintf(fuzz_dir, sizeof fuzz_dir, "%s/ctxdb-fuzz-XXXXXX",
           access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
  if (!mkdtemp(fuzz_dir)) fuzz_die("mkdtemp", NULL);
  snprintf(fuzz_file, sizeof fuzz_file, "%s/%s", fuzz_dir, FUZZ_SESSION_FILE);
  for (char *slash = fuzz_file + strlen(fuzz_dir) + 1; (slash = strchr(slash, '/')); ++slash) {
    *slash = '\0';
    mkdir(fuzz_file, 0700);
    *slash = '/';
  }
  atexit(fuzz_remove_file);
}

/* Writes the file, with a modification time of its own: the handle
 * remembers the size and time of each file it read to the end and does
 * not read it again while both stay the same, and another input's file
 * may have the size of this one's. */
static void fuzz_write(const uint8_t *data, size_t size) {
  static long writes;
  FILE *f = fopen(fuzz_file, "wb");
  if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0) fuzz_die("write", NULL);
  const struct timespec t[2] = {{0, UTIME_OMIT}, {1700000000 + ++writes, 0}};
  if (utimensat(AT_FDCWD, fuzz_file, t, 0) != 0) fuzz_die("utimensat", NULL);
}

/* Imports the file; returns the report (ctxdb_free it). */
static char *fuzz_import(ctxdb_db *db, int final) {
  char options[512];
  int n = snprintf(options, sizeof options, "{\"format\":\"%s\",\"path\":\"%s\",\"final\":%s}",
                   FUZZ_FORMAT, fuzz_file, final ? "true" : "false");
  char *out = NULL;
  size_t len = 0;
  int rc = ctxdb_transcript_import(db, options, (size_t)n, &out, &len);
  if (rc != CTXDB_OK) fuzz_die("transcript import", db); /* a bad file is reported, not an error */
  return out;
}

/* A count of the report's own (its last members: a record type the file
 * names may come first, as a key of "unknown"). */
static long fuzz_report_count(const char *report, const char *name) {
  char key[32];
  snprintf(key, sizeof key, "\"%s\":", name);
  const char *last = NULL;
  for (const char *p = report; (p = strstr(p, key)); ++p) last = p;
  if (!last) fuzz_die("the import report has no count", NULL);
  return strtol(last + strlen(key), NULL, 10);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!fuzz_file[0]) fuzz_make_file();
  size_t half = size / 2;
  while (half > 0 && data[half - 1] != '\n') --half;
  ctxdb_db *db = fuzz_open();
  fuzz_write(data, half);
  char *out = fuzz_import(db, 0);
  fuzz_drop(&out);
  fuzz_write(data, size);
  out = fuzz_import(db, 1);
  fuzz_drop(&out);
  fuzz_write(data, size); /* rewritten: its time tells the importer to read it again */
  out = fuzz_import(db, 1);
  if (fuzz_report_count(out, "imported") != 0 || fuzz_report_count(out, "changed") != 0) {
    fprintf(stderr, "the third import found more: %s\n", out);
    abort();
  }
  fuzz_drop(&out);
  fuzz_check_and_reset(data, size);
  return 0;
}
