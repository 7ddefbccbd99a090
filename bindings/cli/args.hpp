// args.hpp — command-line parsing for the ctxdb inspector.
//
// Each command is described by a CommandSpec (its flags, its arguments, its
// help text and the function that runs it); one table drives parsing, help
// and dispatch, so a command's flags and its --help cannot drift apart.
#ifndef CTXDB_CLI_ARGS_HPP
#define CTXDB_CLI_ARGS_HPP

#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace cli {

struct CommandSpec;

// A mistake in how the command was called: exit status 2, with the usage
// line of the command it concerns (when there is one).
class UsageError : public std::runtime_error {
public:
  explicit UsageError(const std::string &message, const CommandSpec *spec = nullptr)
      : std::runtime_error(message), spec_(spec) {}
  const CommandSpec *spec() const noexcept { return spec_; }

private:
  const CommandSpec *spec_;
};

// What one invocation said: positional arguments and flags, with --db
// (accepted before or after the command name) kept apart.
struct Args {
  std::vector<std::string> positional;
  std::map<std::string, std::string, std::less<>> values; // --flag VALUE (the last one)
  // Every value of each flag, in order, for flags that may repeat.
  std::map<std::string, std::vector<std::string>, std::less<>> all_values;
  std::set<std::string, std::less<>> switches; // --flag
  std::optional<std::string> db;

  bool has(std::string_view flag) const { return switches.contains(flag); }
  std::optional<std::string> value(std::string_view flag) const;
};

using Handler = int (*)(const Args &);

struct CommandSpec {
  std::string_view name;     // "log", or "session new" for a group member
  std::string_view synopsis; // what follows the name in the usage line
  std::string_view summary;  // one line, for `ctxdb --help`
  std::string_view details;  // the body of `ctxdb NAME --help`
  std::vector<std::string_view> value_flags;
  std::vector<std::string_view> switch_flags;
  std::size_t min_args;
  std::size_t max_args;
  Handler run;
};

// True when the arguments ask for help ("--help" or "-h" before any "--").
bool wants_help(std::span<const std::string> argv);

// Parses the arguments that follow the command name. Throws UsageError for
// an unknown flag, a flag without its value, or a wrong argument count.
Args parse_args(const CommandSpec &spec, std::span<const std::string> argv);

} // namespace cli

#endif // CTXDB_CLI_ARGS_HPP
