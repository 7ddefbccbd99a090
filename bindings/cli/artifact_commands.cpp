// artifact_commands.cpp — the artifact store from the shell: list, read,
// preview, search, put and export artifacts.
#include "commands.hpp"

#include "command_io.hpp"
#include "format.hpp"
#include "json.hpp"

#include <ctxdb/ctxdb.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace cli {
namespace {

void write_bytes(std::FILE *f, std::string_view bytes, const std::string &name) {
  if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size())
    throw ctxdb::Error(CTXDB_IO, "cannot write " + name + ": " + std::strerror(errno));
}

// -n LINES (default 10) for head and tail.
int64_t line_limit(const Args &args) {
  auto n = args.value("-n");
  return n ? non_negative("-n", *n, "a line count") : 10;
}

// Writes the bytes [offset, offset+length) of an artifact (length -1: to
// the end) to f a range at a time, so a large artifact never sits whole in
// memory.
void copy_out(ctxdb::Database &db, const std::string &id, int64_t offset, int64_t length,
              std::FILE *f, const std::string &name) {
  constexpr int64_t kRange = 16 << 20;
  for (;;) {
    int64_t want = length < 0 ? kRange : std::min(kRange, length);
    std::string piece = db.artifact_read(id, offset, want);
    write_bytes(f, piece, name);
    offset += int64_t(piece.size());
    if (length >= 0) length -= int64_t(piece.size());
    if (int64_t(piece.size()) < want || length == 0) return;
  }
}

int print_preview(const Args &args, const char *mode) {
  std::string spec =
      std::string("{\"mode\":\"") + mode + "\",\"lines\":" + std::to_string(line_limit(args)) + "}";
  auto db = open_db(args, Access::read_only);
  JsonDoc doc(db.artifact_preview(args.positional.at(0), spec));
  write_bytes(stdout, get_string(doc.root(), "text"), "stdout");
  return 0;
}

} // namespace

int cmd_artifact_ls(const Args &args) {
  std::optional<std::string_view> session;
  if (!args.positional.empty()) session = args.positional[0];
  auto db = open_db(args, Access::read_only);
  std::string list = db.artifact_list(session);
  if (args.has("--json")) {
    print_row(list);
    return 0;
  }
  JsonDoc doc(list);
  std::vector<std::vector<std::string>> rows;
  for (element a : array_of(doc.root(), "artifacts"))
    rows.push_back({std::string(get_string(a, "id")), std::to_string(get_int(a, "raw_size")),
                    std::to_string(get_int(a, "line_count")) + " lines",
                    std::string(get_string(a, "kind")), std::string(get_string(a, "name"))});
  if (rows.empty())
    std::printf("no artifacts\n");
  else
    print_table(rows);
  return 0;
}

int cmd_artifact_cat(const Args &args) {
  int64_t offset = 0, length = -1; // the whole content unless a range is asked for
  if (auto o = args.value("--offset")) offset = non_negative("--offset", *o, "a byte offset");
  if (auto l = args.value("--length")) length = non_negative("--length", *l, "a byte count");
  auto db = open_db(args, Access::read_only);
  copy_out(db, args.positional.at(0), offset, length, stdout, "stdout");
  return 0;
}

int cmd_artifact_show(const Args &args) {
  auto db = open_db(args, Access::read_only);
  print_row(db.artifact_info(args.positional.at(0)));
  return 0;
}

int cmd_artifact_lines(const Args &args) {
  int64_t first = non_negative("FIRST", args.positional.at(1), "a line number");
  int64_t count = args.positional.size() > 2
                      ? non_negative("COUNT", args.positional[2], "a line count")
                      : -1; // to the end
  auto db = open_db(args, Access::read_only);
  write_bytes(stdout, db.artifact_lines(args.positional.at(0), first, count), "stdout");
  return 0;
}

int cmd_artifact_head(const Args &args) { return print_preview(args, "head"); }

int cmd_artifact_tail(const Args &args) { return print_preview(args, "tail"); }

int cmd_artifact_grep(const Args &args) {
  std::string options = "{";
  if (auto c = args.value("-C")) {
    std::string n = std::to_string(non_negative("-C", *c, "a line count"));
    options += "\"before\":" + n + ",\"after\":" + n + ",";
  }
  if (auto m = args.value("-m"))
    options += "\"max_matches\":" + std::to_string(non_negative("-m", *m, "a count")) + ",";
  if (args.has("-i")) options += "\"ignore_case\":true,";
  if (options.size() > 1) options.pop_back();
  options += "}";
  auto db = open_db(args, Access::read_only);
  std::string result = db.artifact_search(args.positional.at(0), args.positional.at(1), options);
  if (args.has("--json")) {
    print_row(result);
    return 0;
  }
  JsonDoc doc(result);
  int64_t last = 0; // the last line printed
  auto print_line = [&](element l, char sep) {
    int64_t n = get_int(l, "line");
    if (n <= last) return;
    if (last > 0 && n > last + 1) std::printf("--\n");
    std::printf("%lld%c%s\n", static_cast<long long>(n), sep,
                std::string(get_string(l, "text")).c_str());
    last = n;
  };
  for (element m : array_of(doc.root()["matches"].value(), "matches")) {
    for (element l : array_of(m["before"].value(), "before")) print_line(l, '-');
    print_line(m, ':');
    for (element l : array_of(m["after"].value(), "after")) print_line(l, '-');
  }
  if (get_bool(doc.root(), "truncated"))
    std::fprintf(stderr, "ctxdb: stopped after the first matches (-m); there may be more\n");
  return 0;
}

// Streams FILE (or stdin) into a writer a block at a time, so a file of
// any size never sits in memory; nothing is stored unless all of it is read.
std::string put_stream(ctxdb::Database &db, std::FILE *in, const std::string &name,
                       const std::string &meta) {
  ctxdb::ArtifactWriter w = db.artifact_writer(meta);
  std::vector<char> block(1 << 20);
  size_t n;
  while ((n = std::fread(block.data(), 1, block.size(), in)) > 0)
    w.write(std::string_view(block.data(), n));
  if (std::ferror(in))
    throw ctxdb::Error(CTXDB_IO, "cannot read " + name + ": " + std::strerror(errno));
  return w.commit();
}

int cmd_artifact_put(const Args &args) {
  const std::string &file = args.positional.at(0);
  std::string meta = "{";
  auto add = [&](const char *key, std::optional<std::string> v) {
    if (!v) return;
    meta += std::string(meta.size() > 1 ? "," : "") + "\"" + key + "\":" + json_quote(*v);
  };
  add("kind", args.value("--kind"));
  add("mime", args.value("--mime"));
  add("name", args.value("--name") ? args.value("--name")
                                   : (file == "-" ? std::nullopt : std::optional(file)));
  meta += "}";
  // The input first: a missing file must not leave a new database behind.
  std::unique_ptr<std::FILE, int (*)(std::FILE *)> opened(
      file == "-" ? nullptr : std::fopen(file.c_str(), "rb"), std::fclose);
  if (file != "-" && !opened)
    throw ctxdb::Error(CTXDB_IO, "cannot open '" + file + "': " + std::strerror(errno));
  auto db = open_db(args, Access::create);
  std::string artifact =
      put_stream(db, opened ? opened.get() : stdin, file == "-" ? "stdin" : "'" + file + "'", meta);
  if (args.has("--json")) {
    print_row(artifact);
    return 0;
  }
  JsonDoc doc(artifact);
  std::printf("%s\n", std::string(get_string(doc.root(), "id")).c_str());
  return 0;
}

int cmd_artifact_export(const Args &args) {
  auto db = open_db(args, Access::read_only);
  const std::string &id = args.positional.at(0);
  const std::string &file = args.positional.at(1);
  if (file == "-") {
    copy_out(db, id, 0, -1, stdout, "stdout");
    return 0;
  }
  db.artifact_info(id); // an unknown id fails before the file is created
  std::unique_ptr<std::FILE, int (*)(std::FILE *)> f(std::fopen(file.c_str(), "wb"), std::fclose);
  if (!f) throw ctxdb::Error(CTXDB_IO, "cannot open " + file + ": " + std::strerror(errno));
  copy_out(db, id, 0, -1, f.get(), file);
  if (std::fclose(f.release()) != 0)
    throw ctxdb::Error(CTXDB_IO, "cannot write " + file + ": " + std::strerror(errno));
  return 0;
}

} // namespace cli
