// openai.responses: a Response object, or the events of its stream.
// Shapes: https://platform.openai.com/docs/api-reference/responses/object
// and https://platform.openai.com/docs/api-reference/responses-streaming
//
// A stream is read for its terminal event: response.completed (or
// response.incomplete, a response cut short, e.g. by max_output_tokens)
// carries the whole response, which is what openai-node's ResponseStream
// ends on too (src/lib/responses/ResponseStream.ts). The SDK also accepts
// a stream that stops without one, from the snapshot its deltas built; a
// captured file that stops early cannot be told from a cut one, so here it
// is an error naming the missing event, and nothing is recorded.
// response.failed and error events are errors with the provider's message.
#include "error.hpp"
#include "provider/formats.hpp"
#include "json/json_writer.hpp"
#include "json/parse.hpp"

namespace ctxdb::provider {

namespace {

using simdjson::dom::element;

constexpr std::string_view kStream = "openai.responses stream";

// input_tokens include input_tokens_details.cached_tokens; output_tokens
// include output_tokens_details.reasoning_tokens.
// https://platform.openai.com/docs/api-reference/responses/object#responses/object-usage
Usage responses_usage(std::string_view what, element u) {
  return openai_usage(what, u, "input_tokens", "output_tokens");
}

void message_item(std::string_view what, element item, const std::string &path, Answer &a) {
  auto parts = opt_array(what, item, "content", path);
  if (!parts) return;
  size_t i = 0;
  for (element part : *parts) {
    std::string p = index_path(join_path(path, "content"), i++);
    std::string_view type = need_string(what, part, "type", p);
    Block b;
    if (type == "output_text") {
      b.text = std::string(need_string(what, part, "text", p));
    } else if (type == "refusal") {
      b.kind = Block::kRefusal;
      b.text = std::string(need_string(what, part, "refusal", p));
    } else {
      continue;
    }
    if (!b.text.empty()) a.blocks.push_back(std::move(b));
  }
}

Block function_call_item(std::string_view what, element item, const std::string &path) {
  Block b;
  b.kind = Block::kToolCall;
  // call_id is what the function_call_output answers.
  b.id = std::string(need_string(what, item, "call_id", path));
  b.name = std::string(need_string(what, item, "name", path));
  b.args = arguments_json(need_string(what, item, "arguments", path));
  return b;
}

// Replayed by id with its summary and encrypted_content
// (https://platform.openai.com/docs/guides/reasoning#keeping-reasoning-items-in-context).
Block reasoning_item(std::string_view what, element item, const std::string &path) {
  Block b;
  b.kind = Block::kThinking;
  b.id = std::string(need_string(what, item, "id", path));
  if (auto summary = opt_array(what, item, "summary", path)) {
    size_t i = 0;
    for (element s : *summary) {
      std::string p = index_path(join_path(path, "summary"), i++);
      b.summary.emplace_back(need_string(what, s, "text", p));
    }
  }
  for (const std::string &s : b.summary) b.text += (b.text.empty() ? "" : "\n\n") + s;
  if (auto e = opt_string(what, item, "encrypted_content", path))
    b.encrypted_content = std::string(*e);
  return b;
}

// The image tool's result: base64 in the item's output_format (png by default).
// https://platform.openai.com/docs/guides/tools-image-generation
void image_item(std::string_view what, element item, const std::string &path, Answer &a) {
  auto result = opt_string(what, item, "result", path);
  if (!result) return;
  Block b;
  b.kind = Block::kImage;
  b.data = std::string(*result);
  b.mime_type =
      "image/" + std::string(opt_string(what, item, "output_format", path).value_or("png"));
  a.blocks.push_back(std::move(b));
}

} // namespace

Answer openai_responses(element r, std::string_view what) {
  Answer a;
  a.family = "openai";
  a.response_id = std::string(need_string(what, r, "id", ""));
  a.model = std::string(opt_string(what, r, "model", "").value_or(""));
  simdjson::dom::array output = need_array(what, r, "output", "");
  size_t i = 0;
  for (element item : output) {
    std::string path = index_path("output", i++);
    std::string_view type = need_string(what, item, "type", path);
    if (type == "message")
      message_item(what, item, path, a);
    else if (type == "function_call")
      a.blocks.push_back(function_call_item(what, item, path));
    else if (type == "reasoning")
      a.blocks.push_back(reasoning_item(what, item, path));
    else if (type == "image_generation_call")
      image_item(what, item, path, a);
  }
  // No stop reason in a Response: its status, or why it is incomplete.
  if (auto status = opt_string(what, r, "status", "")) {
    a.stop_reason = std::string(*status);
    if (*status == "incomplete")
      if (auto d = field(r, "incomplete_details"))
        if (auto reason = opt_string(what, *d, "reason", "incomplete_details"))
          a.stop_reason = std::string(*reason);
  }
  if (auto u = field(r, "usage")) a.usage = responses_usage(what, *u);
  return a;
}

Answer openai_responses_stream(std::string_view ndjson) {
  std::optional<Answer> answer;
  for_each_event(kStream, ndjson, [&](element event, int64_t line) {
    std::string where = std::string(kStream) + " line " + std::to_string(line);
    std::string_view type = need_string(where, event, "type", "");
    if (type == "response.completed" || type == "response.incomplete") {
      element response = need_object(where, event, "response", "");
      answer = openai_responses(response, where + " response");
    } else if (type == "response.failed" || type == "error") {
      std::string message = "no message";
      auto err = type == "error" ? std::optional<element>(event) : std::nullopt;
      if (!err)
        if (auto resp = field(event, "response")) err = field(*resp, "error");
      if (err)
        if (auto m = opt_string(where, *err, "message", "error")) message = std::string(*m);
      throw Error(Code::kInvalidArg,
                  where + ": the provider reported " + std::string(type) + ": " + message);
    }
  });
  if (!answer)
    throw Error(Code::kInvalidArg,
                std::string(kStream) +
                    ": no response.completed (or response.incomplete) event: the stream ended "
                    "before the response did");
  return std::move(*answer);
}

} // namespace ctxdb::provider
