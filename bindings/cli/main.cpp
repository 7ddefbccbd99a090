// main.cpp — the `ctxdb` command-line inspector: finds the command, turns
// failures into messages and exit codes (0 ok, 1 runtime error, 2 usage).
#include "args.hpp"
#include "commands.hpp"
#include "format.hpp"

#include <ctxdb/ctxdb.hpp>

#include <cstdio>
#include <string>
#include <vector>

namespace {

using cli::CommandSpec;
using cli::UsageError;

void print_main_help(std::FILE *out) {
  std::fprintf(out, "usage: ctxdb [--db PATH] COMMAND [ARGS]\n\n"
                    "Inspects a ctxdb database: the append-only, hash-chained log of\n"
                    "what AI agents did, kept in one SQLite file.\n\ncommands:\n");
  for (const CommandSpec &c : cli::commands())
    std::fprintf(out, "  %-14s %s\n", std::string(c.name).c_str(), std::string(c.summary).c_str());
  std::fprintf(out, "\noptions:\n"
                    "  --db PATH    the database file (default: $CTXDB_DB); also\n"
                    "               accepted after the command\n"
                    "  --wide       never cut lines (on a terminal they are cut to its\n"
                    "               width; piped output never is); also after the command\n"
                    "  --help, -h   show help; 'ctxdb COMMAND --help' for a command\n"
                    "  --version    print the versions of the CLI and the library\n"
                    "\nexit status: 0 ok, 1 error (verify: a broken chain), 2 usage "
                    "error\n");
}

void print_usage_line(std::FILE *out, const CommandSpec &c) {
  std::fprintf(out, "usage: ctxdb %s%s%s\n", std::string(c.name).c_str(),
               c.synopsis.empty() ? "" : " ", std::string(c.synopsis).c_str());
}

void print_command_help(const CommandSpec &c) {
  print_usage_line(stdout, c);
  std::printf("\n%s\n  --db PATH      the database file (default: $CTXDB_DB)\n",
              std::string(c.details).c_str());
}

// `ctxdb session --help`: the members of a command group.
void print_group_help(std::string_view group) {
  std::printf("usage: ctxdb %s SUBCOMMAND [ARGS]\n\nsubcommands:\n", std::string(group).c_str());
  for (const CommandSpec &c : cli::commands())
    if (c.name.starts_with(std::string(group) + " "))
      std::printf("  %-14s %s\n", std::string(c.name).c_str(), std::string(c.summary).c_str());
}

const CommandSpec *find_command(std::string_view name) {
  for (const CommandSpec &c : cli::commands())
    if (c.name == name) return &c;
  return nullptr;
}

bool is_group(std::string_view word) {
  for (const CommandSpec &c : cli::commands())
    if (c.name.starts_with(std::string(word) + " ")) return true;
  return false;
}

struct Globals {
  std::optional<std::string> db;
  bool wide = false;
  std::size_t next = 0; // index of the command word
};

// Flags before the command word. Returns nullopt when --help or --version
// already answered the call.
std::optional<Globals> parse_globals(const std::vector<std::string> &argv) {
  Globals g;
  for (; g.next < argv.size(); ++g.next) {
    const std::string &t = argv[g.next];
    if (t == "--help" || t == "-h") {
      print_main_help(stdout);
      return std::nullopt;
    }
    if (t == "--version") {
      std::printf("ctxdb %s (library %s)\n", CTXDB_VERSION_STRING, ctxdb_version());
      return std::nullopt;
    }
    if (t == "--db") {
      if (g.next + 1 == argv.size()) throw UsageError("--db needs a value");
      g.db = argv[++g.next];
    } else if (t.starts_with("--db=")) {
      g.db = t.substr(5);
    } else if (t == "--wide") {
      g.wide = true;
    } else if (t.size() > 1 && t[0] == '-') {
      throw UsageError("unknown flag '" + t + "'");
    } else {
      break;
    }
  }
  return g;
}

int run(const std::vector<std::string> &argv) {
  auto globals = parse_globals(argv);
  if (!globals) return 0;
  std::size_t i = globals->next;
  if (i == argv.size()) throw UsageError("no command given (see 'ctxdb --help')");

  const CommandSpec *spec = nullptr;
  std::size_t words = 1;
  if (i + 1 < argv.size()) spec = find_command(argv[i] + " " + argv[i + 1]);
  if (spec)
    words = 2;
  else
    spec = find_command(argv[i]);

  auto rest = std::span<const std::string>(argv).subspan(i + words);
  if (!spec && is_group(argv[i])) {
    if (cli::wants_help(rest)) {
      print_group_help(argv[i]);
      return 0;
    }
    throw UsageError("'" + argv[i] + "' needs a subcommand (see 'ctxdb " + argv[i] + " --help')");
  }
  if (!spec) throw UsageError("unknown command '" + argv[i] + "'");
  if (cli::wants_help(rest)) {
    print_command_help(*spec);
    return 0;
  }

  cli::Args args = cli::parse_args(*spec, rest);
  if (!args.db) args.db = globals->db;
  cli::set_wide(globals->wide || args.has("--wide"));
  try {
    return spec->run(args);
  } catch (const UsageError &e) {
    if (e.spec()) throw;
    throw UsageError(e.what(), spec); // name the command in the message
  }
}

// A library built for another ABI would misread every call; refuse it.
void check_library_abi() {
  if (ctxdb_abi_version() != CTXDB_ABI_VERSION)
    throw ctxdb::Error(CTXDB_MISUSE, "libctxdb has ABI " + std::to_string(ctxdb_abi_version()) +
                                         ", this ctxdb was built for ABI " +
                                         std::to_string(CTXDB_ABI_VERSION));
}

} // namespace

int main(int argc, char **argv) {
  int status = 0;
  try {
    check_library_abi();
    status = run(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const UsageError &e) {
    std::fflush(stdout);
    std::fprintf(stderr, "ctxdb: %s (usage)\n", e.what());
    if (e.spec()) print_usage_line(stderr, *e.spec());
    return 2;
  } catch (const ctxdb::Error &e) {
    std::fflush(stdout);
    std::fprintf(stderr, "ctxdb: %s (%s)\n", e.what(), e.name());
    return 1;
  } catch (const std::exception &e) {
    std::fflush(stdout);
    std::fprintf(stderr, "ctxdb: %s\n", e.what());
    return 1;
  }
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    std::fprintf(stderr, "ctxdb: cannot write to stdout (%s)\n", ctxdb_errstr(CTXDB_IO));
    return 1;
  }
  return status;
}
