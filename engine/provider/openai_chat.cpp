// openai.chat: a ChatCompletion, or the ChatCompletionChunks of its stream
// accumulated as openai-node's ChatCompletionStream does
// (src/lib/ChatCompletionStream.ts, #accumulateChatCompletion): content and
// refusal deltas appended, tool calls built by their index (id and type as
// they come, name set, arguments appended), the usage taken from the chunk
// that carries it (the last one, with stream_options.include_usage), and a
// choice without a finish_reason or a role is an incomplete stream.
// Shapes: https://platform.openai.com/docs/api-reference/chat/object and
// https://platform.openai.com/docs/api-reference/chat-streaming/streaming
// Only the first choice (index 0) is recorded.
#include "error.hpp"
#include "provider/formats.hpp"
#include "json/json_writer.hpp"
#include "json/parse.hpp"

#include <map>

namespace ctxdb::provider {

namespace {

using simdjson::dom::element;

constexpr std::string_view kWhat = "openai.chat response";
constexpr std::string_view kStream = "openai.chat stream";

// prompt_tokens include prompt_tokens_details.cached_tokens;
// completion_tokens include completion_tokens_details.reasoning_tokens.
// https://platform.openai.com/docs/api-reference/chat/object#chat/object-usage
Usage chat_usage(std::string_view what, element u) {
  return openai_usage(what, u, "prompt_tokens", "completion_tokens");
}

void add_text(Answer &a, Block::Kind kind, std::string_view text) {
  if (text.empty()) return;
  Block b;
  b.kind = kind;
  b.text = std::string(text);
  a.blocks.push_back(std::move(b));
}

Block tool_call(std::string_view what, element call, const std::string &path) {
  Block b;
  b.kind = Block::kToolCall;
  b.id = std::string(need_string(what, call, "id", path));
  // A custom tool's input is free text; a function's arguments are JSON.
  if (auto custom = field(call, "custom")) {
    std::string p = join_path(path, "custom");
    b.name = std::string(need_string(what, *custom, "name", p));
    // Free text stays a string even when it reads as an object.
    json::append_quoted(b.args, need_string(what, *custom, "input", p));
    return b;
  }
  std::string p = join_path(path, "function");
  element fn = need_object(what, call, "function", path);
  b.name = std::string(need_string(what, fn, "name", p));
  b.args = arguments_json(need_string(what, fn, "arguments", p));
  return b;
}

} // namespace

Answer openai_chat(element r) {
  Answer a;
  a.family = "openai";
  a.response_id = std::string(need_string(kWhat, r, "id", ""));
  a.model = std::string(opt_string(kWhat, r, "model", "").value_or(""));
  simdjson::dom::array choices = need_array(kWhat, r, "choices", "");
  element choice;
  if (choices.at(0).get(choice)) missing(kWhat, "choices[0]");
  element message = need_object(kWhat, choice, "message", "choices[0]");
  if (auto f = opt_string(kWhat, choice, "finish_reason", "choices[0]"))
    a.stop_reason = std::string(*f);
  if (auto c = opt_string(kWhat, message, "content", "choices[0].message"))
    add_text(a, Block::kText, *c);
  if (auto c = opt_string(kWhat, message, "refusal", "choices[0].message"))
    add_text(a, Block::kRefusal, *c);
  if (auto calls = opt_array(kWhat, message, "tool_calls", "choices[0].message")) {
    size_t i = 0;
    for (element call : *calls)
      a.blocks.push_back(tool_call(kWhat, call, index_path("choices[0].message.tool_calls", i++)));
  }
  if (auto u = field(r, "usage")) a.usage = chat_usage(kWhat, *u);
  return a;
}

namespace {

struct ChatCall {
  std::string id, name, arguments;
  bool custom = false;
};

// The first choice as the chunks build it.
struct ChatSnapshot {
  bool any = false;
  std::string id, model, role, content, refusal;
  std::optional<std::string> finish_reason;
  std::map<int64_t, ChatCall> calls; // by the deltas' index
  std::optional<std::string> usage;  // canonical JSON

  void add(element chunk, const std::string &where) {
    any = true;
    if (auto id_ = opt_string(where, chunk, "id", "")) id = std::string(*id_);
    if (auto m = opt_string(where, chunk, "model", "")) model = std::string(*m);
    if (auto u = field(chunk, "usage")) usage = json::canonical(*u);
    auto choices = opt_array(where, chunk, "choices", "");
    if (!choices) return;
    size_t i = 0;
    for (element choice : *choices) {
      std::string path = index_path("choices", i++);
      if (count(where, choice, "index", path) != 0) continue;
      if (auto f = opt_string(where, choice, "finish_reason", path))
        finish_reason = std::string(*f);
      if (auto delta = field(choice, "delta")) add_delta(where, *delta, join_path(path, "delta"));
    }
  }

  void add_delta(const std::string &where, element delta, const std::string &path) {
    if (auto r = opt_string(where, delta, "role", path)) role = std::string(*r);
    if (auto c = opt_string(where, delta, "content", path)) content += *c;
    if (auto c = opt_string(where, delta, "refusal", path)) refusal += *c;
    auto calls_ = opt_array(where, delta, "tool_calls", path);
    if (!calls_) return;
    size_t i = 0;
    for (element d : *calls_) {
      std::string p = index_path(join_path(path, "tool_calls"), i++);
      if (!field(d, "index")) missing(where, join_path(p, "index"));
      ChatCall &c = calls[count(where, d, "index", p)];
      if (auto id_ = opt_string(where, d, "id", p); id_ && !id_->empty()) c.id = std::string(*id_);
      if (auto fn = field(d, "function")) {
        std::string fp = join_path(p, "function");
        if (auto n = opt_string(where, *fn, "name", fp); n && !n->empty()) c.name = std::string(*n);
        if (auto args = opt_string(where, *fn, "arguments", fp)) c.arguments += *args;
      }
      if (auto custom = field(d, "custom")) {
        c.custom = true;
        std::string cp = join_path(p, "custom");
        if (auto n = opt_string(where, *custom, "name", cp); n && !n->empty())
          c.name = std::string(*n);
        if (auto in = opt_string(where, *custom, "input", cp)) c.arguments += *in;
      }
    }
  }

  Answer finish() {
    if (!any) throw Error(Code::kInvalidArg, std::string(kStream) + ": the stream has no chunks");
    auto incomplete = [](const std::string &field_) {
      throw Error(Code::kInvalidArg, std::string(kStream) + ": " + field_ +
                                         " is missing (the stream ended before its last chunk)");
    };
    if (id.empty()) incomplete("id");
    if (!finish_reason) incomplete("choices[0].finish_reason");
    if (role.empty()) incomplete("choices[0].delta.role");
    Answer a;
    a.family = "openai";
    a.response_id = id;
    a.model = model;
    a.stop_reason = finish_reason;
    add_text(a, Block::kText, content);
    add_text(a, Block::kRefusal, refusal);
    for (auto &[index, c] : calls) {
      std::string p = index_path("choices[0].tool_calls", size_t(index));
      if (c.id.empty()) incomplete(join_path(p, "id"));
      if (c.name.empty()) incomplete(join_path(p, c.custom ? "custom.name" : "function.name"));
      Block b;
      b.kind = Block::kToolCall;
      b.id = c.id;
      b.name = c.name;
      if (c.custom)
        json::append_quoted(b.args, c.arguments);
      else
        b.args = arguments_json(c.arguments);
      a.blocks.push_back(std::move(b));
    }
    if (usage) {
      simdjson::dom::parser parser;
      a.usage = chat_usage(kStream, parser.parse(*usage).value());
    }
    return a;
  }
};

} // namespace

Answer openai_chat_stream(std::string_view ndjson) {
  ChatSnapshot s;
  for_each_event(kStream, ndjson, [&](element chunk, int64_t line) {
    s.add(chunk, std::string(kStream) + " line " + std::to_string(line));
  });
  return s.finish();
}

} // namespace ctxdb::provider
