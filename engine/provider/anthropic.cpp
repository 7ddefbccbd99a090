// anthropic.messages: a Message, or the events of its stream accumulated
// as anthropic-sdk-typescript's MessageStream does (src/lib/MessageStream.ts,
// #accumulateMessage): message_start gives the message, content_block_start
// adds a block at its index, content_block_delta appends text_delta,
// input_json_delta (the tool input's JSON text, parsed at the end),
// thinking_delta and sets signature_delta, message_delta sets stop_reason
// and overwrites the usage counters it carries (cumulative totals), and
// message_stop ends it. Anything before message_start, or a stream without
// message_stop, is an error naming what is missing.
// Shapes: https://docs.anthropic.com/en/api/messages and
// https://docs.anthropic.com/en/docs/build-with-claude/streaming
#include "error.hpp"
#include "provider/formats.hpp"
#include "json/json_writer.hpp"
#include "json/parse.hpp"

namespace ctxdb::provider {

namespace {

using simdjson::dom::element;

constexpr std::string_view kWhat = "anthropic.messages response";
constexpr std::string_view kStream = "anthropic.messages stream";

// input_tokens exclude the cache: cache_read_input_tokens and
// cache_creation_input_tokens are counted apart; thinking is in
// output_tokens, and its part is output_tokens_details.thinking_tokens
// where the API reports it (0 otherwise).
// https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching#tracking-cache-performance
Usage anthropic_usage(std::string_view what, element u) {
  Usage r;
  r.input = count(what, u, "input_tokens", "usage");
  r.cache_read = count(what, u, "cache_read_input_tokens", "usage");
  r.cache_write = count(what, u, "cache_creation_input_tokens", "usage");
  r.output = count(what, u, "output_tokens", "usage");
  if (auto d = field(u, "output_tokens_details"))
    r.reasoning = count(what, *d, "thinking_tokens", "usage.output_tokens_details");
  r.provider = json::canonical(u);
  return r;
}

// One content block; false for a type that is not recorded (server tool
// blocks and the like).
bool read_block(std::string_view what, element c, const std::string &path, Block &b) {
  std::string_view type = need_string(what, c, "type", path);
  if (type == "text") {
    b.kind = Block::kText;
    b.text = std::string(need_string(what, c, "text", path));
  } else if (type == "tool_use") {
    b.kind = Block::kToolCall;
    b.id = std::string(need_string(what, c, "id", path));
    b.name = std::string(need_string(what, c, "name", path));
    b.args = json::canonical(need_object(what, c, "input", path));
  } else if (type == "thinking") {
    b.kind = Block::kThinking;
    b.text = std::string(need_string(what, c, "thinking", path));
    b.signature = std::string(opt_string(what, c, "signature", path).value_or(""));
  } else if (type == "redacted_thinking") {
    b.kind = Block::kRedactedThinking;
    b.data = std::string(need_string(what, c, "data", path));
  } else {
    return false;
  }
  return true;
}

void message_header(std::string_view what, element m, Answer &a) {
  a.family = "anthropic";
  a.response_id = std::string(need_string(what, m, "id", ""));
  a.model = std::string(opt_string(what, m, "model", "").value_or(""));
  if (auto s = opt_string(what, m, "stop_reason", "")) a.stop_reason = std::string(*s);
}

} // namespace

Answer anthropic_message(element r) {
  Answer a;
  message_header(kWhat, r, a);
  simdjson::dom::array content = need_array(kWhat, r, "content", "");
  size_t i = 0;
  for (element c : content) {
    Block b;
    if (read_block(kWhat, c, index_path("content", i++), b)) a.blocks.push_back(std::move(b));
  }
  if (auto u = field(r, "usage")) a.usage = anthropic_usage(kWhat, *u);
  return a;
}

namespace {

struct StreamBlock {
  Block block;
  bool recorded = false; // a type read_block keeps
  bool has_json = false; // input_json_delta arrived: input is json, not the start's
  std::string json;
};

// The usage of message_start with message_delta's non-null counters
// written over it, as one object (provider_usage).
std::string merged_usage(const std::string &start, const std::string &delta) {
  if (delta.empty()) return start;
  simdjson::dom::parser p1, p2;
  element s = p1.parse(start).value(), d = p2.parse(delta).value();
  simdjson::dom::object so = s.get_object().value(), dobj = d.get_object().value();
  json::JsonWriter w;
  w.begin_object();
  for (auto [key, value] : so) {
    auto over = field(d, key);
    w.key(key).element(over ? *over : value);
  }
  for (auto [key, value] : dobj)
    if (!value.is_null() && !field(s, key)) w.key(key).element(value);
  w.end_object();
  return w.take();
}

struct MessageSnapshot {
  std::optional<Answer> answer; // from message_start
  std::vector<StreamBlock> blocks;
  std::string start_usage, delta_usage;
  bool stopped = false;

  void add(element event, const std::string &where) {
    std::string_view type = need_string(where, event, "type", "");
    if (type == "ping") return;
    if (type == "error") {
      std::string message = "no message";
      if (auto e = field(event, "error"))
        if (auto m = opt_string(where, *e, "message", "error")) message = std::string(*m);
      throw Error(Code::kInvalidArg, where + ": the provider reported an error: " + message);
    }
    if (type == "message_start") {
      if (answer) throw Error(Code::kInvalidArg, where + ": a second message_start");
      element m = need_object(where, event, "message", "");
      answer.emplace();
      message_header(where + " message", m, *answer);
      if (auto u = field(m, "usage")) start_usage = json::canonical(*u);
      if (auto content = opt_array(where, m, "content", "message")) {
        size_t i = 0;
        for (element c : *content) start_block(where, c, index_path("message.content", i++));
      }
      return;
    }
    if (!answer)
      throw Error(Code::kInvalidArg, where + ": " + std::string(type) +
                                         " before message_start (message_start is missing)");
    if (type == "content_block_start") {
      size_t index = size_t(count(where, event, "index", ""));
      if (index != blocks.size())
        throw Error(Code::kInvalidArg, where + ": content_block_start index " +
                                           std::to_string(index) + " where " +
                                           std::to_string(blocks.size()) + " was expected");
      start_block(where, need_object(where, event, "content_block", ""), "content_block");
    } else if (type == "content_block_delta") {
      delta(where, event);
    } else if (type == "message_delta") {
      element d = need_object(where, event, "delta", "");
      if (auto s = opt_string(where, d, "stop_reason", "delta"))
        answer->stop_reason = std::string(*s);
      if (auto u = field(event, "usage")) delta_usage = json::canonical(*u);
    } else if (type == "message_stop") {
      stopped = true;
    }
  }

  void start_block(const std::string &where, element c, const std::string &path) {
    StreamBlock sb;
    sb.recorded = read_block(where, c, path, sb.block);
    blocks.push_back(std::move(sb));
  }

  void delta(const std::string &where, element event) {
    size_t index = size_t(count(where, event, "index", ""));
    if (index >= blocks.size())
      throw Error(Code::kInvalidArg, where + ": content_block_delta for index " +
                                         std::to_string(index) + " before its content_block_start");
    StreamBlock &sb = blocks[index];
    element d = need_object(where, event, "delta", "");
    std::string_view type = need_string(where, d, "type", "delta");
    if (type == "text_delta")
      sb.block.text += need_string(where, d, "text", "delta");
    else if (type == "thinking_delta")
      sb.block.text += need_string(where, d, "thinking", "delta");
    else if (type == "signature_delta")
      sb.block.signature = std::string(need_string(where, d, "signature", "delta"));
    else if (type == "input_json_delta") {
      sb.json += need_string(where, d, "partial_json", "delta");
      sb.has_json = true;
    }
  }

  Answer finish() {
    if (!answer) throw Error(Code::kInvalidArg, std::string(kStream) + ": no message_start event");
    if (!stopped)
      throw Error(Code::kInvalidArg,
                  std::string(kStream) +
                      ": no message_stop event: the stream ended before the message did");
    Answer a = std::move(*answer);
    for (StreamBlock &sb : blocks) {
      if (!sb.recorded) continue;
      // The input streams as JSON text; none streamed is the start's ({}).
      if (sb.block.kind == Block::kToolCall && sb.has_json)
        sb.block.args = sb.json.empty() ? "{}" : arguments_json(sb.json);
      a.blocks.push_back(std::move(sb.block));
    }
    if (!start_usage.empty() || !delta_usage.empty()) {
      std::string u = merged_usage(start_usage.empty() ? "{}" : start_usage, delta_usage);
      simdjson::dom::parser parser;
      a.usage = anthropic_usage(kStream, parser.parse(u).value());
    }
    return a;
  }
};

} // namespace

Answer anthropic_stream(std::string_view ndjson) {
  MessageSnapshot s;
  for_each_event(kStream, ndjson, [&](element event, int64_t line) {
    s.add(event, std::string(kStream) + " line " + std::to_string(line));
  });
  return s.finish();
}

} // namespace ctxdb::provider
