// context_command.cpp — `ctxdb context`: what the context compiler would
// give a model now, shown like an agent's /context: the budget per kind,
// every segment with why it is there, what was left out and why, and what
// was redacted. With --json, the bundle in the chosen format.
#include "commands.hpp"

#include "command_io.hpp"
#include "format.hpp"
#include "json.hpp"

#include <ctxdb/ctxdb.hpp>

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

namespace cli {
namespace {

constexpr std::size_t kBarWidth = 24;

// The value of a flag that has the API's name as a second name
// (--max-tokens for --budget): either, not both.
std::optional<std::string> either(const Args &args, const char *flag, const char *api_name) {
  auto a = args.value(flag), b = args.value(api_name);
  if (a && b) throw UsageError(std::string(flag) + " and " + api_name + " are the same option");
  return a ? a : b;
}

// The compile request the flags describe; format is the bundle's format.
std::string context_request(const Args &args, std::string_view format) {
  auto budget = either(args, "--budget", "--max-tokens");
  if (!budget) throw UsageError("--budget is required (the model's context window, in tokens)");
  if (args.value("--branch") && args.value("--leaf"))
    throw UsageError("--branch and --leaf exclude each other");
  std::string r = "{\"session_id\":" + json_quote(args.positional.at(0)) + ",\"max_tokens\":" +
                  std::to_string(non_negative("--budget", *budget, "a number of tokens"));
  if (auto reserve = either(args, "--reserve", "--reserved-output-tokens"))
    r += ",\"reserved_output_tokens\":" +
         std::to_string(non_negative("--reserve", *reserve, "a number of tokens"));
  if (auto branch = args.value("--branch")) r += ",\"branch_id\":" + json_quote(*branch);
  if (auto leaf = args.value("--leaf")) r += ",\"leaf_event_id\":" + json_quote(*leaf);
  if (auto request = args.value("--request")) r += ",\"request\":" + json_quote(*request);
  if (auto model = args.value("--model")) r += ",\"model\":" + json_quote(*model);
  std::string instructions;
  for (const auto &[flag, value] : args.ordered_values) {
    if (flag != "--system" && flag != "--system-file") continue;
    std::string text = flag == "--system" ? value : read_input(value);
    instructions += std::string(instructions.empty() ? "" : ",") +
                    "{\"kind\":\"system\",\"text\":" + json_quote(text) + "}";
  }
  if (!instructions.empty()) r += ",\"instructions\":[" + instructions + "]";
  r += ",\"format\":" + json_quote(format);
  if (args.has("--record")) r += ",\"record\":true";
  if (args.has("--continue")) r += ",\"continuation\":true";
  return r + "}";
}

// 1234 -> "1.2k", 2500000 -> "2.5M": the figures of the bars.
std::string short_count(int64_t n) {
  char buf[32];
  if (n < 1000)
    std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(n));
  else if (n < 1000000)
    std::snprintf(buf, sizeof buf, "%.1fk", double(n) / 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.1fM", double(n) / 1e6);
  return buf;
}

// "kind      ██░░░░  1.2k   3.1%": tokens against the available budget.
void print_bar(std::string_view label, int64_t tokens, int64_t available) {
  double share = available > 0 ? double(tokens) / double(available) : 0;
  auto filled = static_cast<std::size_t>(share * kBarWidth + 0.5);
  if (tokens > 0 && filled == 0) filled = 1; // present, however small
  if (filled > kBarWidth) filled = kBarWidth;
  std::string bar;
  for (std::size_t i = 0; i < kBarWidth; ++i) bar += i < filled ? "█" : "░";
  std::printf("  %s %s %6s %5.1f%%\n", pad_right(one_line(label), 15).c_str(), bar.c_str(),
              short_count(tokens).c_str(), share * 100);
}

// "event:evt_1, state:plan": where a segment came from.
std::string sources_of(element item) {
  std::string out;
  simdjson::dom::array sources;
  if (item["sources"].get_array().get(sources) != simdjson::SUCCESS) return "-";
  for (element s : sources)
    out += (out.empty() ? "" : ", ") + one_line(get_string(s, "type")) + ":" +
           one_line(get_string(s, "id"));
  return out.empty() ? "-" : out;
}

simdjson::dom::array array_field(element obj, const char *key) {
  simdjson::dom::array a;
  if (obj[key].get_array().get(a) != simdjson::SUCCESS)
    throw ctxdb::Error(CTXDB_INTERNAL, std::string("the bundle lacks '") + key + "'");
  return a;
}

void print_bundle(element b) {
  element budget;
  if (b["budget"].get(budget) != simdjson::SUCCESS)
    throw ctxdb::Error(CTXDB_INTERNAL, "the bundle lacks 'budget'");
  int64_t available = get_int(budget, "available"), used = get_int(budget, "used");
  std::string_view leaf = get_string(b, "leaf_event_id", "(empty branch)");
  std::printf("context of %s, branch %s, leaf %s\n", one_line(get_string(b, "session_id")).c_str(),
              one_line(get_string(b, "branch_id")).c_str(), one_line(leaf).c_str());
  std::printf("counter %s; budget %lld of %lld tokens (%lld reserved for the answer); "
              "used %lld, free %lld\n\n",
              one_line(get_string(b, "token_counter")).c_str(), static_cast<long long>(available),
              static_cast<long long>(get_int(budget, "max_tokens")),
              static_cast<long long>(get_int(budget, "reserved_output_tokens")),
              static_cast<long long>(used), static_cast<long long>(get_int(budget, "free")));

  simdjson::dom::object by_kind;
  if (b["tokens_by_kind"].get_object().get(by_kind) == simdjson::SUCCESS)
    for (auto field : by_kind) {
      int64_t n = 0;
      if (field.value.get_int64().get(n) == simdjson::SUCCESS) print_bar(field.key, n, available);
    }
  print_bar("free", get_int(budget, "free"), available);
  if (int64_t stable = get_int(b, "stable_prefix_tokens"); stable > 0)
    std::printf("  (the first %lld tokens are the same as the last recorded bundle's)\n",
                static_cast<long long>(stable));

  simdjson::dom::array segments = array_field(b, "segments");
  std::printf("\nsegments (%zu, in prompt order):\n", segments.size());
  for (element s : segments) {
    std::string head = "  P" + std::to_string(get_int(s, "priority")) + "  " +
                       pad_right(one_line(get_string(s, "kind")), 14) + " " +
                       pad_left(std::to_string(get_int(s, "tokens")), 6) + " tok  " +
                       one_line(get_string(s, "id"));
    std::printf("%s\n", truncate_cols(head, line_width()).c_str());
    std::printf("%s\n", truncate_cols("      " + one_line(get_string(s, "reason")) + " [" +
                                          sources_of(s) + "]",
                                      line_width())
                            .c_str());
  }

  simdjson::dom::array excluded = array_field(b, "excluded");
  std::printf("\nexcluded (%zu):\n", excluded.size());
  for (element x : excluded) {
    int64_t tokens = get_int(x, "tokens", -1);
    std::string line = "  P" + std::to_string(get_int(x, "priority")) + "  " +
                       pad_right(one_line(get_string(x, "kind")), 14) + " " +
                       pad_left(tokens < 0 ? "-" : std::to_string(tokens), 6) + " tok  " +
                       one_line(get_string(x, "id")) + ": " + one_line(get_string(x, "reason"));
    std::printf("%s\n", truncate_cols(line, line_width()).c_str());
  }
  if (excluded.size() == 0) std::printf("  nothing\n");

  simdjson::dom::array redactions = array_field(b, "redactions");
  std::printf("\nredactions (%zu):\n", redactions.size());
  for (element r : redactions)
    std::printf("%s\n", truncate_cols("  " + one_line(get_string(r, "rule")) + " x" +
                                          std::to_string(get_int(r, "count")) + " in " +
                                          one_line(get_string(r, "segment_id")),
                                      line_width())
                            .c_str());
  if (redactions.size() == 0) std::printf("  none\n");
}

} // namespace

int cmd_context(const Args &args) {
  std::string format = args.value("--format").value_or("canonical");
  bool json = args.has("--json");
  if (args.value("--format") && !json)
    throw UsageError("--format chooses what --json prints; the view shows the canonical bundle");
  // The readable view is drawn from the canonical bundle; --format decides
  // what --json prints.
  std::string request = context_request(args, json ? format : "canonical");
  auto db = open_db(args, args.has("--record") ? Access::existing : Access::read_only);
  std::string bundle = db.compile(request);
  if (json) {
    print_row(bundle);
    return 0;
  }
  JsonDoc doc(bundle);
  print_bundle(doc.root());
  return 0;
}

} // namespace cli
