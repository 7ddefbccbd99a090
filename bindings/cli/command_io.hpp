// command_io.hpp — what the commands share: opening the database the way a
// command needs it, reading input, and printing events.
#ifndef CTXDB_CLI_COMMAND_IO_HPP
#define CTXDB_CLI_COMMAND_IO_HPP

#include "args.hpp"
#include "json.hpp"

#include <ctxdb/ctxdb.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace cli {

// How a command uses the file. Inspections open it read-only, so looking
// never writes; commands that need existing data refuse a missing file
// rather than leave an empty database behind a mistyped path.
enum class Access { create, existing, read_only };

std::string db_path(const Args &args);
ctxdb::Database open_db(const Args &args, Access access);

// A whole stream, or a file ("-" is stdin).
std::string read_all(std::FILE *f, const std::string &name);
std::string read_input(const std::string &file);

void print_row(std::string_view row);
// The array a library call returned; anything else is a library bug.
simdjson::dom::array array_of(element root, const char *what);

// The value of a flag that takes a non-negative integer (a seq, a time).
int64_t non_negative(std::string_view flag, const std::string &text, std::string_view what);

// --from SEQ (default 1).
int64_t parse_from_seq(const Args &args);
// One stored event as a log line; with show_branch, its branch first.
void print_event_line(std::string_view row, std::string &last_date, bool show_branch = false);
// Whether the session has forked: then log lines name each event's branch.
bool has_forks(ctxdb::Database &db, const std::string &session);
// The rows of an event iterator over one session: log lines, or the stored
// JSON (--json).
void print_events(ctxdb::Database &db, const std::string &session, ctxdb::Iter &it,
                  const Args &args);

} // namespace cli

#endif // CTXDB_CLI_COMMAND_IO_HPP
