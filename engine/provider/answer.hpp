// answer.hpp — what a provider's response says, in one shape for every
// format: the blocks, the model, the stop reason and the usage. Each
// format's reader (openai_chat, openai_responses, anthropic, gemini) fills
// an Answer from a complete response or from its stream's events; one
// writer turns it into the AssistantMessageCreated payload (contract of
// events/AssistantMessageCreated.schema.json).
//
// Also the small readers every format uses: a required field that is
// missing is kInvalidArg naming its path in the response
// ("choices[0].message"), and a field present with another type is named
// the same way; fields the reader does not know are ignored.
#pragma once

#include <simdjson.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ctxdb::provider {

struct Block {
  enum Kind { kText, kToolCall, kThinking, kRedactedThinking, kRefusal, kImage };
  Kind kind = kText;
  std::string text;                     // text, thinking, refusal
  std::optional<std::string> signature; // thinking; a Gemini part's thoughtSignature
  std::string data;                     // redacted thinking's data, an image's base64
  std::string mime_type;                // image
  std::string id;                       // tool call id; reasoning item id (rs_…)
  std::string name;                     // tool call
  std::string args;                     // tool call arguments, as JSON text (object or string)
  std::vector<std::string> summary;     // a Responses reasoning item's summary texts
  std::optional<std::string> encrypted_content;
  bool tagged = false; // carries "provider": opaque state, sent back to its family only
};

// Usage with one meaning whatever the provider (see write_payload).
struct Usage {
  int64_t input = 0; // uncached input tokens
  int64_t cache_read = 0;
  int64_t cache_write = 0;
  int64_t output = 0; // including reasoning
  int64_t reasoning = 0;
  std::string provider; // the provider's usage object, canonical JSON
};

struct Answer {
  const char *family = ""; // "openai", "anthropic", "gemini"
  std::string response_id;
  std::string model;
  std::optional<std::string> stop_reason;
  std::vector<Block> blocks;
  std::optional<Usage> usage;
};

// The AssistantMessageCreated payload of an answer.
std::string write_payload(const Answer &a);

// --- reading fields; `path` is where `o` is in the response ("" at the top) --
std::string join_path(std::string_view path, std::string_view key);
std::string index_path(std::string_view path, size_t i);
// kInvalidArg "<what>: <path> is missing" (or "must be a <type>").
[[noreturn]] void missing(std::string_view what, std::string_view path);
[[noreturn]] void wrong_type(std::string_view what, std::string_view path, const char *type);

// A field that is absent or null is nullopt; one of another type is an error.
std::optional<simdjson::dom::element> field(simdjson::dom::element o, std::string_view key);
simdjson::dom::element need_object(std::string_view what, simdjson::dom::element o,
                                   std::string_view key, std::string_view path);
simdjson::dom::array need_array(std::string_view what, simdjson::dom::element o,
                                std::string_view key, std::string_view path);
std::string_view need_string(std::string_view what, simdjson::dom::element o, std::string_view key,
                             std::string_view path);
std::optional<std::string_view> opt_string(std::string_view what, simdjson::dom::element o,
                                           std::string_view key, std::string_view path);
std::optional<simdjson::dom::array> opt_array(std::string_view what, simdjson::dom::element o,
                                              std::string_view key, std::string_view path);
// A token count: an integer >= 0, 0 when absent.
int64_t count(std::string_view what, simdjson::dom::element o, std::string_view key,
              std::string_view path);
bool opt_bool(std::string_view what, simdjson::dom::element o, std::string_view key,
              std::string_view path);

// A tool call's arguments as the provider sent them in a JSON string: the
// object they parse to, or the string itself when they are not an object
// (arguments cut short by max_tokens stay readable).
std::string arguments_json(std::string_view arguments);
// Uncached input: the provider's input count minus the cached part it
// includes; kInvalidArg when the cached part is larger.
int64_t minus_cached(std::string_view what, int64_t input, int64_t cached, std::string_view path);

// OpenAI's usage, whose input count includes the cached part and output
// count the reasoning part, under the key names of one API: Chat's
// {"prompt_tokens", "completion_tokens"} or Responses' {"input_tokens",
// "output_tokens"}, each with its "_details" object. OpenAI reports no
// cache writes (https://platform.openai.com/docs/guides/prompt-caching).
Usage openai_usage(std::string_view what, simdjson::dom::element u, std::string_view input_key,
                   std::string_view output_key);

// Each non-blank line of an NDJSON stream, parsed, with its 1-based number.
// Server-sent-event framing is tolerated so a captured stream can be given
// as it came: "data: " before the JSON, "event:" and ":" lines, and the
// "[DONE]" sentinel are skipped. The element lives until the next line.
void for_each_event(std::string_view what, std::string_view ndjson,
                    const std::function<void(simdjson::dom::element, int64_t)> &fn);

} // namespace ctxdb::provider
