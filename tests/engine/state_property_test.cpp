// A property test of the state projection: random valid sessions (every
// core event type the state reads, StateUpdated ops, tool calls and their
// results, bulk batches, forks by parent_id and by BranchCreated), with a
// fixed list of seeds. For each it checks that
//   1. rebuild --check holds;
//   2. the state right after a sampled event equals the current state of a
//      fresh database holding only the events up to it (the export prefix,
//      imported), so time travel is exactly "the log up to there";
//   3. every file write on the event's path is in the modified files
//      (DESIGN §11 invariant 4), walking parent links the test recorded;
//   4. long paths have snapshot rows.
#include "engine.hpp"
#include "project/state.hpp"
#include "test_util.hpp"

#include <doctest/doctest.h>
#include <simdjson.h>

#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

namespace state_property_test {

using namespace ctxdb;

namespace {

struct Placed {
  std::string id, branch_id, parent_id, written; // written: the path of a file write
};

// What the generator needs to know of a state to write valid ops.
struct View {
  std::string leaf; // the event the new one follows
  int64_t plan_steps = 0;
  std::vector<std::string> open, pending;
};

View view_of(const std::string &doc) {
  simdjson::dom::parser p;
  simdjson::dom::element root = p.parse(doc), s = root["state"];
  View v;
  v.leaf = std::string(root["event_id"].get_string().value());
  v.plan_steps = int64_t(s["plan"]["steps"].get_array().size());
  for (simdjson::dom::element q : s["open_questions"].get_array())
    v.open.emplace_back(q["id"].get_string().value());
  for (simdjson::dom::element c : s["tool_state"]["pending"].get_array())
    v.pending.emplace_back(c["id"].get_string().value());
  return v;
}

class Generator {
public:
  Generator(Engine &db, uint64_t seed) : db_(db), rng_(seed) {}

  void run(int steps) {
    db_.session_create(R"({"id":"s","payload":{"agent_id":"a"}})");
    db_.session_create(R"({"id":"t","payload":{"agent_id":"a"}})");
    record(first_event());
    bulk("main", 300); // long enough for snapshots on main
    for (int i = 0; i < steps; ++i) step();
  }

  size_t branch_count() const { return branches_.size(); }
  std::vector<Placed> events;          // of session s, in append order
  std::map<std::string, size_t> by_id; // index into events

private:
  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  std::string n() { return std::to_string(++counter_); }

  Placed first_event() {
    int64_t cursor = 0;
    return parse(db_.events_page("s", cursor, 1, 1).at(0), "");
  }

  Placed parse(const std::string &json, const std::string &written) {
    simdjson::dom::parser p;
    simdjson::dom::element e = p.parse(json);
    Placed x;
    x.id = std::string(e["id"].get_string().value());
    x.branch_id = std::string(e["branch_id"].get_string().value());
    std::string_view parent;
    if (!e["parent_id"].get(parent)) x.parent_id = parent;
    x.written = written;
    return x;
  }

  void record(Placed x) {
    if (std::find(branches_.begin(), branches_.end(), x.branch_id) == branches_.end())
      branches_.push_back(x.branch_id);
    by_id[x.id] = events.size();
    events.push_back(std::move(x));
  }

  void step() {
    if (chance(0.03)) return bulk(branches_[size_t(pick(int(branches_.size())))], 20 + pick(200));
    if (chance(0.05)) db_.append("t", R"({"type":"Note","actor":"a","payload":{}})");
    std::string envelope, doc;
    if (chance(0.12)) {
      const Placed &parent = events[size_t(pick(int(events.size())))];
      doc = db_.state("s", std::nullopt, parent.id);
      if (chance(0.4)) {
        static const char *const kKinds[] = {"fork", "subagent", "what_if"};
        append(R"({"type":"BranchCreated","actor":"a","payload":{"fork_event_id":")" + parent.id +
                   R"(","kind":")" + kKinds[pick(3)] + R"("}})",
               "");
        return;
      }
      envelope = R"(,"parent_id":")" + parent.id + R"(")";
    } else {
      std::string branch = branches_[size_t(pick(int(branches_.size())))];
      doc = db_.state("s", branch, std::nullopt);
      envelope = R"(,"branch_id":")" + branch + R"(")";
    }
    auto [type, payload, written] = random_event(view_of(doc));
    append(R"({"type":")" + type + R"(","actor":"a","payload":)" + payload + envelope + "}",
           written);
  }

  void append(const std::string &json, const std::string &written) {
    record(parse(db_.append("s", json), written));
  }

  // Events whose validity does not depend on the state, as one batch.
  void bulk(const std::string &branch, int count) {
    std::string batch;
    std::vector<std::string> written;
    for (int i = 0; i < count; ++i) {
      std::string path = "bulk" + std::to_string(pick(50)) + ".c";
      int kind = pick(4);
      written.push_back(kind == 0 ? path : "");
      std::string payload = kind == 0   ? R"({"path":")" + path + R"("})"
                            : kind == 1 ? R"({"text":"p)" + n() + R"("})"
                            : kind == 2
                                ? R"({"ops":[{"op":"add_fact","content":"f)" + n() + R"("}]})"
                                : "{}";
      static const char *const kTypes[] = {"FileWritten", "UserPromptSubmitted", "StateUpdated",
                                           "Note"};
      batch += R"({"type":")" + std::string(kTypes[kind]) + R"(","actor":"a","payload":)" +
               payload + R"(,"branch_id":")" + branch + R"("})" + "\n";
    }
    db_.append_batch("s", batch);
    int64_t cursor = int64_t(events.size()); // seqs are gapless: the last seq of s
    std::vector<std::string> rows = db_.events_page("s", cursor, -1, count);
    REQUIRE(rows.size() == size_t(count));
    for (size_t i = 0; i < rows.size(); ++i) record(parse(rows[i], written[i]));
  }

  std::string ops(View v) {
    std::string out;
    int count = 1 + pick(3);
    for (int i = 0; i < count; ++i) {
      if (!out.empty()) out += ",";
      switch (pick(9)) {
      case 0: out += R"({"op":"set_goal","text":"g)" + n() + R"("})"; break;
      case 1: out += R"({"op":"set_task","text":"t)" + n() + R"("})"; break;
      case 2: out += R"({"op":"add_acceptance_criterion","text":"c)" + n() + R"("})"; break;
      case 3: {
        int steps = pick(4);
        out += R"({"op":"set_plan","steps":[)";
        for (int k = 0; k < steps; ++k) out += (k ? ",\"s" : "\"s") + n() + "\"";
        out += "]}";
        v.plan_steps = steps;
        break;
      }
      case 4:
        if (v.plan_steps == 0) {
          out += R"({"op":"set_task","text":"no plan"})";
        } else {
          static const char *const kStatus[] = {"pending", "in_progress", "done", "skipped",
                                                "blocked"};
          out += R"({"op":"set_step","step":)" + std::to_string(pick(int(v.plan_steps))) +
                 R"(,"status":")" + kStatus[pick(5)] + R"("})";
        }
        break;
      case 5: {
        static const char *const kKinds[] = {"hard", "soft", "preference"};
        out += R"({"op":"add_constraint","text":"k)" + std::to_string(pick(5)) + R"(","kind":")" +
               kKinds[pick(3)] + R"("})";
        break;
      }
      case 6: {
        static const char *const kConf[] = {"0", "0.25", "0.5", "1"};
        out += R"({"op":"add_fact","content":"f)" + n() + R"(","confidence":)" + kConf[pick(4)] +
               R"(,"source_refs":["r"]})";
        break;
      }
      case 7: {
        std::string id = "q" + n();
        out += R"({"op":"open_question","text":"?","id":")" + id + R"("})";
        v.open.push_back(id);
        break;
      }
      default:
        if (v.open.empty()) {
          out += R"({"op":"open_question","text":"anonymous?"})";
        } else {
          size_t k = size_t(pick(int(v.open.size())));
          out += R"({"op":"resolve_question","id":")" + v.open[k] + R"(","answer":"a"})";
          v.open.erase(v.open.begin() + ptrdiff_t(k));
        }
      }
    }
    return R"({"ops":[)" + out + "]}";
  }

  std::tuple<std::string, std::string, std::string> random_event(const View &v) {
    std::string path = "f" + std::to_string(pick(8)) + ".c";
    std::string call = v.pending.empty() ? "" : v.pending[size_t(pick(int(v.pending.size())))];
    switch (pick(12)) {
    case 0:
      return {"UserPromptSubmitted", R"({"text":"p)" + n() + R"(","acceptance_criteria":["c1"]})",
              ""};
    case 1:
    case 2: return {"StateUpdated", ops(v), ""};
    case 3:
      return {"DecisionRecorded",
              R"({"decision":"d)" + n() + R"(","alternatives":["x",1],"evidence_refs":["e"]})", ""};
    case 4: return {"FileRead", R"({"path":")" + path + R"("})", ""};
    case 5: return {"FileWritten", R"({"path":")" + path + R"(","change_summary":"w"})", path};
    case 6: return {"DiffApplied", R"({"path":")" + path + R"("})", path};
    case 7: {
      std::string a = "c" + n(), b = "c" + n();
      return {"AssistantMessageCreated",
              R"({"content":[{"type":"text","text":"ok"},{"type":"tool_call","id":")" + a +
                  R"(","name":"sh"},{"type":"tool_call","id":")" + b +
                  R"(","name":"grep"}],"usage":{"input_tokens":10,"output_tokens":3}})",
              ""};
    }
    case 8:
      if (call.empty()) break;
      return {chance(0.5) ? "ToolCallFinished" : "ToolCallStarted",
              R"({"tool_call_id":")" + call + R"(","output":"o","is_error":)" +
                  (chance(0.3) ? "true" : "false") + R"(,"duration_ms":5})",
              ""};
    case 9:
      if (call.empty()) break;
      return {"ToolCallFailed",
              R"({"tool_call_id":")" + call + R"(","error":"e","retryable":)" +
                  (chance(0.5) ? "true" : "false") + "}",
              ""};
    case 10: {
      if (call.empty()) break;
      static const char *const kTypes[] = {"ApprovalRequested", "ApprovalGranted",
                                           "ApprovalDenied"};
      return {kTypes[pick(3)], R"({"tool_call_id":")" + call + R"("})", ""};
    }
    default:
      // Keeps from the event it follows: an earlier event on its path.
      return {"CompactionCompleted",
              R"({"summary":"s","first_kept_event_id":")" + v.leaf +
                  R"(","tokens_before":100,"tokens_after":20})",
              ""};
    }
    return {"Note", "{}", ""};
  }

  Engine &db_;
  std::mt19937_64 rng_;
  std::vector<std::string> branches_;
  int counter_ = 0;
};

std::vector<std::string> export_lines(Engine &db) {
  std::vector<std::string> out;
  int64_t cursor = 0;
  for (;;) {
    auto rows = db.events_page(std::nullopt, cursor, -1, 1000);
    out.insert(out.end(), rows.begin(), rows.end());
    if (rows.size() < 1000) return out;
  }
}

std::set<std::string> modified_files(const std::string &doc) {
  simdjson::dom::parser p;
  simdjson::dom::element root = p.parse(doc);
  simdjson::dom::array files = root["state"]["files"]["modified"].get_array();
  std::set<std::string> out;
  for (simdjson::dom::element f : files) out.emplace(f["path"].get_string().value());
  return out;
}

} // namespace

TEST_CASE("state property: time travel equals the log up to there, on every branch") {
  for (uint64_t seed : {1u, 2u, 3u, 5u, 8u, 13u}) {
    CAPTURE(seed);
    test::TempDir dir;
    std::string path = dir.file("a.ctxdb");
    Engine db(path, "");
    Generator gen(db, seed);
    gen.run(400);
    CHECK(gen.branch_count() >= 5); // the seeds do fork

    // 1. rebuild --check.
    CHECK(db.rebuild(R"({"check":true})").find(R"("identical":true)") != std::string::npos);

    // 4. snapshots exist: main alone has well over kSnapshotEvery events.
    {
      store::Store s(path, store::Config{});
      CHECK(s.db().execAndGet("SELECT COUNT(*) FROM state_snapshots").getInt64() > 0);
    }

    std::vector<std::string> lines = export_lines(db);
    std::mt19937_64 rng(seed * 7919);
    for (int sample = 0; sample < 12; ++sample) {
      const Placed &e =
          gen.events[std::uniform_int_distribution<size_t>(0, gen.events.size() - 1)(rng)];
      CAPTURE(e.id);
      std::string travelled = db.state("s", std::nullopt, e.id);

      // 2. A fresh file with the export up to e.
      std::string prefix;
      for (const std::string &line : lines) {
        prefix += line + "\n";
        if (line.find(R"("id":")" + e.id + R"(")") != std::string::npos) break;
      }
      test::TempDir fresh_dir;
      Engine fresh(fresh_dir.file("b.ctxdb"), "");
      fresh.import(prefix);
      CHECK(fresh.state("s", e.branch_id, std::nullopt) == travelled);

      // 3. Invariant 4 along the recorded parent links.
      std::set<std::string> modified = modified_files(travelled);
      for (const Placed *x = &e; x;) {
        if (!x->written.empty()) CHECK(modified.count(x->written) == 1);
        auto parent = gen.by_id.find(x->parent_id);
        x = parent == gen.by_id.end() ? nullptr : &gen.events[parent->second];
      }
    }
  }
}

} // namespace state_property_test
