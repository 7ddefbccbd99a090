// tree_commands.cpp — the session tree: fork, path, tree, children.
#include "commands.hpp"

#include "command_io.hpp"
#include "format.hpp"
#include "json.hpp"

#include <ctxdb/ctxdb.hpp>

#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace cli {
namespace {
// One branch of `ctxdb tree`: id, kind, name, fork point, size and leaf.
std::string describe_branch(element b) {
  std::string_view kind = get_string(b, "kind"), name = get_string(b, "name");
  std::string out = std::string(get_string(b, "id")) + "  " + std::string(kind);
  if (!name.empty() && !(kind == "main" && name == "main")) out += " \"" + one_line(name) + "\"";
  if (auto fork = get_string(b, "fork_event_id"); !fork.empty())
    out += "  from " + std::string(fork) + " (seq " + std::to_string(get_int(b, "fork_seq")) + ")";
  int64_t n = get_int(b, "event_count");
  out += "  " + std::to_string(n) + (n == 1 ? " event" : " events");
  return out + "  leaf " + std::string(get_string(b, "leaf_event_id")) + " (seq " +
         std::to_string(get_int(b, "leaf_seq")) + ")";
}

using BranchKids = std::map<std::string_view, std::vector<element>>;

// Prints b, then its forks indented under it with box-drawing lines.
void draw_branch(element b, const BranchKids &kids, const std::string &indent,
                 std::string_view elbow) {
  std::printf("%s%s%s\n", indent.c_str(), std::string(elbow).c_str(), describe_branch(b).c_str());
  auto it = kids.find(get_string(b, "id"));
  if (it == kids.end()) return;
  std::string next = indent + (elbow.empty() ? "" : elbow == "└─ " ? "   " : "│  ");
  for (std::size_t i = 0; i < it->second.size(); ++i)
    draw_branch(it->second[i], kids, next, i + 1 == it->second.size() ? "└─ " : "├─ ");
}

} // namespace

int cmd_fork(const Args &args) {
  std::string spec = "{\"event_id\":" + json_quote(args.positional.at(1));
  for (const char *flag : {"--kind", "--name", "--id"})
    if (auto v = args.value(flag)) spec += "," + json_quote(flag + 2) + ":" + json_quote(*v);
  spec += "}";
  auto db = open_db(args, Access::existing);
  print_row(db.branch_fork(args.positional.at(0), spec));
  return 0;
}

int cmd_path(const Args &args) {
  auto db = open_db(args, Access::read_only);
  std::optional<std::string> branch = args.value("--branch");
  auto it = db.branch_path(args.positional.at(0), branch);
  print_events(db, args.positional.at(0), it, args);
  return 0;
}

int cmd_tree(const Args &args) {
  auto db = open_db(args, Access::read_only);
  std::string text = db.branch_list(args.positional.at(0));
  if (args.has("--json")) { // the branches, as ctxdb_branch_list gives them
    print_row(text);
    return 0;
  }
  JsonDoc list(text);
  simdjson::dom::array branches = array_of(list.root(), "branch_list");
  std::vector<element> roots;
  BranchKids kids; // by parent branch id, in the order the branches were opened
  for (element b : branches) {
    std::string_view parent = get_string(b, "parent_branch_id");
    if (parent.empty())
      roots.push_back(b);
    else
      kids[parent].push_back(b);
  }
  for (element root : roots) draw_branch(root, kids, "", "");
  return 0;
}

int cmd_children(const Args &args) {
  auto db = open_db(args, Access::read_only);
  std::string text = db.event_children(args.positional.at(0));
  if (args.has("--json")) {
    print_row(text);
    return 0;
  }
  JsonDoc doc(text);
  simdjson::dom::array events, sessions;
  if (doc.root()["events"].get_array().get(events) != simdjson::SUCCESS ||
      doc.root()["sessions"].get_array().get(sessions) != simdjson::SUCCESS)
    throw ctxdb::Error(CTXDB_INTERNAL, "event_children did not return its arrays");
  std::string last_date;
  for (element e : events) print_event_line(to_json(e), last_date);
  for (element s : sessions)
    std::printf("session %s  agent %s\n", std::string(get_string(s, "id")).c_str(),
                one_line(get_string(s, "agent_id")).c_str());
  if (events.size() == 0 && sessions.size() == 0) std::printf("no children\n");
  return 0;
}

} // namespace cli
