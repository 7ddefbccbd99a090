// gemini.generate_content (adapters.hpp says what it emits).
#include "compile/adapter_lowering.hpp"

#include "json/json_writer.hpp"

#include <algorithm>
#include <deque>
#include <string>
#include <vector>

namespace ctxdb::compile::adapt {

namespace {

constexpr std::string_view kFormat = "gemini.generate_content";

// What a function call part carries when no Gemini model made it: the value
// Google documents for calls from another model or made by the client
// (https://ai.google.dev/gemini-api/docs/thought-signatures).
constexpr std::string_view kSkipSignature = "skip_thought_signature_validator";

struct Content {
  bool user;
  std::vector<const Item *> parts;
};

bool from_gemini(const Item &it) { return it.provider == "gemini"; }

// Thoughts go back only to Gemini, and only with something to send.
bool sendable(const Item &it) {
  if (it.kind != Item::kThinking) return true;
  const Thinking &t = it.thinking;
  return t.provider == "gemini" && (!blank(t.text) || t.signature);
}

const Item *made_image(std::deque<Item> &made, const Image &img) {
  made.push_back(Item{Item::kImage});
  made.back().images.push_back(img);
  return &made.back();
}

// Contents alternate user / model: consecutive same-role segments (tool
// counts as user) merge, the functionResponse parts first in a user content,
// each result's images after them as inlineData parts; the first content is
// the user's (https://ai.google.dev/gemini-api/docs/function-calling).
std::vector<Content> build(const Lowered &b, std::deque<Item> &made) {
  std::vector<Content> out;
  for (const Message &m : b.messages) {
    if (is_instruction(m.role) || m.role == "context") continue;
    bool user = m.role != "assistant";
    for (const Item &it : m.items) {
      if (!sendable(it)) continue;
      if (out.empty() || out.back().user != user) out.push_back({user, {}});
      out.back().parts.push_back(&it);
      if (it.kind == Item::kResult)
        for (const Image &img : it.images) out.back().parts.push_back(made_image(made, img));
    }
  }
  for (Content &c : out)
    if (c.user)
      std::stable_partition(c.parts.begin(), c.parts.end(),
                            [](const Item *it) { return it->kind == Item::kResult; });
  if (!out.empty() && !out.front().user) {
    made.push_back(Item{Item::kText, "(conversation continues)"});
    out.insert(out.begin(), Content{true, {&made.back()}});
  }
  if (b.latest_context) {
    made.push_back(Item{Item::kText, *b.latest_context});
    auto last_user =
        std::find_if(out.rbegin(), out.rend(), [](const Content &c) { return c.user; });
    if (last_user == out.rend())
      out.push_back({true, {&made.back()}});
    else
      last_user->parts.push_back(&made.back());
  }
  return out;
}

void write_part(json::JsonWriter &w, const Item &it) {
  w.begin_object();
  switch (it.kind) {
  case Item::kText:
  case Item::kRefusal: w.field("text", it.text); break;
  case Item::kImage:
    if (accepts_image(kFormat, it.images[0])) {
      w.key("inlineData").begin_object().field("mimeType", it.images[0].mime_type);
      w.field("data", it.images[0].base64).end_object();
    } else {
      w.field("text", image_placeholder(it.images[0]));
    }
    break;
  case Item::kThinking:
    if (!blank(it.thinking.text)) w.field("text", it.thinking.text);
    w.key("thought").boolean(true);
    if (it.thinking.signature) w.field("thoughtSignature", *it.thinking.signature);
    break;
  case Item::kCall:
    w.key("functionCall").begin_object().field("id", it.id).field("name", it.name);
    w.raw_field("args", call_input(it)).end_object();
    if (from_gemini(it) && it.signature)
      w.field("thoughtSignature", *it.signature);
    else if (!from_gemini(it))
      w.field("thoughtSignature", kSkipSignature);
    break;
  case Item::kResult:
    // response: {"output": …} or {"error": …}, as FunctionResponse documents.
    w.key("functionResponse").begin_object().field("id", it.id).field("name", result_name(it));
    w.key("response").begin_object().field(it.error ? "error" : "output", it.text).end_object();
    w.end_object();
    break;
  }
  w.end_object();
}

} // namespace

std::string to_gemini(const Lowered &b) {
  std::deque<Item> made;
  std::vector<Content> contents = build(b, made);
  json::JsonWriter w;
  w.begin_object();
  std::vector<std::string> system;
  for (const Message &m : b.messages)
    if (is_instruction(m.role) || m.role == "context")
      if (std::string text = joined_text(m); !text.empty()) system.push_back(std::move(text));
  if (!system.empty()) {
    w.key("systemInstruction").begin_object().key("parts").begin_array();
    for (const std::string &s : system) w.begin_object().field("text", s).end_object();
    w.end_array().end_object();
  }
  w.key("contents").begin_array();
  for (const Content &c : contents) {
    w.begin_object().field("role", c.user ? "user" : "model").key("parts").begin_array();
    for (const Item *it : c.parts) write_part(w, *it);
    w.end_array().end_object();
  }
  w.end_array();
  if (!b.tools.empty()) {
    // parametersJsonSchema takes the tools' JSON Schema as it is; parameters
    // would take only Gemini's OpenAPI subset.
    w.key("tools").begin_array().begin_object().key("functionDeclarations").begin_array();
    for (const Tool &t : b.tools) {
      w.begin_object().field("name", t.name);
      if (t.description) w.field("description", *t.description);
      w.raw_field("parametersJsonSchema", tool_parameters(t)).end_object();
    }
    w.end_array().end_object().end_array();
  }
  return w.end_object().take();
}

} // namespace ctxdb::compile::adapt
