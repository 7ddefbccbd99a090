// ai.sdk: the Vercel AI SDK's ModelMessage[] (adapters.hpp says what it
// emits; the part shapes are packages/provider-utils/src/types/ of
// github.com/vercel/ai).
#include "compile/adapter_lowering.hpp"

#include "json/json_writer.hpp"

#include <set>
#include <string>
#include <vector>

namespace ctxdb::compile::adapt {

namespace {

constexpr std::string_view kFormat = "ai.sdk";

void write_text(json::JsonWriter &w, std::string_view text) {
  w.begin_object().field("type", "text").field("text", text).end_object();
}

void write_image(json::JsonWriter &w, const Image &img) {
  if (!accepts_image(kFormat, img)) return write_text(w, image_placeholder(img));
  w.begin_object().field("type", "image").field("image", img.base64);
  w.field("mediaType", img.mime_type).end_object();
}

// providerOptions: {<provider>: {<key>: value, …}}.
json::JsonWriter &options(json::JsonWriter &w, std::string_view provider) {
  return w.key("providerOptions").begin_object().key(provider).begin_object();
}

void write_reasoning(json::JsonWriter &w, std::string_view text, std::string_view provider) {
  w.begin_object().field("type", "reasoning").field("text", text);
  options(w, provider);
}

// Reasoning parts carry their opaque state in providerOptions under the
// provider that made them, the keys the SDK's providers read back
// (packages/anthropic: signature, redactedData; packages/openai:
// itemId, reasoningEncryptedContent, one part per summary text;
// packages/google: thoughtSignature). Each provider ignores the others'.
void write_thinking(json::JsonWriter &w, const Thinking &t) {
  if (t.provider == "anthropic") {
    if (t.redacted && !t.data.empty()) {
      write_reasoning(w, "", "anthropic");
      w.field("redactedData", t.data);
    } else if (!t.redacted && t.signature) {
      write_reasoning(w, t.text, "anthropic");
      w.field("signature", *t.signature);
    } else {
      return;
    }
  } else if (t.provider == "openai" && !t.id.empty()) {
    std::vector<std::string_view> texts = t.summary;
    if (texts.empty()) texts.push_back("");
    for (size_t i = 0; i < texts.size(); ++i) {
      write_reasoning(w, texts[i], "openai");
      w.field("itemId", t.id);
      if (t.encrypted_content) w.field("reasoningEncryptedContent", *t.encrypted_content);
      if (i + 1 < texts.size()) w.end_object().end_object().end_object();
    }
  } else if (t.provider == "gemini" && (!blank(t.text) || t.signature)) {
    write_reasoning(w, t.text, "google");
    if (t.signature) w.field("thoughtSignature", *t.signature);
  } else {
    return;
  }
  w.end_object().end_object().end_object();
}

void write_call(json::JsonWriter &w, const Item &it) {
  w.begin_object().field("type", "tool-call").field("toolCallId", it.id);
  w.field("toolName", it.name).raw_field("input", call_input(it));
  if (it.provider == "gemini" && it.signature) {
    options(w, "google").field("thoughtSignature", *it.signature);
    w.end_object().end_object();
  }
  w.end_object();
}

// output: text or error-text, or content (text and image-data parts) when
// the result has images.
void write_result(json::JsonWriter &w, const Item &it) {
  w.begin_object().field("type", "tool-result").field("toolCallId", it.id);
  w.field("toolName", result_name(it)).key("output").begin_object();
  if (it.images.empty()) {
    w.field("type", it.error ? "error-text" : "text").field("value", it.text);
  } else {
    w.field("type", "content").key("value").begin_array();
    if (!blank(it.text)) write_text(w, it.text);
    for (const Image &img : it.images) {
      if (!accepts_image(kFormat, img)) {
        write_text(w, image_placeholder(img));
        continue;
      }
      w.begin_object().field("type", "image-data").field("data", img.base64);
      w.field("mediaType", img.mime_type).end_object();
    }
    w.end_array();
  }
  w.end_object().end_object();
}

bool visible(const Item &it) {
  if (it.kind != Item::kThinking) return true;
  const Thinking &t = it.thinking;
  return (t.provider == "anthropic" && (t.redacted ? !t.data.empty() : t.signature.has_value())) ||
         (t.provider == "openai" && !t.id.empty()) ||
         (t.provider == "gemini" && (!blank(t.text) || t.signature));
}

// An assistant's content takes files, not image parts (AssistantContent).
void write_file(json::JsonWriter &w, const Image &img) {
  if (!accepts_image(kFormat, img)) return write_text(w, image_placeholder(img));
  w.begin_object().field("type", "file").field("data", img.base64);
  w.field("mediaType", img.mime_type).end_object();
}

void write_part(json::JsonWriter &w, const Item &it, bool assistant) {
  switch (it.kind) {
  case Item::kText:
  case Item::kRefusal: write_text(w, it.text); break;
  case Item::kImage: assistant ? write_file(w, it.images[0]) : write_image(w, it.images[0]); break;
  case Item::kThinking: write_thinking(w, it.thinking); break;
  case Item::kCall: write_call(w, it); break;
  case Item::kResult: write_result(w, it); break;
  }
}

// The messages in the order they are written: a user message written while
// the assistant's calls ran waits until every one is answered, since the
// SDK's providers want each call's result before the conversation moves on
// (OpenAI's tool messages right after the call).
std::vector<const Message *> in_order(const Lowered &b) {
  std::vector<const Message *> out, waiting;
  std::set<std::string_view> open;
  auto release = [&] {
    out.insert(out.end(), waiting.begin(), waiting.end());
    waiting.clear();
    open.clear();
  };
  for (const Message &m : b.messages) {
    if (m.role == "user" && !open.empty()) {
      waiting.push_back(&m);
      continue;
    }
    if (m.role == "assistant") release();
    out.push_back(&m);
    for (const Item &it : m.items) {
      if (m.role == "assistant" && it.kind == Item::kCall) open.insert(it.id);
      if (it.kind == Item::kResult) open.erase(it.id);
    }
    if (m.role == "tool" && open.empty()) release();
  }
  release();
  return out;
}

} // namespace

std::string to_ai_sdk(const Lowered &b) {
  json::JsonWriter w;
  w.begin_object().key("messages").begin_array();
  bool open = false; // the last message is a user message still open for parts
  for (const Message *mp : in_order(b)) {
    const Message &m = *mp;
    if (open) w.end_array().end_object();
    open = false;
    if (is_instruction(m.role) || m.role == "context") {
      std::string text = joined_text(m);
      if (text.empty()) continue;
      w.begin_object().field("role", "system").field("content", text).end_object();
      continue;
    }
    size_t shown = 0;
    for (const Item &it : m.items) shown += visible(it) ? 1 : 0;
    if (shown == 0) continue;
    w.begin_object().field("role", m.role).key("content").begin_array();
    for (const Item &it : m.items)
      if (visible(it)) write_part(w, it, m.role == "assistant");
    open = m.role == "user";
    if (!open) w.end_array().end_object();
  }
  // The latest-turn context: a text part of the final user message, or a
  // user message of its own after tool results.
  if (b.latest_context) {
    if (!open) w.begin_object().field("role", "user").key("content").begin_array();
    write_text(w, *b.latest_context);
    open = true;
  }
  if (open) w.end_array().end_object();
  w.end_array();
  if (!b.tools.empty()) {
    // A ToolSet's shape: name -> {description, inputSchema}; the host wraps
    // each inputSchema with the SDK's jsonSchema().
    w.key("tools").begin_object();
    for (const Tool &t : b.tools) {
      w.key(t.name).begin_object();
      if (t.description) w.field("description", *t.description);
      w.raw_field("inputSchema", tool_parameters(t)).end_object();
    }
    w.end_object();
  }
  return w.end_object().take();
}

} // namespace ctxdb::compile::adapt
