// Compaction (engine/compact/): the cut, the plan, the summary's checks,
// the commit, and the invariants of DESIGN §11 it keeps (2, 3, 4, 8), on
// hand-made sessions.
#include "agent_events.hpp"
#include "artifact/image_info.hpp"
#include "bundle_checks.hpp"
#include "engine.hpp"
#include "store/store.hpp"
#include "test_util.hpp"
#include "util/base64.hpp"
#include "json/parse.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <functional>
#include <random>
#include <set>
#include <sstream>
#include <thread>

namespace compact_test {

using namespace ctxdb;
using namespace ctxdb::test;

namespace {

std::string output_of(size_t lines) {
  std::string out;
  for (size_t i = 0; i < lines; ++i) out += "line " + std::to_string(i) + " of the test run\\n";
  return out;
}

std::string result(const std::string &id, size_t lines) {
  return event("ToolCallFinished", "tool",
               R"({"tool_call_id":")" + id + R"(","name":"bash","output":")" + output_of(lines) +
                   "\"}");
}

std::string wrote(const std::string &path) {
  return event("FileWritten", "tool",
               R"({"path":")" + path + R"(","change_summary":"edited )" + path + "\"}");
}

std::string state_ops(const std::string &ops) {
  return event("StateUpdated", "agent", R"({"ops":[)" + ops + "]}");
}

// One turn: a prompt, a call and its result, a file written.
struct TurnIds {
  std::string prompt, call, result, file;
};

TurnIds add_turn(SessionFixture &f, int n, size_t output_lines = 20) {
  std::string k = std::to_string(n);
  TurnIds t;
  t.prompt = f.add(prompt("turn " + k + ": fix module " + k));
  t.call = f.add(call("c" + k));
  t.result = f.add(result("c" + k, output_lines));
  t.file = f.add(wrote("src/m" + k + ".py"));
  return t;
}

struct Json {
  std::string text;
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  explicit Json(std::string t) : text(std::move(t)) { doc = parser.parse(text).value(); }
  std::string str(std::initializer_list<const char *> path) {
    simdjson::dom::element e = doc;
    for (const char *k : path) e = e[k].value();
    if (e.is_string()) return std::string(e.get_string().value());
    return simdjson::minify(e);
  }
  int64_t num(std::initializer_list<const char *> path) {
    simdjson::dom::element e = doc;
    for (const char *k : path) e = e[k].value();
    return e.get_int64().value();
  }
};

std::vector<std::string> lines_of(const std::string &s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

// The log after a failed compaction: what it was, plus one CompactionFailed.
void check_failed_once(Engine &db, const std::string &before) {
  std::vector<std::string> was = lines_of(before), now = lines_of(export_all(db));
  REQUIRE(now.size() == was.size() + 1);
  for (size_t i = 0; i < was.size(); ++i) CHECK(now[i] == was[i]);
  CHECK(field(now.back(), "type") == "CompactionFailed");
}

// The failed checks named by a kCheckFailed.
std::string failed_checks(const std::function<void()> &fn) {
  try {
    fn();
  } catch (const Error &e) {
    CHECK(e.code() == Code::kCheckFailed);
    return e.what();
  }
  FAIL("no error");
  return "";
}

// A session of six turns; the first states a fact and reads a file.
struct Session : SessionFixture {
  std::vector<TurnIds> turns;
  explicit Session(int n = 6, size_t output_lines = 20) {
    for (int i = 0; i < n; ++i) {
      turns.push_back(add_turn(*this, i, output_lines));
      if (i == 1) {
        add(call("e1"));
        add(failed("e1"));
      }
      if (i == 0) {
        add(state_ops(
            R"({"op":"add_fact","content":"the CI runs on python 3.11","confidence":0.95},)"
            R"({"op":"add_constraint","kind":"preference","text":"keep diffs small"})"));
        add(event("FileRead", "tool", R"({"path":"README.md"})"));
      }
    }
  }
};

std::string keep(int64_t tokens, const std::string &extra = "") {
  return R"({"keep_recent_tokens":)" + std::to_string(tokens) + (extra.empty() ? "" : "," + extra) +
         "}";
}

// The tokens of the newest n turns of a Session, as a plan counts them.
int64_t tokens_of_recent(Engine &db, int n) {
  Json msgs(db.messages("s", std::nullopt));
  auto all = msgs.doc.get_array().value();
  std::vector<std::pair<std::string, int64_t>> rows;
  for (auto m : all)
    rows.emplace_back(std::string(m["role"].get_string().value()),
                      m["tokens"].get_int64().value() + 4);
  int64_t sum = 0;
  int seen = 0;
  for (size_t i = rows.size(); i-- > 0;) {
    sum += rows[i].second;
    if (rows[i].first == "user" && ++seen == n) break;
  }
  return sum;
}

} // namespace

TEST_CASE("should_compact reports the size, the limits and the net benefit") {
  Session f(6, 200);
  Json small(f.db.compact_should("s", ""));
  CHECK(small.str({"level"}) == "ok");
  CHECK(small.str({"should_compact"}) == "false");
  CHECK(small.num({"context_window"}) == 128000);
  CHECK(small.num({"reserve_tokens"}) == 16384);
  CHECK(small.num({"context_tokens"}) == small.num({"estimated_tokens"}));
  CHECK(small.str({"anchor"}) == "null");
  int64_t size = small.num({"context_tokens"});
  // A window it overflows: over the hard limit, and worth compacting.
  std::string tight = R"({"context_window":)" + std::to_string(size + 100) +
                      R"(,"reserve_tokens":200,"keep_recent_tokens":100,"min_reclaim_tokens":10,)"
                      R"("summary_tokens":50})";
  Json over(f.db.compact_should("s", tight));
  CHECK(over.str({"level"}) == "hard");
  CHECK(over.str({"should_compact"}) == "true");
  CHECK(over.num({"net_benefit_tokens"}) == size - 100 - 50);
  // Below the minimum reclaim it advises against.
  Json not_worth(f.db.compact_should(
      "s", R"({"context_window":)" + std::to_string(size + 100) +
               R"(,"reserve_tokens":200,"keep_recent_tokens":100,"min_reclaim_tokens":1000000})"));
  CHECK(not_worth.str({"should_compact"}) == "false");
  CHECK(not_worth.str({"reason"}).find("min_reclaim_tokens") != std::string::npos);
  // Provider usage anchors the size: the count after it is added.
  std::string anchored = f.add(event(
      "AssistantMessageCreated", "assistant",
      R"({"content":[{"type":"text","text":"done"}],"usage":{"input_tokens":90000,"output_tokens":10}})"));
  std::string after = f.add(prompt("and now?"));
  Json a(f.db.compact_should("s", ""));
  CHECK(a.str({"anchor", "event_id"}) == anchored);
  CHECK(a.num({"anchor", "usage_tokens"}) == 90010);
  CHECK(a.num({"context_tokens"}) == 90010 + a.num({"anchor", "tokens_after"}));
  CHECK(a.num({"anchor", "tokens_after"}) > 0);
  (void)after;
}

// A host's counter: one token a byte, nothing like the estimator's count.
struct BytesCounter final : token::Counter {
  std::string_view name() const override { return "bytes-v1"; }
  int64_t count(std::string_view text) const override { return int64_t(text.size()); }
};

TEST_CASE("compaction counts with the handle's token counter, as appends and compiles do") {
  SessionFixture f;
  f.db.set_token_counter(std::make_unique<BytesCounter>());
  std::vector<TurnIds> turns;
  for (int i = 0; i < 4; ++i) turns.push_back(add_turn(f, i));
  int64_t two = tokens_of_recent(f.db, 2); // the rows' bytes-v1 counts
  Json plan(f.db.compact_plan("s", keep(two)));
  CHECK(plan.str({"cut", "first_kept_event_id"}) == turns[2].prompt);
  CHECK(plan.num({"tokens", "kept"}) == two);
  Json should(f.db.compact_should("s", ""));
  CHECK(plan.num({"tokens", "before"}) == should.num({"estimated_tokens"}));
}

TEST_CASE("a plan keeps the recent whole turns and lists what the summary must cover") {
  Session f;
  int64_t two = tokens_of_recent(f.db, 2);
  Json plan(f.db.compact_plan("s", keep(two)));
  CHECK(plan.str({"status"}) == "ready");
  CHECK(plan.str({"cut", "kind"}) == "turn");
  CHECK(plan.str({"cut", "first_kept_event_id"}) == f.turns[4].prompt);
  CHECK(plan.num({"tokens", "kept"}) == two);
  CHECK(plan.num({"tokens", "before"}) ==
        plan.num({"tokens", "kept"}) + plan.num({"tokens", "range"}));
  CHECK(plan.str({"range", "from_event_id"}) != "");
  CHECK(plan.str({"range", "to_event_id"}) == f.turns[3].file);
  std::string obligations = plan.str({"obligations"});
  for (int i = 0; i < 4; ++i)
    CHECK(obligations.find("src/m" + std::to_string(i) + ".py") != std::string::npos);
  CHECK(obligations.find("src/m4.py") == std::string::npos);
  CHECK(obligations.find(R"("tool_call_id":"e1")") != std::string::npos);
  CHECK(plan.str({"obligations", "current_task", "event_id"}) == f.turns[5].prompt);
  std::string memory = plan.str({"memory_candidates"});
  CHECK(memory.find("the CI runs on python 3.11") != std::string::npos);
  CHECK(memory.find(R"("kind":"preference")") != std::string::npos);
  std::string transcript = plan.str({"transcript"});
  CHECK(transcript.find("turn 0: fix module 0") != std::string::npos);
  CHECK(transcript.find("file modified: src/m3.py") != std::string::npos);
  CHECK(transcript.find("turn 4:") == std::string::npos);
  // All of it fits: nothing to compact, and compact writes nothing.
  Json none(f.db.compact_plan("s", keep(1000000)));
  CHECK(none.str({"status"}) == "nothing_to_compact");
  std::string before = export_all(f.db);
  CHECK(field(f.db.compact("s", keep(1000000), nullptr), "status") == "nothing_to_compact");
  CHECK(export_all(f.db) == before);
}

// The planner counts an image as a compile for no one provider does (the
// largest rule), so the tail it keeps is one a compile can fit.
TEST_CASE("the plan counts images as the compiler does") {
  SessionFixture f;
  std::string image = util::encode_base64(png_head(1000, 1000));
  std::vector<std::string> asks;
  for (int i = 0; i < 3; ++i)
    asks.push_back(
        f.add(event("UserPromptSubmitted", "user",
                    R"({"text":"what changed in chart )" + std::to_string(i) +
                        R"(?","content":[{"type":"image","mime_type":"image/png","data":")" +
                        image + R"("}]})")));
  int64_t each = artifact::max_image_tokens({1000, 1000});
  Json plan(f.db.compact_plan("s", keep(each + 100)));
  // One turn fits what is kept: the two older ones, images and all, are the range.
  CHECK(plan.str({"cut", "first_kept_event_id"}) == asks.back());
  CHECK(plan.num({"tokens", "kept"}) > each);
  CHECK(plan.num({"tokens", "range"}) > 2 * each);
  Bundle kept(f.db.compile(R"({"session_id":"s","max_tokens":100000})"));
  int64_t compiled = 0;
  for (auto s : kept.segments())
    if (s["id"].get_string().value() == "msg:" + asks.back())
      compiled = s["tokens"].get_int64().value();
  CHECK(compiled == plan.num({"tokens", "kept"}));
}

TEST_CASE("large tool outputs enter the transcript as a preview and an artifact ref") {
  SessionFixture f; // outputs over 16 KiB spill to artifacts at append
  f.add(prompt("run the suite"));
  f.add(call("c1"));
  f.add(result("c1", 2000));
  f.add(prompt("next"));
  Json plan(f.db.compact_plan("s", keep(10)));
  std::string transcript = plan.str({"transcript"});
  CHECK(transcript.find("line 1999 of the test run") != std::string::npos); // the tail
  CHECK(transcript.find("line 1000 of the test run") == std::string::npos); // not the middle
  CHECK(transcript.find("art_") != std::string::npos);
}

TEST_CASE("a transcript over its budget keeps its head and tail and marks the middle") {
  Session f(40);
  Json whole(f.db.compact_plan("s", keep(10)));
  CHECK(whole.str({"transcript_info", "omitted"}) == "null");
  int64_t all = whole.num({"transcript_info", "tokens"});
  REQUIRE(all > 2000);
  CHECK(whole.num({"transcript_info", "budget"}) == 128000 - 16384 - 2000); // derived

  Json capped(f.db.compact_plan("s", keep(10, R"("transcript_max_tokens":1200)")));
  CHECK(capped.num({"transcript_info", "budget"}) == 1200);
  CHECK(capped.num({"transcript_info", "tokens"}) <= 1200);
  int64_t omitted = capped.num({"transcript_info", "omitted", "tokens"});
  CHECK(capped.num({"transcript_info", "omitted", "entries"}) > 0);
  CHECK(omitted > all - 1200);
  std::string t = capped.str({"transcript"});
  CHECK(t.find("turn 0: fix module 0") != std::string::npos); // the head, where the task was set
  CHECK(t.find("turn 38:") != std::string::npos);             // the tail, the latest work
  CHECK(t.find("turn 20:") == std::string::npos);             // the middle is left out ...
  CHECK(t.find("#" + std::to_string(capped.num({"transcript_info", "omitted", "from_seq"})) +
               " to #") != std::string::npos); // ... and the marker says where it is
  // The cap shapes the transcript only: the cut, the range and the
  // obligations are those of the whole plan.
  for (auto key : {"cut", "range", "tokens", "obligations"})
    CHECK(capped.str({key}) == whole.str({key}));
  CHECK(capped.str({"policy", "transcript_max_tokens"}) == "1200");
}

TEST_CASE("a huge turn is split after a closed tool pair; its request goes to the summary") {
  SessionFixture f;
  std::string ask = f.add(prompt("refactor everything"));
  std::vector<std::string> calls, results;
  for (int i = 0; i < 8; ++i) {
    calls.push_back(f.add(call("c" + std::to_string(i))));
    results.push_back(f.add(result("c" + std::to_string(i), 40)));
  }
  int64_t pair = tokens_of_recent(f.db, 1) / 8; // about one pair
  Json plan(f.db.compact_plan("s", keep(pair * 3)));
  CHECK(plan.str({"cut", "kind"}) == "split_turn");
  CHECK(plan.str({"cut", "split_turn_request", "event_id"}) == ask);
  std::string first_kept = plan.str({"cut", "first_kept_event_id"});
  auto at = std::find(calls.begin(), calls.end(), first_kept);
  REQUIRE(at != calls.end()); // a cut at a call: its pair stays whole
  Json done(f.db.compact("s", keep(pair * 3), nullptr));
  CHECK(done.str({"status"}) == "compacted");
  CHECK(done.str({"summary", "split_turn", "request"}) == "refactor everything");
  // The compiled context has the summary with the request, then the tail.
  Json bundle(f.db.compile(R"({"session_id":"s","max_tokens":100000})"));
  CHECK(bundle.text.find("refactor everything") != std::string::npos);
  CHECK(bundle.text.find("msg:" + results.front()) == std::string::npos);
  CHECK(bundle.text.find("msg:" + results.back()) != std::string::npos);
}

TEST_CASE("invariant 2: compaction never removes a tool call still running") {
  Session f(3);
  for (int i = 3; i < 8; ++i) f.turns.push_back(add_turn(f, i));
  f.add(call("done_first"));
  f.add(finished("done_first"));
  std::string pending = f.add(call("slow")); // the host is running it
  Json plan(f.db.compact_plan("s", keep(10)));
  // The newest unit is the call itself: the cut keeps it, never passes it.
  CHECK(plan.str({"cut", "first_kept_event_id"}) == pending);
  CHECK(plan.str({"pending_calls_kept"}) == R"(["slow"])");
  // Kept tokens that would pass it move the cut back to its turn's start.
  Json wider(f.db.compact_plan("s", keep(tokens_of_recent(f.db, 1) - 1)));
  CHECK(wider.str({"pending_calls_kept"}) == R"(["slow"])");
  Json done(f.db.compact("s", keep(10), nullptr));
  CHECK(done.str({"status"}) == "compacted");
  Json bundle(f.db.compile(
      R"({"session_id":"s","max_tokens":100000,"tool_results":[{"tool_call_id":"slow","output":"ok"}]})"));
  CHECK(bundle.text.find("msg:" + pending) != std::string::npos);
}

// A call that never got a result, after which the conversation went on,
// is a closed pair: a session holding such calls (or cancelled ones)
// compacts as far as one without them.
TEST_CASE("compaction cuts past abandoned and cancelled calls") {
  auto build = [](Session &f, bool interrupted) {
    for (int i = 3; i < 8; ++i) {
      if (interrupted && i == 4) f.add(call("lost"));
      if (interrupted && i == 5) {
        f.add(call("stopped"));
        f.add(event("ToolCallCancelled", "host",
                    R"({"tool_call_id":"stopped","reason":"interrupted by the user"})"));
      }
      f.turns.push_back(add_turn(f, i));
    }
  };
  Session plain(3), interrupted(3);
  build(plain, false);
  build(interrupted, true);
  Json a(plain.db.compact_plan("s", keep(10))), b(interrupted.db.compact_plan("s", keep(10)));
  // Both keep only the newest pair.
  CHECK(a.str({"cut", "first_kept_event_id"}) == plain.turns[7].call);
  CHECK(b.str({"cut", "first_kept_event_id"}) == interrupted.turns[7].call);
  CHECK(b.str({"cut", "kind"}) == a.str({"cut", "kind"}));
  CHECK(b.str({"pending_calls_kept"}) == "[]");
  Json done(interrupted.db.compact("s", keep(10), nullptr));
  CHECK(done.str({"status"}) == "compacted");
  // What stayed compiles, and kept nothing of the cut calls.
  Bundle bundle(interrupted.db.compile(R"({"session_id":"s","max_tokens":100000})"));
  check_bundle(bundle);
  CHECK(bundle.json.find("lost") == std::string::npos);
  CHECK(bundle.json.find("stopped") == std::string::npos);
}

TEST_CASE("invariants 3, 4 and 8: the summary names its range, covers every write, and the log "
          "stays") {
  Session f;
  std::string before = export_all(f.db);
  Json done(f.db.compact("s", keep(tokens_of_recent(f.db, 1)), nullptr));
  REQUIRE(done.str({"status"}) == "compacted");
  // 8: every event is still there, unchanged; one event was added.
  std::vector<std::string> was = lines_of(before), now = lines_of(export_all(f.db));
  REQUIRE(now.size() == was.size() + 1);
  for (size_t i = 0; i < was.size(); ++i) CHECK(now[i] == was[i]);
  std::string payload = field(now.back(), "payload");
  CHECK(field(now.back(), "type") == "CompactionCompleted");
  // 3: the range, in the payload and in the summary's provenance.
  Json p(payload);
  CHECK(p.str({"range", "from_event_id"}) != "");
  CHECK(p.str({"range", "to_event_id"}) != "");
  CHECK(p.num({"range", "events"}) > 0);
  CHECK(p.str({"summary", "provenance", "range"}) == p.str({"range"}));
  CHECK(p.str({"summary", "provenance", "summarizer", "name"}) == "ctxdb.extractive");
  CHECK(p.num({"tokens_after"}) < p.num({"tokens_before"}));
  // 4: every file written is in the summary's modified files or the state's.
  std::string state = f.db.state("s", std::nullopt, std::nullopt);
  std::string modified = p.str({"summary", "files", "modified"});
  for (int i = 0; i < 6; ++i) {
    std::string path = "src/m" + std::to_string(i) + ".py";
    CHECK((modified.find(path) != std::string::npos || state.find(path) != std::string::npos));
  }
  CHECK(modified.find("src/m0.py") != std::string::npos);
  CHECK(p.str({"summary", "errors"}).find(R"("tool_call_id":"e1")") != std::string::npos);
  CHECK(field(f.db.rebuild(R"({"check":true})"), "identical") == "true");
}

TEST_CASE("each hard rule rejects a summary by name and records one CompactionFailed") {
  Session f;
  std::string plan = f.db.compact_plan("s", keep(tokens_of_recent(f.db, 2)));
  Json pj(plan);
  std::string from = pj.str({"range", "from_event_id"});
  std::string e1 = "e1";
  auto summary = [&](const std::string &task, const std::string &next, const std::string &files,
                     const std::string &errors, const std::string &refs) {
    return R"({"goal":{"current_task":")" + task + R"("},"next_steps":[)" + next +
           R"(],"files":{"modified":[)" + files + R"(]},"errors":[)" + errors +
           R"(],"provenance":{"source_event_ids":[)" + refs + "]}}";
  };
  std::string files;
  for (int i = 0; i < 4; ++i)
    files += std::string(i ? "," : "") + R"({"path":"src/m)" + std::to_string(i) + R"(.py"})";
  std::string errors = R"({"tool_call_id":"e1","error":"timed out"})";
  std::string refs = "\"" + from + "\"";
  std::string good = summary("fix module 5", R"("run the tests")", files, errors, refs);
  struct Case {
    const char *rule;
    std::string summary;
  } cases[] = {
      {"current_task", summary("", R"("run the tests")", files, errors, refs)},
      {"next_steps", summary("fix module 5", "", files, errors, refs)},
      {"files_modified",
       summary("fix module 5", R"("x")", R"({"path":"src/m0.py"})", errors, refs)},
      {"tool_errors", summary("fix module 5", R"("x")", files, "", refs)},
      {"source_refs", summary("fix module 5", R"("x")", files, errors, "")},
      {"source_refs", summary("fix module 5", R"("x")", files, errors, R"("evt_elsewhere")")},
      {"summary_json", "not json"},
      {"summary_json", "[1,2]"},
      {"summary_schema", "{}"},
  };
  for (const Case &c : cases) {
    INFO(c.rule << ": " << c.summary);
    std::string before = export_all(f.db);
    std::string message = failed_checks([&] { f.db.compact_commit("s", plan, c.summary); });
    CHECK(message.find(c.rule) != std::string::npos);
    check_failed_once(f.db, before);
    std::string failed = lines_of(export_all(f.db)).back();
    CHECK(field(field(failed, "payload"), "failed_checks").find(c.rule) != std::string::npos);
    // The failure moved the leaf: plan again for the next case.
    plan = f.db.compact_plan("s", keep(tokens_of_recent(f.db, 2)));
  }
  // A cut between a call and its result: tool_pair_split.
  Json again(plan);
  std::string split_plan = plan;
  std::string kept = again.str({"cut", "first_kept_event_id"});
  size_t at = split_plan.find(kept);
  split_plan.replace(at, kept.size(), f.turns[4].result);
  std::string before = export_all(f.db);
  std::string message = failed_checks([&] { f.db.compact_commit("s", split_plan, good); });
  CHECK(message.find("tool_pair_split") != std::string::npos);
  check_failed_once(f.db, before);
  // The good one passes.
  plan = f.db.compact_plan("s", keep(tokens_of_recent(f.db, 2)));
  Json ok(f.db.compact_commit("s", plan, good));
  CHECK(ok.str({"status"}) == "compacted");
  CHECK(ok.str({"summarizer", "name"}) == "host");
}

TEST_CASE("a summarizer that throws, returns garbage, nothing, or answers late fails cleanly") {
  Session f;
  // Only the late case has a timeout, with a wide margin on both sides, so
  // a loaded machine (CI, parallel suites) cannot turn a fast summarizer
  // into a late one.
  std::string policy = keep(tokens_of_recent(f.db, 2));
  std::string timed = keep(tokens_of_recent(f.db, 2), R"("timeout_ms":200)");
  compact::Summarizer throws = [](std::string_view) -> std::string {
    throw std::runtime_error("model unavailable");
  };
  compact::Summarizer garbage = [](std::string_view) { return std::string("<html>"); };
  compact::Summarizer empty = [](std::string_view) { return std::string(); };
  compact::Summarizer late = [](std::string_view) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1000));
    return std::string("{}");
  };
  std::pair<compact::Summarizer *, const char *> cases[] = {{&throws, "model unavailable"},
                                                            {&garbage, "summary_json"},
                                                            {&empty, "empty summary"},
                                                            {&late, "timeout_ms"}};
  for (auto [fn, why] : cases) {
    INFO(why);
    std::string before = export_all(f.db);
    std::string message =
        failed_checks([&] { f.db.compact("s", fn == &late ? timed : policy, fn); });
    CHECK(message.find(why) != std::string::npos);
    check_failed_once(f.db, before);
  }
  // The summarizer sees the plan; a good answer commits.
  std::string seen;
  compact::Summarizer host = [&](std::string_view plan) {
    seen = plan;
    Json p{std::string(plan)};
    std::string files;
    for (auto m : p.doc["obligations"]["files_modified"].get_array())
      files += std::string(files.empty() ? "" : ",") + R"({"path":")" +
               std::string(m["path"].get_string().value()) + "\"}";
    std::string errors;
    for (auto e : p.doc["obligations"]["tool_errors"].get_array())
      errors += std::string(errors.empty() ? "" : ",") + R"({"tool_call_id":")" +
                std::string(e["tool_call_id"].get_string().value()) + R"(","error":"x"})";
    return R"({"goal":{"current_task":"t"},"next_steps":["n"],"files":{"modified":[)" + files +
           R"(]},"errors":[)" + errors + R"(],"provenance":{"source_event_ids":[")" +
           p.str({"range", "to_event_id"}) + R"("],"summarizer":{"name":"my-llm","version":"7"}}})";
  };
  Json done(f.db.compact("s", keep(tokens_of_recent(f.db, 2)), &host));
  CHECK(done.str({"status"}) == "compacted");
  CHECK(done.str({"summarizer", "name"}) == "my-llm");
  CHECK(seen.find("\"transcript\"") != std::string::npos);
}

TEST_CASE("three chained compactions: what was known before the first survives the third") {
  Session f(3);
  Json first(f.db.compact("s", keep(tokens_of_recent(f.db, 1)), nullptr));
  REQUIRE(first.str({"status"}) == "compacted");
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < 3; ++i) f.turns.push_back(add_turn(f, 10 * (round + 1) + i));
    Json next(f.db.compact("s", keep(tokens_of_recent(f.db, 1)), nullptr));
    REQUIRE(next.str({"status"}) == "compacted");
  }
  Json list(f.db.compactions("s", std::nullopt));
  REQUIRE(list.doc.get_array().size() == 3);
  std::string third_id(list.doc.at(2)["event_id"].get_string().value());
  Json third(field(f.db.event_get(third_id), "payload"));
  std::string summary = third.str({"summary"});
  CHECK(summary.find("the CI runs on python 3.11") != std::string::npos); // a fact
  CHECK(summary.find("Handled the request: turn 0: fix module 0") != std::string::npos);
  CHECK(summary.find("README.md") != std::string::npos);              // a file read
  CHECK(summary.find(R"("tool_call_id":"e1")") != std::string::npos); // an error
  CHECK(third.str({"previous_compaction_id"}) ==
        std::string(list.doc.at(1)["event_id"].get_string().value()));
  // Each range starts where the previous cut was.
  for (size_t i = 1; i < 3; ++i)
    CHECK(list.doc.at(i)["range"]["from_seq"].get_int64().value() ==
          list.doc.at(i - 1)["first_kept_seq"].get_int64().value());
  CHECK(list.doc.at(0)["checks"].get_array().size() > 5);
  CHECK(field(f.db.rebuild(R"({"check":true})"), "identical") == "true");
}

TEST_CASE("a compile after compaction keeps every bundle invariant") {
  Session f(8);
  std::string open = f.add(call("open1"));
  f.add(state_ops(R"({"op":"open_question","text":"which python?"})"));
  f.db.compact("s", keep(tokens_of_recent(f.db, 2)), nullptr);
  for (int64_t budget : {400, 1000, 3000, 100000}) {
    std::string json;
    try {
      json = f.db.compile(R"({"session_id":"s","max_tokens":)" + std::to_string(budget) +
                          R"(,"tool_results":[{"tool_call_id":"open1","output":"3.11"}]})");
    } catch (const Error &e) {
      CHECK(e.code() == Code::kBudget);
      continue;
    }
    INFO(budget << ": " << json);
    Json b(json);
    std::set<std::string> calls, results;
    int64_t sum = 0;
    for (auto s : b.doc["segments"].get_array()) {
      sum += s["tokens"].get_int64().value();
      CHECK(!s["reason"].get_string().value().empty());
      CHECK(s["sources"].get_array().size() > 0);
      for (auto block : s["content"].get_array()) {
        std::string_view type = block["type"].get_string().value();
        if (type == "tool_call") calls.insert(std::string(block["id"].get_string().value()));
        if (type == "tool_result") {
          std::string id(block["tool_call_id"].get_string().value());
          CHECK(calls.count(id) == 1);
          results.insert(id);
        }
      }
    }
    CHECK(sum == b.num({"budget", "used"}));
    CHECK(calls.count("open1") == 1); // the pending call
    for (const std::string &c : calls)
      if (c != "open1") CHECK(results.count(c) == 1);
    CHECK(json.find("\"id\":\"goal\"") != std::string::npos);
    CHECK(json.find("\"id\":\"open_questions\"") != std::string::npos);
    if (budget == 100000) {
      CHECK(json.find("\"id\":\"summary\"") != std::string::npos);
      CHECK(json.find("Files modified") != std::string::npos);
      CHECK(json.find("Next steps") != std::string::npos);
    }
  }
  (void)open;
}

TEST_CASE("bad compaction input is a clear error") {
  Session f(2);
  CHECK(code_of([&] { f.db.compact_plan("s", "{"); }) == Code::kInvalidJson);
  CHECK(code_of([&] { f.db.compact_plan("s", R"({"keep":1})"); }) == Code::kInvalidArg);
  CHECK(code_of([&] { f.db.compact_plan("s", R"({"keep_recent_tokens":-1})"); }) ==
        Code::kInvalidArg);
  CHECK(code_of([&] {
          f.db.compact_should("s", R"({"context_window":10,"reserve_tokens":10})");
        }) == Code::kInvalidArg);
  CHECK(code_of([&] { f.db.compact_plan("nope", ""); }) == Code::kNotFound);
  CHECK(code_of([&] { f.db.compact_plan("s", R"({"branch_id":"nope"})"); }) == Code::kNotFound);
  CHECK(code_of([&] { f.db.compact_commit("s", "{", "{}"); }) == Code::kInvalidJson);
  CHECK(code_of([&] { f.db.compact_commit("s", "{}", "{}"); }) == Code::kInvalidArg);
  CHECK(code_of([&] {
          f.db.compact_commit(
              "s", R"({"leaf_event_id":"evt_x","cut":{"first_kept_event_id":null}})", "{}");
        }) == Code::kNotFound);
  CHECK(code_of([&] { f.db.compactions("nope", std::nullopt); }) == Code::kNotFound);
  CHECK(f.db.compactions("s", std::nullopt) == "[]");
}

TEST_CASE("compaction outputs match their schemas") {
  Session f;
  auto matches = [](const std::string &json, const char *schema) {
    INFO(schema << ": " << json);
    simdjson::dom::parser p;
    CHECK_NOTHROW(store::embedded_schema(std::string("json/") + schema)
                      .validate(json::parse(p, json, "output"), ""));
  };
  matches(f.db.compact_should("s", ""), "compaction_advice.schema.json");
  std::string plan = f.db.compact_plan("s", keep(tokens_of_recent(f.db, 2)));
  matches(plan, "compaction_plan.schema.json");
  matches(f.db.compact_plan("s", keep(1000000)), "compaction_plan.schema.json");
  std::string done = f.db.compact("s", keep(tokens_of_recent(f.db, 2)), nullptr);
  matches(done, "compaction_result.schema.json");
  matches(field(done, "summary"), "compaction_summary.schema.json");
  matches(f.db.compact("s", keep(1000000), nullptr), "compaction_result.schema.json");
  matches(f.db.compactions("s", std::nullopt), "compactions.schema.json");
}

TEST_CASE("a branch summary tells the new branch what the abandoned one tried") {
  SessionFixture f;
  std::string ask = f.add(prompt("make the tests pass"));
  // The abandoned attempt: a failed call, a file written, a decision.
  f.add(call("try1"));
  f.add(failed("try1"));
  f.add(wrote("src/hack.py"));
  std::string leaf = f.add(event("DecisionRecorded", "agent",
                                 R"({"decision":"monkeypatch the clock","rationale":"quick"})"));
  Json r(f.db.branch_summarize("s", leaf, ask));
  CHECK(r.str({"common_ancestor_event_id"}) == ask);
  CHECK(r.str({"from_leaf_event_id"}) == leaf);
  CHECK(r.str({"summary", "files", "modified"}).find("src/hack.py") != std::string::npos);
  CHECK(r.str({"summary", "errors"}).find("try1") != std::string::npos);
  CHECK(r.str({"summary", "decisions"}).find("monkeypatch the clock") != std::string::npos);
  // It was appended at the ask, so it opened a fork there.
  std::string branch = r.str({"branch_id"});
  CHECK(branch != "main");
  CHECK(field(f.db.event_get(r.str({"event_id"})), "parent_id") == ask);
  // The new branch's compiled context carries it; main's does not.
  f.add(prompt("try another way", on(branch)));
  std::string fork_bundle =
      f.db.compile(R"({"session_id":"s","max_tokens":100000,"branch_id":")" + branch + "\"}");
  CHECK(fork_bundle.find("abandoned") != std::string::npos);
  CHECK(fork_bundle.find("monkeypatch the clock") != std::string::npos);
  CHECK(f.db.compile(R"({"session_id":"s","max_tokens":100000})").find("abandoned") ==
        std::string::npos);
  // Nothing was abandoned when from_leaf is on to_event's path.
  CHECK(code_of([&] { f.db.branch_summarize("s", ask, leaf); }) == Code::kInvalidArg);
  CHECK(code_of([&] { f.db.branch_summarize("s", "evt_nope", ask); }) == Code::kNotFound);
  CHECK(field(f.db.rebuild(R"({"check":true})"), "identical") == "true");
  simdjson::dom::parser p;
  CHECK_NOTHROW(store::embedded_schema("json/branch_summary.schema.json")
                    .validate(json::parse(p, r.text, "output"), ""));
}

// Invariants 2, 3, 4 and 8 over random sessions, random cuts and chains of
// compactions; a compile after each keeps its bundle invariants.
TEST_CASE("random sessions compacted again and again keep the invariants") {
  int compacted = 0;
  for (uint32_t seed = 1; seed <= 12; ++seed) {
    std::mt19937 rng(seed);
    SessionFixture f;
    std::vector<std::string> open_calls;
    std::set<std::string> written;
    int calls = 0;
    for (int round = 0; round < 3; ++round) {
      int events = 15 + int(rng() % 40);
      for (int i = 0; i < events; ++i) {
        switch (rng() % 7) {
        case 0: f.add(prompt("prompt " + std::to_string(round) + "." + std::to_string(i))); break;
        case 1:
        case 2: {
          std::string id = "k" + std::to_string(calls++);
          f.add(call(id));
          open_calls.push_back(id);
          break;
        }
        case 3:
        case 4:
          if (!open_calls.empty()) {
            size_t k = rng() % open_calls.size();
            std::string id = open_calls[k];
            open_calls.erase(open_calls.begin() + long(k));
            f.add(rng() % 4 == 0 ? failed(id) : result(id, 1 + rng() % 60));
          }
          break;
        case 5: {
          std::string path = "f" + std::to_string(rng() % 9) + ".py";
          f.add(wrote(path));
          written.insert(path);
          break;
        }
        case 6: f.add(state_ops(R"({"op":"set_task","text":"task )" + std::to_string(i) + "\"}"));
        }
      }
      std::string before = export_all(f.db);
      std::string done;
      try {
        done = f.db.compact("s", keep(int64_t(rng() % 400)), nullptr);
      } catch (const Error &e) {
        // Only when the range holds no task to carry (no prompt, no set_task).
        INFO("seed " << seed << ": " << e.what());
        CHECK(e.code() == Code::kCheckFailed);
        CHECK(std::string(e.what()).find("current_task") != std::string::npos);
        continue;
      }
      INFO("seed " << seed << " round " << round << ": " << done);
      // 8: the log only grew.
      CHECK(export_all(f.db).starts_with(before));
      if (field(done, "status") != "compacted") continue;
      ++compacted;
      Json r(done);
      // 3: the range is named.
      CHECK(r.str({"summary", "provenance", "range", "from_event_id"}) != "");
      // 2: every call still running (the last turn's) is after the cut, so
      // the host answering it compiles it; the others are closed pairs.
      HostCompile host = compile_as_host(f.db, 1000000, "", open_calls);
      REQUIRE_FALSE(host.budget);
      std::string bundle = host.json;
      for (const std::string &c : host.given)
        CHECK(bundle.find(R"("id":")" + c + "\"") != std::string::npos);
      // 4: every file written is in a summary or in the state.
      std::string state = f.db.state("s", std::nullopt, std::nullopt);
      std::string summaries;
      Json list(f.db.compactions("s", std::nullopt));
      for (auto c : list.doc.get_array())
        summaries +=
            field(f.db.event_get(std::string(c["event_id"].get_string().value())), "payload");
      for (const std::string &path : written)
        CHECK((summaries.find(path) != std::string::npos || state.find(path) != std::string::npos));
      // The compiled context keeps every bundle invariant (no result
      // without its call, every segment explained, the budget adds up).
      Bundle b(bundle);
      check_bundle(b, host.continuation);
    }
    CHECK(field(f.db.rebuild(R"({"check":true})"), "identical") == "true");
  }
  CHECK(compacted >= 18); // most rounds compact: the test is not vacuous
  MESSAGE(compacted << " of 36 rounds compacted");
}

} // namespace compact_test
