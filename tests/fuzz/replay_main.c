/* Runs a fuzz target's LLVMFuzzerTestOneInput over every file of the
 * folders (or files) given, once each: libFuzzer's corpus replay, for a
 * build without libFuzzer. Fails when it ran no input at all, which would
 * prove nothing. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  /* a copy of its own, as libFuzzer gives: ASan then sees any overread */
  uint8_t *data = malloc(size > 0 ? (size_t)size : 1);
  if (fread(data, 1, (size_t)size, f) != (size_t)size) {
    fprintf(stderr, "cannot read %s\n", path);
    exit(1);
  }
  fclose(f);
  LLVMFuzzerTestOneInput(data, (size_t)size);
  free(data);
  return 1;
}

int main(int argc, char **argv) {
  /* every input that changes the database gets the rebuild check too */
  setenv("CTXDB_FUZZ_REBUILD_EVERY", "1", 0);
  int inputs = 0;
  for (int i = 1; i < argc; ++i) {
    struct stat st;
    if (stat(argv[i], &st) != 0) {
      fprintf(stderr, "no such file or folder: %s\n", argv[i]);
      return 1;
    }
    if (!S_ISDIR(st.st_mode)) {
      inputs += replay_file(argv[i]);
      continue;
    }
    DIR *dir = opendir(argv[i]);
    for (struct dirent *e; dir && (e = readdir(dir));) {
      char path[4096];
      snprintf(path, sizeof path, "%s/%s", argv[i], e->d_name);
      if (e->d_name[0] != '.' && stat(path, &st) == 0 && S_ISREG(st.st_mode))
        inputs += replay_file(path);
    }
    if (dir) closedir(dir);
  }
  printf("replayed %d inputs\n", inputs);
  return inputs > 0 ? 0 : 1;
}
