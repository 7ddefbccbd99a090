// args.cpp — turns argv into Args, checked against a CommandSpec.
#include "args.hpp"

#include <algorithm>

namespace cli {
namespace {

bool contains(const std::vector<std::string_view> &flags, std::string_view flag) {
  return std::find(flags.begin(), flags.end(), flag) != flags.end();
}

// "--from=3" is the same as "--from 3"; split the first form.
std::pair<std::string, std::optional<std::string>> split_inline_value(const std::string &token) {
  auto eq = token.find('=');
  if (eq == std::string::npos) return {token, std::nullopt};
  return {token.substr(0, eq), token.substr(eq + 1)};
}

void check_arg_count(const CommandSpec &spec, const Args &args) {
  std::size_t n = args.positional.size();
  if (n < spec.min_args) throw UsageError("missing argument", &spec);
  if (n > spec.max_args)
    throw UsageError("unexpected argument '" + args.positional[spec.max_args] + "'", &spec);
}

} // namespace

std::optional<std::string> Args::value(std::string_view flag) const {
  auto it = values.find(flag);
  if (it == values.end()) return std::nullopt;
  return it->second;
}

bool wants_help(std::span<const std::string> argv) {
  for (const auto &token : argv) {
    if (token == "--") return false;
    if (token == "--help" || token == "-h") return true;
  }
  return false;
}

Args parse_args(const CommandSpec &spec, std::span<const std::string> argv) {
  Args args;
  bool flags_done = false;
  for (std::size_t i = 0; i < argv.size(); ++i) {
    const std::string &token = argv[i];
    // "-" alone is an argument (stdin), not a flag.
    bool is_flag = !flags_done && token.size() > 1 && token[0] == '-';
    if (!is_flag) {
      args.positional.push_back(token);
      continue;
    }
    if (token == "--") {
      flags_done = true;
      continue;
    }
    auto [flag, inline_value] = split_inline_value(token);
    if (flag == "--wide" && !inline_value) { // a global switch, as --db is a global flag
      args.switches.insert(flag);
      continue;
    }
    bool takes_value = flag == "--db" || contains(spec.value_flags, flag);
    if (!takes_value && !contains(spec.switch_flags, flag))
      throw UsageError("unknown flag '" + flag + "'", &spec);
    if (!takes_value) {
      if (inline_value) throw UsageError(flag + " takes no value", &spec);
      args.switches.insert(flag);
      continue;
    }
    if (!inline_value) {
      if (i + 1 == argv.size()) throw UsageError(flag + " needs a value", &spec);
      inline_value = argv[++i];
    }
    if (flag == "--db")
      args.db = *inline_value;
    else {
      args.values[flag] = *inline_value;
      args.ordered_values.emplace_back(flag, *inline_value);
    }
  }
  check_arg_count(spec, args);
  return args;
}

} // namespace cli
