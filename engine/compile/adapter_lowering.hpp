// adapter_lowering.hpp — the bundle as every adapter reads it (internal to
// engine/compile/adapters*.cpp): per segment its role and the blocks a
// provider may see, checked once, with images read from their artifacts,
// whitespace-only texts gone, and the role "context" segments placed
// (standing context kept in order, latest-turn context joined into one
// marked block). Strings are views into the parsed bundle, which outlives
// every use.
#pragma once

#include "compile/artifact_reader.hpp"

#include <simdjson.h>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ctxdb::compile::adapt {

using simdjson::dom::element;

struct Image {
  std::string_view artifact_id;
  std::string_view mime_type;
  std::string base64;    // the artifact's bytes; empty without a reader
  std::string omitted{}; // why a provider's image limits leave it out, if they do
};

// A stored thinking block (contract of AssistantMessageCreated): opaque
// state that goes back only to the family named by `provider`.
struct Thinking {
  std::string_view provider; // "anthropic", "openai", "gemini"; empty: unknown
  std::string_view text;
  std::optional<std::string_view> signature;         // anthropic, gemini
  bool redacted = false;                             // anthropic redacted_thinking
  std::string_view data;                             // its opaque data
  std::string_view id;                               // openai reasoning item id
  std::vector<std::string_view> summary;             // openai summary texts
  std::optional<std::string_view> encrypted_content; // openai
};

struct Item {
  enum Kind { kText, kImage, kThinking, kRefusal, kCall, kResult } kind;
  std::string text{};            // kText, kRefusal; kResult: the result's text
  std::string_view id{};         // kCall: the call id; kResult: the call it answers
  std::string_view name{};       // kCall; kResult: the tool (from the call when absent)
  std::optional<element> args{}; // kCall
  std::string_view provider{};   // kCall: the family that made it
  std::optional<std::string_view> signature{}; // kCall: Gemini's thoughtSignature
  bool error = false;                          // kResult: status error or cancelled
  std::vector<Image> images{};                 // kImage: one; kResult: its images
  Thinking thinking{};                         // kThinking
};

struct Message {
  std::string_view role; // system, developer, context (standing), user, assistant, tool
  size_t seg;            // the bundle segment it came from
  std::vector<Item> items;
};

struct Tool {
  std::string_view name;
  std::optional<std::string_view> description;
  std::optional<element> parameters;
  size_t seg;
};

struct Lowered {
  // Instructions, standing context and the conversation, in bundle order;
  // latest-turn context is not among them.
  std::vector<Message> messages;
  std::vector<Tool> tools;
  // The latest-turn context segments joined into one text wrapped as
  // "<context>\n…\n</context>", when there are any.
  std::optional<std::string> latest_context;
  std::optional<size_t> stable_end; // the segment where the stable prefix ends
};

Lowered lower(element bundle, const ArtifactReader *reader);

// Applies `format`'s documented image limits (count per request, size per
// image, total size), keeping the newest images: the older ones beyond a
// limit become their placeholder text, which says so.
void limit_images(Lowered &b, std::string_view format);

// Helpers the adapters share.
bool blank(std::string_view s);
bool is_instruction(std::string_view role); // system or developer
std::string joined_text(const Message &m);  // its text items, "\n\n" between
bool has_calls(const Message &m);
std::string call_arguments(const Item &call); // OpenAI: arguments as a JSON string
std::string call_input(const Item &call);     // an object: Anthropic, Gemini, AI SDK
std::string tool_parameters(const Tool &t);   // a JSON Schema object
std::string data_url(const Image &image);
// Whether `format`'s provider takes this image media type (the list each
// documents); an image it does not take goes as its placeholder text.
bool accepts_image(std::string_view format, const Image &image);
std::string image_placeholder(const Image &image);
// The name a result's tool has, which Gemini and the AI SDK require.
std::string_view result_name(const Item &result);

std::string to_openai_chat(const Lowered &b);
std::string to_openai_responses(const Lowered &b);
std::string to_anthropic_messages(const Lowered &b);
std::string to_gemini(const Lowered &b);
std::string to_ai_sdk(const Lowered &b);

} // namespace ctxdb::compile::adapt
