// commands.hpp — the table of ctxdb's commands.
#ifndef CTXDB_CLI_COMMANDS_HPP
#define CTXDB_CLI_COMMANDS_HPP

#include "args.hpp"

#include <span>

namespace cli {

// Every command, in the order `ctxdb --help` lists them.
std::span<const CommandSpec> commands();

// The commands that live in files of their own.
int cmd_fork(const Args &args); // tree_commands.cpp
int cmd_path(const Args &args);
int cmd_tree(const Args &args);
int cmd_children(const Args &args);
int cmd_messages(const Args &args); // view_commands.cpp
int cmd_tool_calls(const Args &args);
int cmd_files(const Args &args);
int cmd_state(const Args &args);
int cmd_stats(const Args &args);
int cmd_artifact_ls(const Args &args); // artifact_commands.cpp
int cmd_artifact_cat(const Args &args);
int cmd_artifact_show(const Args &args);
int cmd_artifact_lines(const Args &args);
int cmd_artifact_head(const Args &args);
int cmd_artifact_tail(const Args &args);
int cmd_artifact_grep(const Args &args);
int cmd_artifact_put(const Args &args);
int cmd_artifact_export(const Args &args);
int cmd_context(const Args &args);    // context_command.cpp
int cmd_search(const Args &args);     // search_commands.cpp
int cmd_memory_put(const Args &args); // memory_commands.cpp
int cmd_memory_update(const Args &args);
int cmd_memory_ls(const Args &args);
int cmd_memory_show(const Args &args);
int cmd_memory_search(const Args &args);
int cmd_memory_forget(const Args &args);
int cmd_memory_promote(const Args &args);
int cmd_tokens(const Args &args);  // token_commands.cpp
int cmd_compact(const Args &args); // compact_commands.cpp
int cmd_compactions(const Args &args);
int cmd_branch_summary(const Args &args);

} // namespace cli

#endif // CTXDB_CLI_COMMANDS_HPP
