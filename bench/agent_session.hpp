// agent_session.hpp — NDJSON of a coding agent's session for the benchmarks:
// turns of prompt, assistant message with a tool call, the call's start and
// result, a file read and write, and a state update. Files and facts repeat
// over 40 modules, so the state stays the same size however long the
// session runs and read costs compare across lengths. Every event is valid under
// the projections' rules (each result follows its call on the branch), so
// a benchmark exercises every projection, not a shortcut past them.
#pragma once

#include <cstddef>
#include <string>

namespace bench {

// The events of one turn.
inline constexpr size_t kTurnEvents = 8;

// Event i (0-based) of a session's history after its SessionStarted.
// `tag` keeps tool call ids apart between branches of one session.
inline std::string agent_event(size_t i, const std::string &tag = "") {
  static const std::string output = [] {
    std::string s;
    while (s.size() < 320) s += "tests/test_mod.py::test_case PASSED [ 42%]\\n";
    return s;
  }();
  size_t turn = i / kTurnEvents;
  std::string call = "call_" + tag + std::to_string(turn);
  std::string path = "src/module_" + std::to_string(turn % 40) + ".py";
  switch (i % kTurnEvents) {
  case 0:
    return R"({"type":"UserPromptSubmitted","actor":"user","payload":{"text":"Turn )" +
           std::to_string(turn) + R"(: make the failing test in tests/test_mod.py pass."}})";
  case 1:
    return R"({"type":"AssistantMessageCreated","actor":"assistant","payload":{"content":[)"
           R"({"type":"text","text":"Running the tests first."},{"type":"tool_call","id":")" +
           call +
           R"(","name":"bash","args":{"cmd":"pytest -q tests/test_mod.py"}}],"model":"m",)"
           R"("usage":{"input_tokens":1200,"output_tokens":40}}})";
  case 2:
    return R"({"type":"ToolCallStarted","actor":"tool","payload":{"tool_call_id":")" + call +
           R"("}})";
  case 3:
    return R"({"type":"ToolCallFinished","actor":"tool","payload":{"tool_call_id":")" + call +
           R"(","output":")" + output + R"(","duration_ms":850}})";
  case 4:
    return R"({"type":"FileRead","actor":"tool","payload":{"path":")" + path + R"("}})";
  case 5:
    return R"({"type":"FileWritten","actor":"tool","payload":{"path":")" + path +
           R"(","change_summary":"strip and casefold the email before lookup"}})";
  case 6:
    return R"({"type":"StateUpdated","actor":"assistant","payload":{"ops":[)"
           R"({"op":"set_task","text":"fix turn )" +
           std::to_string(turn) + R"("},{"op":"add_fact","content":"module_)" +
           std::to_string(turn % 40) + R"( reads emails case-sensitively","confidence":0.9}]}})";
  default:
    return R"({"type":"AssistantMessageCreated","actor":"assistant","payload":{"content":[)"
           R"({"type":"text","text":"The test passes now; moving on."}],"model":"m"}})";
  }
}

// Events first..first+count-1 as NDJSON.
inline std::string agent_events(size_t first, size_t count, const std::string &tag = "") {
  std::string out;
  for (size_t i = first; i < first + count; ++i) out += agent_event(i, tag) + "\n";
  return out;
}

} // namespace bench
