#include "compile/request.hpp"

#include "error.hpp"
#include "store/store.hpp"
#include "json/parse.hpp"

#include <simdjson.h>

#include <chrono>

namespace ctxdb::compile {

namespace {

using simdjson::dom::element;

std::optional<std::string> optional_string(element o, const char *key) {
  std::string_view v;
  if (o[key].get(v)) return std::nullopt;
  return std::string(v);
}

template <class T> void read(element o, const char *key, T &out) {
  T v;
  if (!o[key].get(v)) out = v;
}

void read_instructions(element doc, Request &r) {
  simdjson::dom::array list;
  if (doc["instructions"].get(list)) return;
  for (element item : list) {
    Instruction in;
    in.kind = std::string(item["kind"].get_string().value());
    in.text = std::string(item["text"].get_string().value());
    in.id =
        optional_string(item, "id").value_or(in.kind + "-" + std::to_string(r.instructions.size()));
    for (const Instruction &prior : r.instructions)
      if (prior.id == in.id)
        throw Error(Code::kInvalidArg,
                    "instructions: two instructions have the id '" + in.id + "'");
    r.instructions.push_back(std::move(in));
  }
}

void read_policy(element doc, Request &r) {
  element policy;
  if (doc["policy"].get(policy)) return;
  simdjson::dom::array rules;
  if (!policy["redact"].get(rules))
    for (element rule : rules)
      r.redact.push_back({std::string(rule["name"].get_string().value()),
                          std::string(rule["pattern"].get_string().value()),
                          optional_string(rule, "replacement").value_or("")});
  read(policy, "builtin_redaction", r.builtin_redaction);
  r.drop_interrupted = optional_string(policy, "interrupted_calls") == "drop";
  read(policy, "allow_sensitive", r.allow_sensitive);
  element shares, prune;
  if (!policy["shares"].get(shares)) {
    read(shares, "tail", r.tail_share);
    read(shares, "memories", r.memories_share);
  }
  if (!policy["prune"].get(prune)) {
    read(prune, "keep_recent_turns", r.keep_recent_turns);
    read(prune, "min_tokens", r.prune_min_tokens);
    read(prune, "preview_bytes", r.prune_preview_bytes);
  }
}

void read_tool_results(element doc, Request &r) {
  simdjson::dom::array list;
  if (doc["tool_results"].get(list)) return;
  for (element item : list) {
    ToolResultInput t;
    t.tool_call_id = std::string(item["tool_call_id"].get_string().value());
    for (const ToolResultInput &prior : r.tool_results)
      if (prior.tool_call_id == t.tool_call_id)
        throw Error(Code::kInvalidArg,
                    "tool_results: two results answer the call '" + t.tool_call_id + "'");
    t.name = optional_string(item, "name");
    t.output = optional_string(item, "output");
    t.error = optional_string(item, "error");
    read(item, "is_error", t.is_error);
    r.tool_results.push_back(std::move(t));
  }
}

void read_memory(element doc, Request &r) {
  element m;
  if (doc["memory"].get(m)) return;
  MemoryRequest mr;
  size_t i = 0;
  for (element scope : m["scopes"].get_array()) {
    std::string at = "memory.scopes[" + std::to_string(i++) + "]: ";
    std::string name(scope["scope"].get_string().value());
    std::optional<std::string> id = optional_string(scope, "scope_id");
    if (name == "global" && id)
      throw Error(Code::kInvalidArg, at + "the global scope has no scope_id");
    // A session's memories are read in that session only (README, Memories).
    if (name == "session" && !id) id = r.session_id;
    if (name == "session" && *id != r.session_id)
      throw Error(Code::kInvalidArg, at + "a session scope names the session compiled ('" +
                                         r.session_id + "'), not '" + *id +
                                         "': a session's memories are read in it only");
    if (name != "global" && !id)
      throw Error(Code::kInvalidArg, at + "a '" + name + "' scope needs a scope_id");
    mr.scopes.emplace_back(std::move(name), id.value_or(""));
  }
  mr.agent = optional_string(m, "agent");
  mr.query = optional_string(m, "query");
  read(m, "limit", mr.limit);
  if (m["now"].get(mr.now))
    mr.now = std::chrono::duration_cast<std::chrono::milliseconds>(
                 std::chrono::system_clock::now().time_since_epoch())
                 .count();
  r.memory = std::move(mr);
}

} // namespace

Request parse_request(std::string_view json) {
  simdjson::dom::parser parser;
  element doc = json::parse(parser, json, "compile request");
  store::embedded_schema("json/compile_request.schema.json").validate(doc, "");
  Request r;
  r.session_id = std::string(doc["session_id"].get_string().value());
  r.branch = optional_string(doc, "branch_id");
  r.leaf_event_id = optional_string(doc, "leaf_event_id");
  if (r.branch && r.leaf_event_id)
    throw Error(Code::kInvalidArg, "branch_id and leaf_event_id exclude each other");
  r.max_tokens = doc["max_tokens"].get_int64().value();
  read(doc, "reserved_output_tokens", r.reserved_output_tokens);
  if (r.reserved_output_tokens >= r.max_tokens)
    throw Error(Code::kInvalidArg,
                "reserved_output_tokens (" + std::to_string(r.reserved_output_tokens) +
                    ") leaves nothing of max_tokens (" + std::to_string(r.max_tokens) + ")");
  r.request = optional_string(doc, "request");
  read_tool_results(doc, r);
  read(doc, "continuation", r.continuation);
  read_instructions(doc, r);
  element tools;
  if (!doc["tools"].get(tools) && tools.get_array().size() > 0)
    r.tools_json = json::canonical(tools);
  read_policy(doc, r);
  read_memory(doc, r);
  r.token_counter = optional_string(doc, "token_counter");
  r.model = optional_string(doc, "model");
  if (auto format = optional_string(doc, "format")) r.format = *format;
  read(doc, "record", r.record);
  return r;
}

} // namespace ctxdb::compile
