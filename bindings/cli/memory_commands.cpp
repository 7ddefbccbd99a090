// memory_commands.cpp — memories from the shell: put, update, list, show,
// search (as retrieval would), forget (tombstone or purge) and promote.
#include "commands.hpp"

#include "command_io.hpp"
#include "format.hpp"
#include "json.hpp"

#include <ctxdb/ctxdb.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <limits>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace cli {
namespace {

int64_t now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

// A duration: 500ms, 90s, 30m, 12h, 7d, or plain milliseconds.
int64_t parse_duration(const std::string &flag, const std::string &text) {
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  std::string unit = text.substr(digits);
  static const std::pair<const char *, int64_t> kUnits[] = {
      {"", 1}, {"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000}, {"d", 86400000}};
  for (auto [name, ms] : kUnits) {
    if (digits == 0 || digits > 12 || unit != name) continue;
    int64_t out;
    if (__builtin_mul_overflow(std::stoll(text.substr(0, digits)), ms, &out))
      throw UsageError(flag + " is longer than ctxdb can store (got '" + text + "')");
    return out;
  }
  throw UsageError(flag + " takes a duration like 90s, 30m, 12h or 7d (got '" + text + "')");
}

// The n decimal digits of s at i, or -1.
int digits_at(std::string_view s, size_t i, size_t n) {
  if (i + n > s.size()) return -1;
  int v = 0;
  for (size_t k = i; k < i + n; ++k) {
    if (s[k] < '0' || s[k] > '9') return -1;
    v = v * 10 + (s[k] - '0');
  }
  return v;
}

// A time: ms since the epoch, or YYYY-MM-DD[THH:MM[:SS]][Z] (UTC), exactly:
// nothing after it, and a date and time that exist (timegm would take
// Feb 30 as Mar 2).
int64_t parse_time(const std::string &flag, const std::string &text) {
  if (!text.empty() && text.find_first_not_of("0123456789") == std::string::npos &&
      text.size() <= 15)
    return std::stoll(text);
  auto bad = [&] {
    return UsageError(flag + " takes ms since the epoch or a UTC time YYYY-MM-DD[THH:MM[:SS]][Z] " +
                      "that exists (got '" + text + "')");
  };
  std::string_view s = text;
  std::tm tm{};
  tm.tm_year = digits_at(s, 0, 4);
  tm.tm_mon = digits_at(s, 5, 2);
  tm.tm_mday = digits_at(s, 8, 2);
  if (tm.tm_year < 0 || tm.tm_mon < 0 || tm.tm_mday < 0 || s[4] != '-' || s[7] != '-') throw bad();
  size_t end = 10;
  if (end < s.size() && s[end] == 'T') {
    tm.tm_hour = digits_at(s, end + 1, 2);
    tm.tm_min = digits_at(s, end + 4, 2);
    if (tm.tm_hour < 0 || tm.tm_min < 0 || s[end + 3] != ':') throw bad();
    end += 6;
    if (end < s.size() && s[end] == ':') {
      if ((tm.tm_sec = digits_at(s, end + 1, 2)) < 0) throw bad();
      end += 3;
    }
  }
  if (s.substr(end) != "" && s.substr(end) != "Z") throw bad();
  std::tm want = tm;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  time_t t = timegm(&tm);
  std::tm back{};
  gmtime_r(&t, &back);
  if (back.tm_year + 1900 != want.tm_year || back.tm_mon + 1 != want.tm_mon ||
      back.tm_mday != want.tm_mday || back.tm_hour != want.tm_hour || back.tm_min != want.tm_min ||
      back.tm_sec != want.tm_sec)
    throw bad();
  return int64_t(t) * 1000;
}

// Every value of a repeatable flag, commas splitting values too.
std::vector<std::string> list_flag(const Args &args, const char *flag) {
  std::vector<std::string> out;
  for (const auto &[name, v] : args.ordered_values) {
    if (name != flag) continue;
    size_t start = 0;
    for (size_t comma; (comma = v.find(',', start)) != std::string::npos; start = comma + 1)
      if (comma > start) out.push_back(v.substr(start, comma - start));
    if (start < v.size()) out.push_back(v.substr(start));
  }
  return out;
}

// The JSON fields the put and update flags give (without braces).
std::string memory_fields(const Args &args) {
  std::string j;
  auto add = [&](const char *key, const std::string &json) {
    j += std::string(j.empty() ? "" : ",") + "\"" + key + "\":" + json;
  };
  auto add_list = [&](const char *key, const char *flag) {
    std::vector<std::string> items = list_flag(args, flag);
    if (items.empty()) return;
    std::string a = "[";
    for (const std::string &i : items) a += (a.size() > 1 ? "," : "") + json_quote(i);
    add(key, a + "]");
  };
  if (auto v = args.value("--kind")) add("kind", json_quote(*v));
  add_list("source_refs", "--source");
  add_list("keywords", "--keyword");
  add_list("readers", "--reader");
  if (auto v = args.value("--confidence")) {
    char *end = nullptr;
    double d = std::strtod(v->c_str(), &end);
    if (v->empty() || *end || !std::isfinite(d))
      throw UsageError("--confidence takes a number from 0 to 1 (got '" + *v + "')");
    char number[32]; // every digit: the engine checks the range, of the value given
    std::snprintf(number, sizeof number, "%.17g", d);
    add("confidence", number);
  }
  if (auto v = args.value("--priority"))
    add("priority", std::to_string(non_negative("--priority", *v, "a priority")));
  int expiry = 0;
  if (auto v = args.value("--ttl")) {
    ++expiry;
    add("ttl_ms", std::to_string(parse_duration("--ttl", *v)));
  }
  if (auto v = args.value("--expires")) {
    ++expiry;
    add("expires_at", std::to_string(parse_time("--expires", *v)));
  }
  if (auto v = args.value("--update-policy")) {
    ++expiry;
    add("update_policy", json_quote(*v));
  }
  if (expiry > 1) throw UsageError("give one of --ttl, --expires and --update-policy");
  if (args.has("--sensitive")) add("sensitive", "true");
  return j;
}

void print_memory(const std::string &memory, const Args &args) {
  if (args.has("--json")) {
    print_row(memory);
    return;
  }
  JsonDoc doc(memory);
  std::printf("%s\n", std::string(get_string(doc.root(), "memory_id")).c_str());
}

void print_memories(const std::string &list) {
  JsonDoc doc(list);
  std::vector<std::vector<std::string>> rows;
  for (element m : array_of(doc.root(), "memories")) {
    std::string scope(get_string(m, "scope"));
    if (!get_string(m, "scope_id").empty()) scope += ":" + std::string(get_string(m, "scope_id"));
    element content = m["content"].value();
    rows.push_back({std::string(get_string(m, "memory_id")),
                    "v" + std::to_string(get_int(m, "version")), scope,
                    std::string(get_string(m, "kind")), std::string(get_string(m, "status")),
                    content.is_null() ? "(forgotten)"
                                      : truncate_cols(one_line(content.get_string().value()), 60)});
  }
  if (rows.empty())
    std::printf("no memories\n");
  else
    print_table(rows);
}

} // namespace

int cmd_memory_put(const Args &args) {
  auto scope = args.value("--scope");
  if (!scope)
    throw UsageError("--scope is required (global, user, org, workspace, project, "
                     "session)");
  std::vector<std::string> sources = list_flag(args, "--source");
  if (sources.empty())
    throw UsageError("--source is required: the event, message or artifact "
                     "the memory comes from");
  std::string json = "{\"scope\":" + json_quote(*scope);
  if (auto v = args.value("--scope-id")) json += ",\"scope_id\":" + json_quote(*v);
  if (auto v = args.value("--id")) json += ",\"memory_id\":" + json_quote(*v);
  json += ",\"content\":" + json_quote(args.positional.at(0)) + "," + memory_fields(args) + "}";
  auto db = open_db(args, Access::existing);
  std::string session;
  if (auto s = args.value("--session")) {
    session = *s;
  } else {
    // The session of the first source that is an event.
    for (const std::string &ref : sources) {
      try {
        JsonDoc e(db.event_get(ref));
        session = std::string(get_string(e.root(), "session_id"));
        break;
      } catch (const ctxdb::Error &) {
      }
    }
    if (session.empty()) throw UsageError("--session is required when no --source is an event");
  }
  print_memory(db.memory_write(session, json), args);
  return 0;
}

int cmd_memory_update(const Args &args) {
  if (list_flag(args, "--source").empty())
    throw UsageError("--source is required: the event, message or artifact "
                     "the new version comes from");
  std::string json = "{" + memory_fields(args); // source_refs first: never empty
  if (args.positional.size() > 1) json += ",\"content\":" + json_quote(args.positional[1]);
  if (auto v = args.value("--session")) json += ",\"session_id\":" + json_quote(*v);
  json += "}";
  auto db = open_db(args, Access::existing);
  print_memory(db.memory_update(args.positional.at(0), json), args);
  return 0;
}

int cmd_memory_ls(const Args &args) {
  std::string q = "{";
  auto add = [&](const std::string &field) { q += (q.size() > 1 ? "," : "") + field; };
  if (auto v = args.value("--scope")) add("\"scope\":" + json_quote(*v));
  if (auto v = args.value("--scope-id")) add("\"scope_id\":" + json_quote(*v));
  if (auto v = args.value("--kind")) add("\"kind\":" + json_quote(*v));
  if (auto v = args.value("--as-of")) add("\"as_of\":" + std::to_string(parse_time("--as-of", *v)));
  if (args.has("--all-versions")) add("\"all_versions\":true");
  // Every memory unless --limit says otherwise (the library's default is 1000).
  int64_t limit = std::numeric_limits<int64_t>::max();
  if (auto v = args.value("--limit")) limit = non_negative("--limit", *v, "a count");
  add("\"limit\":" + std::to_string(limit));
  q += "}";
  auto db = open_db(args, Access::read_only);
  std::string list = db.memory_list(q);
  if (args.has("--json"))
    print_row(list);
  else
    print_memories(list);
  return 0;
}

int cmd_memory_show(const Args &args) {
  auto db = open_db(args, Access::read_only);
  print_row(db.memory_get(args.positional.at(0)));
  return 0;
}

int cmd_memory_search(const Args &args) {
  auto db = open_db(args, Access::read_only);
  std::set<std::pair<std::string, std::string>> scopes;
  for (const std::string &s : list_flag(args, "--scope")) {
    size_t colon = s.find(':');
    scopes.insert(colon == std::string::npos ? std::pair{s, std::string()}
                                             : std::pair{s.substr(0, colon), s.substr(colon + 1)});
  }
  if (scopes.empty()) { // every scope that has memories
    JsonDoc all(db.memory_list(R"({"limit":9223372036854775807})"));
    for (element m : array_of(all.root(), "memories"))
      scopes.insert({std::string(get_string(m, "scope")), std::string(get_string(m, "scope_id"))});
  }
  std::string q = "{\"query\":" + json_quote(args.positional.at(0)) + ",\"scopes\":[";
  bool first = true;
  for (const auto &[scope, id] : scopes) {
    q += std::string(first ? "" : ",") + "{\"scope\":" + json_quote(scope);
    if (!id.empty()) q += ",\"id\":" + json_quote(id);
    q += "}";
    first = false;
  }
  q += "],\"record_usage\":false";
  if (auto v = args.value("--agent")) q += ",\"agent\":" + json_quote(*v);
  if (auto v = args.value("--budget"))
    q += ",\"budget\":" + std::to_string(non_negative("--budget", *v, "a token count"));
  if (auto v = args.value("--limit"))
    q += ",\"limit\":" + std::to_string(non_negative("--limit", *v, "a count"));
  q += ",\"now\":" +
       std::to_string(args.value("--now") ? parse_time("--now", *args.value("--now")) : now_ms());
  if (args.has("--sensitive")) q += ",\"allow_sensitive\":true";
  if (args.has("--all") && args.has("--fts")) throw UsageError("give one of --all and --fts");
  if (args.has("--fts")) q += ",\"match\":\"fts\"";
  if (args.has("--all")) q += ",\"match\":\"all\"";
  q += "}";
  std::string r = db.memory_retrieve(q);
  if (args.has("--json")) {
    print_row(r);
    return 0;
  }
  JsonDoc doc(r);
  std::vector<std::vector<std::string>> rows;
  for (element m : array_of(doc.root()["memories"].value(), "memories")) {
    char score[16];
    double s = 0;
    if (m["score"].get(s) != simdjson::SUCCESS) s = 0;
    std::snprintf(score, sizeof score, "%.3f", s);
    rows.push_back({std::string(get_string(m, "memory_id")), score,
                    std::to_string(get_int(m, "tokens")) + " tok",
                    std::string(get_string(m, "kind")),
                    truncate_cols(one_line(get_string(m, "content")), 60)});
  }
  if (rows.empty())
    std::printf("no memories found\n");
  else
    print_table(rows);
  return 0;
}

int cmd_memory_forget(const Args &args) {
  std::string o =
      std::string("{\"mode\":\"") + (args.has("--purge") ? "purge" : "tombstone") + "\"";
  if (auto v = args.value("--reason")) o += ",\"reason\":" + json_quote(*v);
  o += "}";
  auto db = open_db(args, Access::existing);
  JsonDoc r(db.memory_forget(args.positional.at(0), o));
  std::printf("%s: %s by %s\n", std::string(get_string(r.root(), "memory_id")).c_str(),
              args.has("--purge") ? "purged" : "forgotten",
              std::string(get_string(r.root(), "event_id")).c_str());
  return 0;
}

int cmd_memory_promote(const Args &args) {
  std::string candidates = read_input(args.positional.at(1));
  auto db = open_db(args, Access::existing);
  std::string written = db.memory_promote(args.positional.at(0), candidates);
  if (args.has("--json")) {
    print_row(written);
    return 0;
  }
  JsonDoc doc(written);
  for (element m : array_of(doc.root(), "memories"))
    std::printf("%s\n", std::string(get_string(m, "memory_id")).c_str());
  return 0;
}

} // namespace cli
