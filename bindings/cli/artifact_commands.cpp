// artifact_commands.cpp — the artifact store from the shell: list, read,
// preview, search, put and export artifacts.
#include "commands.hpp"

#include "command_io.hpp"
#include "format.hpp"
#include "json.hpp"

#include <ctxdb/ctxdb.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>
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
  write_bytes(stdout, db.artifact_read(args.positional.at(0), offset, length), "stdout");
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

int cmd_artifact_put(const Args &args) {
  const std::string &file = args.positional.at(0);
  std::string data = read_input(file);
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
  auto db = open_db(args, Access::create);
  std::string artifact = db.artifact_put(data, meta);
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
  std::string bytes = db.artifact_read(args.positional.at(0));
  const std::string &file = args.positional.at(1);
  if (file == "-") {
    write_bytes(stdout, bytes, "stdout");
    return 0;
  }
  std::FILE *f = std::fopen(file.c_str(), "wb");
  if (!f) throw ctxdb::Error(CTXDB_IO, "cannot open " + file + ": " + std::strerror(errno));
  bool ok = bytes.empty() || std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  ok = std::fclose(f) == 0 && ok;
  if (!ok) throw ctxdb::Error(CTXDB_IO, "cannot write " + file + ": " + std::strerror(errno));
  return 0;
}

} // namespace cli
