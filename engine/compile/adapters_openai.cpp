// openai.chat and openai.responses (adapters.hpp says what each emits).
#include "compile/adapter_lowering.hpp"

#include "json/json_writer.hpp"

#include <deque>
#include <set>
#include <string>
#include <vector>

namespace ctxdb::compile::adapt {

namespace {

constexpr std::string_view kChat = "openai.chat";
constexpr std::string_view kResponses = "openai.responses";

// A message as it will be written, pointing at lowered items or at texts
// the adapter made (kept alive in `made`).
struct Out {
  std::string_view role;
  std::vector<const Item *> parts;
};

const Item *made_text(std::deque<Item> &made, std::string text) {
  made.push_back(Item{Item::kText, std::move(text)});
  return &made.back();
}

std::string texts_of(const std::vector<const Item *> &parts) {
  std::string s;
  for (const Item *it : parts)
    if (it->kind == Item::kText || it->kind == Item::kRefusal)
      s += (s.empty() ? "" : "\n\n") + it->text;
  return s;
}

// Standing context and instructions: one message each, in order.
std::optional<Out> instruction(const Message &m, std::deque<Item> &made) {
  std::string text = joined_text(m);
  if (text.empty()) return std::nullopt;
  return Out{m.role == "context" ? "developer" : m.role, {made_text(made, std::move(text))}};
}

// The latest-turn context: the last block of the final user message, or a
// user message of its own after tool outputs (or anything else).
void place_context(const Lowered &b, std::vector<Out> &out, std::deque<Item> &made) {
  if (!b.latest_context) return;
  const Item *ctx = made_text(made, *b.latest_context);
  if (!out.empty() && out.back().role == "user")
    out.back().parts.push_back(ctx);
  else
    out.push_back({"user", {ctx}});
}

// --- openai.chat ----------------------------------------------------------

// Tool messages carry text only
// (https://platform.openai.com/docs/api-reference/chat/create: tool message
// content is a string or text parts), so the images of results follow, after
// the tool messages, in one user message that names each call.
void flush_tool_images(std::vector<const Item *> &results, std::vector<Out> &out,
                       std::deque<Item> &made) {
  Out user{"user", {}};
  for (const Item *r : results) {
    if (r->images.empty()) continue;
    user.parts.push_back(made_text(made, "Images from the result of tool call " +
                                             std::string(r->id) + " (" + std::string(r->name) +
                                             "):"));
    for (const Image &img : r->images) {
      made.push_back(Item{Item::kImage});
      made.back().images.push_back(img);
      user.parts.push_back(&made.back());
    }
  }
  results.clear();
  if (!user.parts.empty()) out.push_back(std::move(user));
}

// The tool messages must follow the assistant message that made the calls
// (https://platform.openai.com/docs/guides/function-calling), so a user
// message written while calls were running waits until they are answered.
struct ChatOrder {
  std::vector<Out> out;
  std::set<std::string_view> open; // calls of the last assistant message not yet answered
  std::vector<Out> waiting;        // user messages written meanwhile

  void push(Out o) {
    if (o.role == "user" && !open.empty()) return waiting.push_back(std::move(o));
    if (o.role == "assistant") {
      release();
      for (const Item *it : o.parts)
        if (it->kind == Item::kCall) open.insert(it->id);
    }
    out.push_back(std::move(o));
  }
  void answered(std::string_view id) { open.erase(id); }
  void release() {
    open.clear();
    for (Out &o : waiting) out.push_back(std::move(o));
    waiting.clear();
  }
};

std::vector<Out> chat_messages(const Lowered &b, std::deque<Item> &made) {
  ChatOrder order;
  std::vector<const Item *> results; // answering the last assistant message's calls
  // Once every call is answered (or the next assistant message comes), the
  // results' images and the user messages that waited follow.
  auto end_of_results = [&](bool force) {
    if (!force && !order.open.empty()) return;
    if (!results.empty()) flush_tool_images(results, order.out, made);
    order.release();
  };
  for (const Message &m : b.messages) {
    if (m.role != "tool") end_of_results(m.role == "assistant");
    if (is_instruction(m.role) || m.role == "context") {
      if (std::optional<Out> o = instruction(m, made)) order.push(std::move(*o));
      continue;
    }
    Out o{m.role, {}};
    for (const Item &it : m.items) {
      if (it.kind == Item::kThinking) continue; // chat takes no reasoning input
      if (m.role == "tool") {
        order.out.push_back({"tool", {&it}});
        order.answered(it.id);
        results.push_back(&it);
      } else if (m.role == "assistant" && it.kind == Item::kImage) {
        // Assistant content is text and refusals only: a model-made image is named.
        o.parts.push_back(made_text(made, image_placeholder(it.images[0])));
      } else {
        o.parts.push_back(&it);
      }
    }
    if (!o.parts.empty()) order.push(std::move(o));
  }
  end_of_results(true);
  place_context(b, order.out, made);
  return std::move(order.out);
}

void write_chat_part(json::JsonWriter &w, const Item &it) {
  if (it.kind == Item::kImage && accepts_image(kChat, it.images[0])) {
    w.begin_object().field("type", "image_url").key("image_url").begin_object();
    w.field("url", data_url(it.images[0])).end_object().end_object();
    return;
  }
  std::string text = it.kind == Item::kImage ? image_placeholder(it.images[0]) : it.text;
  w.begin_object().field("type", "text").field("text", text).end_object();
}

void write_chat_assistant(json::JsonWriter &w, const Out &o) {
  bool refusal = false, calls = false;
  for (const Item *it : o.parts) {
    refusal = refusal || it->kind == Item::kRefusal;
    calls = calls || it->kind == Item::kCall;
  }
  w.begin_object().field("role", "assistant").key("content");
  std::string text = texts_of(o.parts);
  if (refusal) {
    // A refusal is a content part of its own, beside the texts.
    w.begin_array();
    for (const Item *it : o.parts) {
      if (it->kind == Item::kText)
        w.begin_object().field("type", "text").field("text", it->text).end_object();
      if (it->kind == Item::kRefusal)
        w.begin_object().field("type", "refusal").field("refusal", it->text).end_object();
    }
    w.end_array();
  } else if (text.empty()) {
    w.null();
  } else {
    w.value(text);
  }
  if (calls) {
    w.key("tool_calls").begin_array();
    for (const Item *it : o.parts) {
      if (it->kind != Item::kCall) continue;
      w.begin_object().field("id", it->id).field("type", "function").key("function");
      w.begin_object().field("name", it->name).field("arguments", call_arguments(*it));
      w.end_object().end_object();
    }
    w.end_array();
  }
  w.end_object();
}

void write_chat_message(json::JsonWriter &w, const Out &o) {
  if (o.role == "assistant") return write_chat_assistant(w, o);
  if (o.role == "tool") {
    const Item &r = *o.parts[0];
    std::string text = blank(r.text) ? "(the output is the images that follow)" : r.text;
    w.begin_object().field("role", "tool").field("tool_call_id", r.id).field("content", text);
    w.end_object();
    return;
  }
  w.begin_object().field("role", o.role).key("content");
  // A user message is always a list of parts, so the next turn's request,
  // which drops the context part, shares the message's parts before it.
  if (o.role != "user") {
    w.value(texts_of(o.parts));
  } else {
    w.begin_array();
    for (const Item *it : o.parts) write_chat_part(w, *it);
    w.end_array();
  }
  w.end_object();
}

// --- openai.responses -----------------------------------------------------

struct ResponsesItem {
  enum Kind { kMessage, kAssistant, kReasoning, kCall, kOutput } kind;
  Out message{};              // kMessage
  std::string text{};         // kAssistant
  const Item *item = nullptr; // kReasoning, kCall, kOutput
};

void lower_assistant(const Message &m, std::vector<ResponsesItem> &out) {
  std::string run;
  auto flush = [&] {
    if (!run.empty()) out.push_back({ResponsesItem::kAssistant, {}, std::move(run)});
    run.clear();
  };
  for (const Item &it : m.items) {
    if (it.kind == Item::kText || it.kind == Item::kRefusal || it.kind == Item::kImage) {
      std::string text = it.kind == Item::kImage ? image_placeholder(it.images[0]) : it.text;
      run += (run.empty() ? "" : "\n\n") + text;
    } else if (it.kind == Item::kCall) {
      flush();
      out.push_back({ResponsesItem::kCall, {}, {}, &it});
    } else if (it.kind == Item::kThinking && it.thinking.provider == "openai" &&
               (!it.thinking.id.empty() || it.thinking.encrypted_content)) {
      // A reasoning item goes back in its place, before the items it preceded
      // (https://platform.openai.com/docs/guides/reasoning#keeping-reasoning-items-in-context).
      flush();
      out.push_back({ResponsesItem::kReasoning, {}, {}, &it});
    }
  }
  flush();
}

std::vector<ResponsesItem> responses_items(const Lowered &b, std::deque<Item> &made) {
  std::vector<ResponsesItem> out;
  for (const Message &m : b.messages) {
    if (is_instruction(m.role) || m.role == "context") {
      Out o{m.role == "context" ? "developer" : m.role, {}};
      for (const Item &it : m.items) o.parts.push_back(&it);
      if (!o.parts.empty()) out.push_back({ResponsesItem::kMessage, std::move(o)});
    } else if (m.role == "assistant") {
      lower_assistant(m, out);
    } else if (m.role == "tool") {
      for (const Item &it : m.items)
        if (it.kind == Item::kResult) out.push_back({ResponsesItem::kOutput, {}, {}, &it});
    } else {
      Out o{m.role, {}};
      for (const Item &it : m.items) o.parts.push_back(&it);
      if (!o.parts.empty()) out.push_back({ResponsesItem::kMessage, std::move(o)});
    }
  }
  if (b.latest_context) {
    const Item *ctx = made_text(made, *b.latest_context);
    if (!out.empty() && out.back().kind == ResponsesItem::kMessage &&
        out.back().message.role == "user")
      out.back().message.parts.push_back(ctx);
    else
      out.push_back({ResponsesItem::kMessage, Out{"user", {ctx}}});
  }
  return out;
}

void write_input_part(json::JsonWriter &w, const Item &it) {
  if (it.kind == Item::kImage && accepts_image(kResponses, it.images[0])) {
    w.begin_object().field("type", "input_image").field("image_url", data_url(it.images[0]));
    w.field("detail", "auto").end_object();
    return;
  }
  std::string text = it.kind == Item::kImage ? image_placeholder(it.images[0]) : it.text;
  w.begin_object().field("type", "input_text").field("text", text).end_object();
}

void write_reasoning(json::JsonWriter &w, const Thinking &t) {
  // Without an id (Codex keeps none) the item is replayed by its
  // encrypted_content, as Codex itself sends it back (store: false).
  w.begin_object().field("type", "reasoning");
  if (!t.id.empty()) w.field("id", t.id);
  w.key("summary").begin_array();
  for (std::string_view s : t.summary)
    w.begin_object().field("type", "summary_text").field("text", s).end_object();
  w.end_array();
  if (t.encrypted_content) w.field("encrypted_content", *t.encrypted_content);
  w.end_object();
}

// function_call_output takes a string or a list of input_text / input_image
// (https://platform.openai.com/docs/api-reference/responses/create).
void write_output(json::JsonWriter &w, const Item &r) {
  w.begin_object().field("type", "function_call_output").field("call_id", r.id).key("output");
  if (r.images.empty()) {
    w.value(r.text);
  } else {
    w.begin_array();
    if (!blank(r.text)) write_input_part(w, Item{Item::kText, r.text});
    for (const Image &img : r.images) {
      Item it{Item::kImage};
      it.images.push_back(img);
      write_input_part(w, it);
    }
    w.end_array();
  }
  w.end_object();
}

void write_responses_item(json::JsonWriter &w, const ResponsesItem &i) {
  switch (i.kind) {
  case ResponsesItem::kMessage:
    w.begin_object().field("type", "message").field("role", i.message.role);
    w.key("content").begin_array();
    for (const Item *it : i.message.parts) write_input_part(w, *it);
    w.end_array().end_object();
    break;
  case ResponsesItem::kAssistant:
    // An assistant message of the input is role + content text
    // (EasyInputMessage); an output message would need the id and status
    // the API gave it.
    w.begin_object().field("type", "message").field("role", "assistant");
    w.field("content", i.text).end_object();
    break;
  case ResponsesItem::kReasoning: write_reasoning(w, i.item->thinking); break;
  case ResponsesItem::kCall:
    w.begin_object()
        .field("type", "function_call")
        .field("call_id", i.item->id)
        .field("name", i.item->name)
        .field("arguments", call_arguments(*i.item))
        .end_object();
    break;
  case ResponsesItem::kOutput: write_output(w, *i.item); break;
  }
}

} // namespace

std::string to_openai_chat(const Lowered &b) {
  std::deque<Item> made;
  std::vector<Out> messages = chat_messages(b, made);
  json::JsonWriter w;
  w.begin_object().key("messages").begin_array();
  for (const Out &o : messages) write_chat_message(w, o);
  w.end_array();
  if (!b.tools.empty()) {
    w.key("tools").begin_array();
    for (const Tool &t : b.tools) {
      w.begin_object().field("type", "function").key("function").begin_object();
      w.field("name", t.name);
      if (t.description) w.field("description", *t.description);
      if (t.parameters) w.raw_field("parameters", tool_parameters(t));
      w.end_object().end_object();
    }
    w.end_array();
  }
  return w.end_object().take();
}

std::string to_openai_responses(const Lowered &b) {
  std::deque<Item> made;
  std::vector<ResponsesItem> items = responses_items(b, made);
  json::JsonWriter w;
  w.begin_object().key("input").begin_array();
  for (const ResponsesItem &i : items) write_responses_item(w, i);
  w.end_array();
  if (!b.tools.empty()) {
    w.key("tools").begin_array();
    for (const Tool &t : b.tools) {
      w.begin_object().field("type", "function").field("name", t.name);
      if (t.description) w.field("description", *t.description);
      w.raw_field("parameters", tool_parameters(t)).key("strict").boolean(false).end_object();
    }
    w.end_array();
  }
  return w.end_object().take();
}

} // namespace ctxdb::compile::adapt
