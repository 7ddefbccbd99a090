// compact_commands.cpp — compaction (DESIGN §6): compact a branch, or show
// its plan (--dry-run), and list the compactions on a branch's path.
#include "commands.hpp"

#include "command_io.hpp"
#include "json.hpp"

#include <ctxdb/ctxdb.hpp>

#include <cstdio>
#include <string>

namespace cli {
namespace {

std::string policy_of(const Args &args) {
  std::string policy = "{";
  auto add = [&](const std::string &field) { policy += (policy.size() > 1 ? "," : "") + field; };
  if (auto b = args.value("--branch")) add("\"branch_id\":" + json_quote(*b));
  if (auto n = args.value("--keep-recent"))
    add("\"keep_recent_tokens\":" +
        std::to_string(non_negative("--keep-recent", *n, "a number of tokens")));
  if (auto n = args.value("--transcript-max"))
    add("\"transcript_max_tokens\":" +
        std::to_string(non_negative("--transcript-max", *n, "a number of tokens")));
  return policy + "}";
}

void print_range(element range) {
  std::printf("range:      #%lld..#%lld (%lld events, %lld messages)\n",
              (long long)get_int(range, "from_seq"), (long long)get_int(range, "to_seq"),
              (long long)get_int(range, "events"), (long long)get_int(range, "messages"));
}

void print_list(element root, const char *key, const char *title, const char *field) {
  simdjson::dom::array items;
  if (root[key].get(items) || items.size() == 0) return;
  std::printf("%s:\n", title);
  for (element item : items) std::printf("  %s\n", std::string(get_string(item, field)).c_str());
}

void print_plan(element plan) {
  std::printf("status:     %s\n", std::string(get_string(plan, "status")).c_str());
  if (auto reason = get_string(plan, "reason"); !reason.empty())
    std::printf("reason:     %s\n", std::string(reason).c_str());
  element cut = plan["cut"].value();
  std::printf("cut:        %s at %s (#%lld)\n", std::string(get_string(cut, "kind")).c_str(),
              std::string(get_string(cut, "first_kept_event_id", "(nothing kept)")).c_str(),
              (long long)get_int(cut, "first_kept_seq"));
  element split;
  if (!cut["split_turn_request"].get(split))
    std::printf("split turn: request %s\n", std::string(get_string(split, "text")).c_str());
  print_range(plan["range"].value());
  element tokens = plan["tokens"].value();
  std::printf("tokens:     %lld before = %lld previous summary + %lld range + %lld kept; "
              "about %lld after\n",
              (long long)get_int(tokens, "before"), (long long)get_int(tokens, "previous_summary"),
              (long long)get_int(tokens, "range"), (long long)get_int(tokens, "kept"),
              (long long)get_int(tokens, "after_estimate"));
  element info = plan["transcript_info"].value(), omitted;
  std::printf("transcript: %lld tokens (budget %lld)", (long long)get_int(info, "tokens"),
              (long long)get_int(info, "budget"));
  if (!info["omitted"].get(omitted) && omitted.is_object())
    std::printf("; #%lld..#%lld left out (%lld entries, about %lld tokens)",
                (long long)get_int(omitted, "from_seq"), (long long)get_int(omitted, "to_seq"),
                (long long)get_int(omitted, "entries"), (long long)get_int(omitted, "tokens"));
  std::printf("\n");
  element prev;
  if (!plan["previous_compaction"].get(prev) && prev.is_object())
    std::printf("inherits:   %s\n", std::string(get_string(prev, "event_id")).c_str());
  element ob = plan["obligations"].value();
  element task;
  if (!ob["current_task"].get(task) && task.is_object())
    std::printf("task:       %s\n", std::string(get_string(task, "text")).c_str());
  print_list(ob, "files_modified", "files modified", "path");
  print_list(ob, "files_read", "files read", "path");
  print_list(ob, "tool_errors", "tool errors", "tool_call_id");
  print_list(ob, "decisions", "decisions", "decision");
  print_list(ob, "open_questions", "open questions", "text");
  print_list(plan, "memory_candidates", "memory candidates", "content");
}

void print_result(element r) {
  if (get_string(r, "status") != "compacted") {
    std::printf("nothing to compact: %s\n", std::string(get_string(r, "reason")).c_str());
    return;
  }
  std::printf("compacted:  %s\n", std::string(get_string(r, "event_id")).c_str());
  std::printf("first kept: %s (%s)\n", std::string(get_string(r, "first_kept_event_id")).c_str(),
              std::string(get_string(r, "cut_kind")).c_str());
  print_range(r["range"].value());
  double ratio = 0;
  if (r["ratio"].get(ratio)) ratio = 0;
  std::printf("tokens:     %lld -> %lld (ratio %.3f)\n", (long long)get_int(r, "tokens_before"),
              (long long)get_int(r, "tokens_after"), ratio);
  simdjson::dom::array checks = r["checks"].get_array().value();
  std::printf("checks:     %zu passed\n", checks.size());
}

} // namespace

int cmd_compact(const Args &args) {
  const std::string &session = args.positional.at(0);
  if (args.value("--summary-file") && args.has("--builtin"))
    throw UsageError("--summary-file and --builtin exclude each other");
  std::string policy = policy_of(args);
  if (args.has("--dry-run")) {
    auto db = open_db(args, Access::read_only);
    std::string plan = db.compact_plan(session, policy);
    if (args.has("--json")) {
      print_row(plan);
      return 0;
    }
    JsonDoc doc(plan);
    print_plan(doc.root());
    return 0;
  }
  auto db = open_db(args, Access::existing);
  std::string result;
  if (auto file = args.value("--summary-file")) {
    std::string summary = read_input(*file);
    result = db.compact_commit(session, db.compact_plan(session, policy), summary);
  } else {
    result = db.compact(session, policy);
  }
  if (args.has("--json")) {
    print_row(result);
    return 0;
  }
  JsonDoc doc(result);
  print_result(doc.root());
  return 0;
}

int cmd_branch_summary(const Args &args) {
  auto db = open_db(args, Access::existing);
  std::string r =
      db.branch_summarize(args.positional.at(0), args.positional.at(1), args.positional.at(2));
  if (args.has("--json")) {
    print_row(r);
    return 0;
  }
  JsonDoc doc(r);
  element root = doc.root();
  std::printf("appended:   %s on branch %s\n", std::string(get_string(root, "event_id")).c_str(),
              std::string(get_string(root, "branch_id")).c_str());
  std::printf("ancestor:   %s\n",
              std::string(get_string(root, "common_ancestor_event_id")).c_str());
  print_range(root["range"].value());
  std::printf("\n%s", std::string(get_string(root, "text")).c_str());
  return 0;
}

int cmd_compactions(const Args &args) {
  auto db = open_db(args, Access::read_only);
  std::optional<std::string> branch = args.value("--branch");
  std::string list = db.compactions(args.positional.at(0), branch);
  if (args.has("--json")) {
    print_row(list);
    return 0;
  }
  JsonDoc doc(list);
  simdjson::dom::array items = array_of(doc.root(), "compactions");
  if (items.size() == 0) std::printf("no compactions\n");
  for (element c : items) {
    element range = c["range"].value();
    size_t passed = 0, total = 0;
    for (element check : c["checks"].get_array()) {
      ++total;
      passed += get_bool(check, "ok");
    }
    double ratio = 0;
    if (c["ratio"].get(ratio)) ratio = 0;
    std::printf("#%-6lld %s  range #%lld..#%lld  tokens %lld -> %lld  ratio %.3f  checks %zu/%zu  "
                "%s\n",
                (long long)get_int(c, "seq"), std::string(get_string(c, "event_id")).c_str(),
                (long long)get_int(range, "from_seq"), (long long)get_int(range, "to_seq"),
                (long long)get_int(c, "tokens_before"), (long long)get_int(c, "tokens_after"),
                ratio, passed, total,
                std::string(get_string(c["summarizer"].value(), "name")).c_str());
  }
  return 0;
}

} // namespace cli
