// request.hpp — a compile request (schema/json/compile_request.schema.json)
// parsed, checked and given its defaults, so the passes read plain fields.
#pragma once

#include "policy/redactor.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ctxdb::compile {

struct Instruction {
  std::string kind; // system | developer | project
  std::string text;
  std::string id; // names the segment: given, or <kind>-<position>
};

// Which memories to retrieve into the bundle (memory/retrieve.hpp).
struct MemoryRequest {
  std::vector<std::pair<std::string, std::string>> scopes; // (scope, scope id)
  std::optional<std::string> agent;
  std::optional<std::string> query; // default: the request and the goal
  int64_t limit = 20;
  int64_t now = 0; // ms; the clock when the request gives none
};

// A tool result the host has and has not appended (request.tool_results).
struct ToolResultInput {
  std::string tool_call_id;
  std::optional<std::string> name, output, error;
  bool is_error = false;
};

struct Request {
  std::string session_id;
  std::optional<std::string> branch;        // id or unique name; main when none
  std::optional<std::string> leaf_event_id; // compile as of this event
  int64_t max_tokens = 0;
  int64_t reserved_output_tokens = 0;
  std::optional<std::string> request; // the current request, when not in the log
  std::vector<ToolResultInput> tool_results;
  bool continuation = false;     // the model continues its own finished answer
  bool drop_interrupted = false; // policy.interrupted_calls "drop" (else "close")
  std::vector<Instruction> instructions;
  std::string tools_json; // the tool specs as a compact JSON array; empty: none
  std::vector<policy::RedactionRule> redact;
  bool builtin_redaction = true;
  bool allow_sensitive = false;
  double tail_share = 1.0;
  double memories_share = 0.1;
  std::optional<MemoryRequest> memory;
  std::optional<std::string> token_counter; // another counter than the handle's
  // The model the bundle is for: its calibration (project::Stats) shrinks
  // the available tokens when the counter counts fewer than it reads.
  std::optional<std::string> model;
  int64_t keep_recent_turns = 2; // turns whose tool outputs enter whole
  int64_t prune_min_tokens = 500;
  int64_t prune_preview_bytes = 800;
  std::string format = "canonical";
  bool record = false;

  int64_t available() const { return max_tokens - reserved_output_tokens; }
};

// Parses a request: kInvalidJson when it is not JSON, kInvalidArg when it
// does not match its schema (the message names the field) or when its
// fields contradict each other.
Request parse_request(std::string_view json);

} // namespace ctxdb::compile
