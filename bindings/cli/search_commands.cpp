// search_commands.cpp — `ctxdb search`: session search (ctxdb_search).
#include "commands.hpp"

#include "command_io.hpp"
#include "format.hpp"
#include "json.hpp"

#include <ctxdb/ctxdb.hpp>

#include <cstdio>
#include <string>

namespace cli {

int cmd_search(const Args &args) {
  std::string options = "{";
  auto add = [&](const char *key, const std::string &json) {
    options += (options.size() > 1 ? ",\"" : "\"") + std::string(key) + "\":" + json;
  };
  for (auto [flag, key] : {std::pair{"--session", "session_id"}, std::pair{"--branch", "branch_id"},
                           std::pair{"--role", "role"}, std::pair{"--type", "type"}})
    if (auto v = args.value(flag)) add(key, json_quote(*v));
  for (auto [flag, key, what] :
       {std::tuple{"--since", "since", "a time (ms)"},
        std::tuple{"--until", "until", "a time (ms)"}, std::tuple{"--limit", "limit", "a count"}})
    if (auto v = args.value(flag)) add(key, std::to_string(non_negative(flag, *v, what)));
  if (args.has("--sensitive")) add("allow_sensitive", "true");
  options += "}";
  // Writable: a search first indexes what appends left unindexed, for every
  // later search too; a read-only handle would index it again, privately,
  // on every call (search_index.hpp).
  auto db = open_db(args, Access::existing);
  std::string result = db.search(args.positional.at(0), options);
  if (args.has("--json")) {
    print_row(result);
    return 0;
  }
  JsonDoc doc(result);
  simdjson::dom::array hits = array_of(doc.root()["hits"].value(), "hits");
  for (element h : hits)
    std::printf("%s #%lld %s  %s\n", one_line(get_string(h, "session_id")).c_str(),
                static_cast<long long>(get_int(h, "seq")),
                std::string(get_string(h, "role")).c_str(),
                one_line(get_string(h, "snippet")).c_str());
  if (hits.size() == 0) std::printf("no hits\n");
  return 0;
}

} // namespace cli
