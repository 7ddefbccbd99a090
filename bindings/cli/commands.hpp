// commands.hpp — the table of ctxdb's commands.
#ifndef CTXDB_CLI_COMMANDS_HPP
#define CTXDB_CLI_COMMANDS_HPP

#include "args.hpp"

#include <span>

namespace cli {

// Every command, in the order `ctxdb --help` lists them.
std::span<const CommandSpec> commands();

} // namespace cli

#endif // CTXDB_CLI_COMMANDS_HPP
