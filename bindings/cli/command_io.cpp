// command_io.cpp — what the commands share.
#include "command_io.hpp"

#include "format.hpp"

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>

namespace cli {

// The value of a flag that takes a non-negative integer (a seq, a time).
int64_t non_negative(std::string_view flag, const std::string &text, std::string_view what) {
  int64_t n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size() || n < 0)
    throw UsageError(std::string(flag) + " needs " + std::string(what) + ", got '" + text + "'");
  return n;
}

std::string db_path(const Args &args) {
  if (args.db) return *args.db;
  const char *env = std::getenv("CTXDB_DB");
  if (env && *env) return env;
  throw UsageError("no database: pass --db PATH or set CTXDB_DB");
}

ctxdb::Database open_db(const Args &args, Access access) {
  std::string path = db_path(args);
  if (access != Access::create && !std::filesystem::exists(path))
    throw ctxdb::Error(CTXDB_IO, "no database at '" + path + "' (create one with 'ctxdb init')");
  if (access == Access::read_only) return ctxdb::Database::open(path, R"({"read_only":true})");
  return ctxdb::Database::open(path);
}

// Reads a whole stream; NDJSON goes to the library in one call.
std::string read_all(std::FILE *f, const std::string &name) {
  std::string data;
  char buf[1 << 16];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) data.append(buf, n);
  if (std::ferror(f))
    throw ctxdb::Error(CTXDB_IO, "cannot read " + name + ": " + std::strerror(errno));
  return data;
}

std::string read_input(const std::string &file) {
  if (file == "-") return read_all(stdin, "stdin");
  std::unique_ptr<std::FILE, int (*)(std::FILE *)> f(std::fopen(file.c_str(), "rb"), std::fclose);
  if (!f) throw ctxdb::Error(CTXDB_IO, "cannot open '" + file + "': " + std::strerror(errno));
  return read_all(f.get(), "'" + file + "'");
}

void print_row(std::string_view row) {
  std::fwrite(row.data(), 1, row.size(), stdout);
  std::fputc('\n', stdout);
}

// The array a library call returned; anything else is a library bug.
simdjson::dom::array array_of(element root, const char *what) {
  simdjson::dom::array items;
  if (root.get_array().get(items) != simdjson::SUCCESS)
    throw ctxdb::Error(CTXDB_INTERNAL, std::string(what) + " did not return an array");
  return items;
}

int64_t parse_from_seq(const Args &args) {
  auto text = args.value("--from");
  if (!text) return 1;
  return non_negative("--from", *text, "a sequence number");
}

// One event per line, at most line_width() characters. The date is printed as
// a separator line when it changes, which keeps each row narrow enough to
// leave room for the payload summary.

// With show_branch (a session of several branches), the summary starts
// with the event's branch id, as "[alt1]".
void print_event_line(std::string_view row, std::string &last_date, bool show_branch) {
  JsonDoc event(row);
  element e = event.root();
  std::string when = iso_utc(get_int(e, "ts"));
  std::string date = when.substr(0, 10), time = when.substr(11, 12);
  if (date != last_date) std::printf("-- %s (UTC)\n", date.c_str());
  last_date = date;
  element payload;
  std::string summary =
      e["payload"].get(payload) == simdjson::SUCCESS ? summarize_payload(payload) : "";
  if (show_branch) summary = "[" + one_line(get_string(e, "branch_id")) + "] " + summary;
  // Type and actor are host text too, hence one_line. The widths fit the
  // longest core type (AssistantMessageCreated) and actor (assistant).
  std::string line = pad_left(std::to_string(get_int(e, "seq")), 4) + "  " + time + "  " +
                     pad_right(one_line(get_string(e, "type")), 23) + " " +
                     pad_right(one_line(get_string(e, "actor")), 9) + " " + summary;
  std::printf("%s\n", truncate_cols(line, line_width()).c_str());
}

// Whether the session has forked: then log lines name each event's branch.
bool has_forks(ctxdb::Database &db, const std::string &session) {
  JsonDoc list(db.branch_list(session));
  simdjson::dom::array branches;
  return list.root().get_array().get(branches) == simdjson::SUCCESS && branches.size() > 1;
}

// The rows of an event iterator over one session: log lines, or the stored
// JSON (--json).
void print_events(ctxdb::Database &db, const std::string &session, ctxdb::Iter &it,
                  const Args &args) {
  bool json = args.has("--json"), show_branch = !json && has_forks(db, session);
  std::string_view row;
  std::string last_date;
  while (it.next(row)) {
    if (json)
      print_row(row);
    else
      print_event_line(row, last_date, show_branch);
  }
}

} // namespace cli
