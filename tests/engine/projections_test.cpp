// The message, tool-call and file projections over a long mixed session
// with forks: DESIGN §11 invariant 1 on every branch, and rebuild giving
// back every derived table.
#include "agent_events.hpp"
#include "engine.hpp"
#include "test_util.hpp"

#include <doctest/doctest.h>

#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace projections_test {

using namespace ctxdb;
using namespace ctxdb::test;

namespace {

// Appends a seeded random agent session: prompts, calls, results naming any
// call made so far (so many are orphans, doubles or on a sibling branch and
// must be rejected), file events and compactions, each after the last event
// or, now and then, after an earlier one (a fork).
struct MixedSession {
  TempDir dir;
  Engine db{dir.file("mixed.ctxdb"), ""};
  std::vector<std::string> events;
  std::vector<std::string> call_ids;
  std::set<std::string> branches; // every branch id but main's
  int accepted_results = 0, rejected_results = 0;

  MixedSession() {
    db.session_create(R"({"id":"s","payload":{"agent_id":"a"}})");
    events.push_back(field(db.session_get("s"), "started_event_id"));
    std::mt19937 rng(1234);
    auto pick = [&](size_t n) { return size_t(rng() % n); };
    for (int i = 0; i < 400; ++i) {
      std::string parent = pick(5) == 0 ? events[pick(events.size())] : events.back();
      std::string where = after(parent);
      std::string line;
      switch (pick(6)) {
      case 0: line = prompt("step " + std::to_string(i), where); break;
      case 1:
      case 2:
        call_ids.push_back("c" + std::to_string(i % 50)); // ids repeat across branches
        line = call(call_ids.back(), where);
        break;
      case 3: {
        if (call_ids.empty()) continue;
        std::string id = call_ids[pick(call_ids.size())];
        line = pick(3) ? finished(id, where) : failed(id, where);
        break;
      }
      case 4:
        line = event(pick(2) ? "FileRead" : "FileWritten", "host",
                     R"({"path":"f)" + std::to_string(pick(4)) + R"(.py","change_summary":"s)" +
                         std::to_string(i) + "\"}",
                     where);
        break;
      default:
        line = event("CompactionCompleted", "host",
                     R"({"summary":"so far","first_kept_event_id":")" + parent + "\"}", where);
      }
      append(line);
    }
  }

  void append(const std::string &line) {
    bool is_result = line.find("\"ToolCall") != std::string::npos;
    try {
      std::string stored = db.append("s", line);
      events.push_back(id_of(stored));
      branches.insert(field(stored, "branch_id"));
      accepted_results += is_result;
    } catch (const Error &e) {
      // Only results, and calls reusing an id on their path, are refused.
      bool reused = std::string(e.what()).find("is already used") != std::string::npos;
      REQUIRE_MESSAGE((is_result || reused), std::string(e.what()));
      CHECK((e.code() == Code::kNotFound || e.code() == Code::kConflict));
      rejected_results += is_result;
    } catch (...) {
      FAIL("not a ctxdb::Error");
    }
  }

  // Every view of every branch.
  std::string views() {
    std::string out;
    for (const std::string &b : branches)
      out += db.messages("s", std::string_view(b)) + db.tool_calls("s", std::string_view(b)) +
             db.files("s", std::string_view(b)) + "\n";
    return out;
  }
};

} // namespace

TEST_CASE("DESIGN §11 invariant 1: every tool result has its call before it, on the same branch") {
  MixedSession s;
  REQUIRE(s.branches.size() > 5);
  REQUIRE(s.accepted_results > 10);
  REQUIRE(s.rejected_results > 10);
  int results_seen = 0;
  for (const std::string &b : s.branches) {
    // Walk the branch's messages in order: a tool message must answer a
    // call already made on this path, and answer it only once.
    std::set<std::string> made, answered;
    for (const std::string &m : items(s.db.messages("s", std::string_view(b)))) {
      for (const std::string &block : items(field(m, "blocks"))) {
        std::string type = field(block, "type");
        if (type == "tool_call") {
          CHECK_MESSAGE(made.insert(field(block, "id")).second, "a call id twice on " << b);
        } else if (type == "tool_result") {
          std::string id = field(block, "tool_call_id");
          CHECK_MESSAGE(made.count(id), "result for " << id << " before its call on " << b);
          CHECK_MESSAGE(answered.insert(id).second, "two results for " << id << " on " << b);
          ++results_seen;
        }
      }
    }
    // And the paired view agrees: a result comes after its call.
    for (const std::string &c : items(s.db.tool_calls("s", std::string_view(b)))) {
      std::string result = field(c, "result");
      CHECK((field(c, "status") == "pending") == (result == "null"));
      if (result != "null") CHECK(std::stoll(field(result, "seq")) > std::stoll(field(c, "seq")));
    }
  }
  CHECK(results_seen >= s.accepted_results);
}

TEST_CASE("rebuild --check gives back every derived table after a mixed session with forks") {
  MixedSession s;
  std::string views = s.views();
  std::string report = s.db.rebuild(R"({"check":true})");
  CHECK(field(report, "identical") == "true");
  std::set<std::string> tables;
  for (const std::string &t : column(field(report, "tables"), "table")) tables.insert(t);
  for (const char *t : {"messages", "tool_calls", "tool_results", "file_events"})
    CHECK_MESSAGE(tables.count(t), t);
  for (const std::string &t : items(field(report, "tables"))) {
    CHECK(field(t, "before") == field(t, "after"));
    if (field(t, "table") == "messages") CHECK(std::stoll(field(t, "rows")) > 100);
  }
  // A committed rebuild reads back the same, and appends go on from it.
  s.db.rebuild("");
  CHECK(s.views() == views);
  s.db.append("s", call("after_rebuild"));
  s.db.append("s", finished("after_rebuild"));
  CHECK(code_of([&] { s.db.append("s", finished("after_rebuild")); }) == Code::kConflict);
  CHECK(field(s.db.rebuild(R"({"check":true})"), "identical") == "true");
}

} // namespace projections_test
