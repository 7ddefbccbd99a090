#include "compile/adapters.hpp"

#include "error.hpp"
#include "store/store.hpp"
#include "json/json_writer.hpp"
#include "json/parse.hpp"

#include <simdjson.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ctxdb::compile {

namespace {

using simdjson::dom::element;

enum class Format { kCanonical, kChat, kResponses, kAnthropic };

Format parse_format(std::string_view name) {
  for (size_t i = 0; i < std::size(kBundleFormats); ++i)
    if (name == kBundleFormats[i]) return static_cast<Format>(i);
  std::string known;
  for (std::string_view f : kBundleFormats) known += (known.empty() ? "" : ", ") + std::string(f);
  throw Error(Code::kInvalidArg,
              "unknown bundle format '" + std::string(name) + "' (known: " + known + ")");
}

[[noreturn]] void bad(const std::string &where, const std::string &why) {
  throw Error(Code::kInvalidArg, "bundle: field '" + where + "' " + why);
}

// An array field of the validated bundle, by value: a range-for over
// `e[key].get_array().value()` would iterate a destroyed temporary.
simdjson::dom::array array_at(element e, const char *key) { return e[key].get_array().value(); }

std::string block_path(size_t seg, size_t block) {
  return "segments[" + std::to_string(seg) + "].content[" + std::to_string(block) + "]";
}

// An optional string field; present but not a string is a bundle error.
std::optional<std::string_view> opt_str(element o, const char *key, const std::string &where) {
  auto v = o[key];
  if (v.error()) return std::nullopt;
  std::string_view s;
  if (v.get(s)) bad(where + "." + key, "must be a string");
  return s;
}

std::string_view req_str(element o, const char *key, const std::string &where) {
  std::optional<std::string_view> s = opt_str(o, key, where);
  if (!s) bad(where + "." + key, "is required");
  return *s;
}

// The bundle lowered to what every adapter needs: per segment, its role and
// the blocks a provider can see, with thinking dropped and references
// rendered as text.
struct Item {
  enum Kind { kText, kCall, kResult } kind;
  std::string text{};            // kText: the text; kResult: the result's content
  std::string_view id{};         // kCall: the call id; kResult: the call it answers
  std::string_view name{};       // kCall
  std::optional<element> args{}; // kCall
  bool error = false;            // kResult
};

struct Message {
  std::string_view role;
  size_t seg;
  std::vector<Item> items;
};

struct Tool {
  std::string_view name;
  std::optional<std::string_view> description;
  std::optional<element> parameters;
  size_t seg;
};

struct Lowered {
  std::vector<Message> messages; // one per non-tools segment, in order
  std::vector<Tool> tools;
  std::optional<size_t> stable_end; // the segment where the stable prefix ends
};

void lower_tools(element segment, size_t seg, Lowered &out) {
  size_t j = 0;
  for (element block : array_at(segment, "content")) {
    std::string where = block_path(seg, j++);
    if (req_str(block, "type", where) != "tool_specs")
      bad(where + ".type", "must be tool_specs in the tools segment");
    simdjson::dom::array tools;
    if (block["tools"].get(tools)) bad(where + ".tools", "is required (an array)");
    size_t k = 0;
    for (element spec : tools) {
      std::string at = where + ".tools[" + std::to_string(k++) + "]";
      if (!spec.is_object()) bad(at, "must be an object");
      Tool t{req_str(spec, "name", at), opt_str(spec, "description", at), std::nullopt, seg};
      if (auto p = spec["parameters"]; !p.error()) {
        if (!p.value().is_object()) bad(at + ".parameters", "must be an object");
        t.parameters = p.value();
      }
      out.tools.push_back(t);
    }
  }
}

// The text a provider sees for a block that is neither a call nor a result,
// or nullopt for one it does not see.
std::optional<std::string> visible_text(element block, std::string_view type,
                                        const std::string &where) {
  if (type == "text") return std::string(req_str(block, "text", where));
  if (type == "thinking") return std::nullopt;
  auto named = [&](const char *what, const char *key) {
    std::optional<std::string_view> v = opt_str(block, key, where);
    return "[" + std::string(what) + (v ? ": " + std::string(*v) : "") + "]";
  };
  if (type == "image") {
    std::optional<std::string_view> id = opt_str(block, "artifact_id", where);
    return id ? "[image: artifact " + std::string(*id) + "]" : std::string("[image]");
  }
  if (type == "file_ref") return named("file", "path");
  if (type == "artifact_ref") return named("artifact", "artifact_id");
  bad(where + ".type", "'" + std::string(type) + "' belongs in the tools segment");
}

Item lower_call(element block, const std::string &where) {
  Item it{Item::kCall, {}, req_str(block, "id", where), req_str(block, "name", where)};
  if (auto a = block["args"]; !a.error()) {
    if (!a.value().is_object() && !a.value().is_string())
      bad(where + ".args", "must be an object or a string");
    it.args = a.value();
  }
  return it;
}

Item lower_result(element block, const std::string &where) {
  Item it{Item::kResult, {}, req_str(block, "tool_call_id", where)};
  // A cancelled call's result is sent as a failed one (Anthropic is_error).
  std::optional<std::string_view> status = opt_str(block, "status", where);
  it.error = status == std::optional<std::string_view>("error") ||
             status == std::optional<std::string_view>("cancelled");
  std::string_view text = opt_str(block, "text", where).value_or("");
  if (it.error) {
    it.text = opt_str(block, "error", where).value_or("");
    if (!text.empty()) it.text += (it.text.empty() ? "" : "\n\n") + std::string(text);
  } else {
    it.text = text;
  }
  if (it.text.empty())
    if (auto id = opt_str(block, "artifact_id", where))
      it.text = "[output in artifact " + std::string(*id) + "]";
  return it;
}

Message lower_message(element segment, size_t seg) {
  Message m{segment["role"].get_string().value(), seg, {}};
  size_t j = 0;
  for (element block : array_at(segment, "content")) {
    std::string where = block_path(seg, j++);
    std::string_view type = req_str(block, "type", where);
    if (type == "tool_call" || type == "tool_result") {
      std::string_view want = type == "tool_call" ? "assistant" : "tool";
      if (m.role != want)
        bad(where + ".type", "a " + std::string(type) + " belongs in a " + std::string(want) +
                                 " segment, not a " + std::string(m.role) + " one");
      m.items.push_back(type == "tool_call" ? lower_call(block, where)
                                            : lower_result(block, where));
      continue;
    }
    if (m.role == "tool" && type != "thinking")
      bad(where + ".type", "a tool segment holds tool_result blocks only");
    std::optional<std::string> text = visible_text(block, type, where);
    if (text && !text->empty()) m.items.push_back(Item{Item::kText, std::move(*text)});
  }
  return m;
}

// Context segments (bundle.schema.json, role context) by their place:
// before the conversation they are standing context, sent with the
// instructions (a developer message; Anthropic's system); after it, the
// latest turn's context, joined into one user-side text in <context> tags.
void place_context(std::vector<Message> &messages) {
  auto talk = [](const Message &m) {
    return m.role == "user" || m.role == "assistant" || m.role == "tool";
  };
  auto last = std::find_if(messages.rbegin(), messages.rend(), talk);
  size_t end = size_t(messages.rend() - last); // past the last conversation message
  std::string joined;
  std::vector<Message> kept;
  for (size_t i = 0; i < messages.size(); ++i) {
    Message &m = messages[i];
    if (m.role == "context" && i >= end && end > 0) {
      for (const Item &it : m.items) {
        std::string_view t = it.text;
        while (!t.empty() && t.back() == '\n') t.remove_suffix(1);
        joined.append(t).append("\n");
      }
      continue;
    }
    if (m.role == "context") m.role = "developer";
    kept.push_back(std::move(m));
  }
  if (!joined.empty())
    kept.push_back(Message{"user",
                           kept.empty() ? 0 : kept.back().seg,
                           {Item{Item::kText, "<context>\n" + joined + "</context>"}}});
  messages = std::move(kept);
}

Lowered lower(element bundle) {
  Lowered out;
  int64_t stable = bundle["stable_prefix_tokens"].get_int64().value();
  int64_t sum = 0;
  bool in_prefix = stable > 0;
  size_t i = 0;
  for (element segment : array_at(bundle, "segments")) {
    size_t seg = i++;
    if (segment["kind"].get_string().value() == "tools")
      lower_tools(segment, seg, out);
    else
      out.messages.push_back(lower_message(segment, seg));
    sum += segment["tokens"].get_int64().value();
    in_prefix = in_prefix && sum <= stable;
    if (in_prefix) out.stable_end = seg;
  }
  place_context(out.messages);
  return out;
}

std::string joined_text(const Message &m) {
  std::string s;
  for (const Item &it : m.items)
    if (it.kind == Item::kText) s += (s.empty() ? "" : "\n\n") + it.text;
  return s;
}

bool has_calls(const Message &m) {
  return std::any_of(m.items.begin(), m.items.end(),
                     [](const Item &it) { return it.kind == Item::kCall; });
}

// OpenAI's arguments: a JSON string.
std::string arguments(const Item &call) {
  if (!call.args) return "{}";
  std::string_view s;
  if (!call.args->get(s)) return std::string(s);
  return json::canonical(*call.args);
}

constexpr std::string_view kEmptyParameters = R"({"type":"object","properties":{}})";

std::string parameters(const Tool &t) {
  return t.parameters ? json::canonical(*t.parameters) : std::string(kEmptyParameters);
}

bool is_instruction(std::string_view role) { return role == "system" || role == "developer"; }

std::string to_openai_chat(const Lowered &b) {
  json::JsonWriter w;
  w.begin_object().key("messages").begin_array();
  for (const Message &m : b.messages) {
    std::string text = joined_text(m);
    if (m.role == "tool") {
      for (const Item &it : m.items)
        w.begin_object()
            .field("role", "tool")
            .field("tool_call_id", it.id)
            .field("content", it.text)
            .end_object();
    } else if (m.role == "assistant") {
      if (text.empty() && !has_calls(m)) continue;
      w.begin_object().field("role", "assistant").key("content");
      text.empty() ? w.null() : w.value(text);
      if (has_calls(m)) {
        w.key("tool_calls").begin_array();
        for (const Item &it : m.items) {
          if (it.kind != Item::kCall) continue;
          w.begin_object().field("id", it.id).field("type", "function").key("function");
          w.begin_object().field("name", it.name).field("arguments", arguments(it));
          w.end_object().end_object();
        }
        w.end_array();
      }
      w.end_object();
    } else if (!text.empty()) {
      w.begin_object().field("role", m.role).field("content", text).end_object();
    }
  }
  w.end_array();
  if (!b.tools.empty()) {
    w.key("tools").begin_array();
    for (const Tool &t : b.tools) {
      w.begin_object().field("type", "function").key("function").begin_object();
      w.field("name", t.name);
      if (t.description) w.field("description", *t.description);
      if (t.parameters) w.raw_field("parameters", parameters(t));
      w.end_object().end_object();
    }
    w.end_array();
  }
  return w.end_object().take();
}

void write_message_item(json::JsonWriter &w, std::string_view role,
                        const std::vector<const Item *> &texts) {
  bool output = role == "assistant";
  w.begin_object().field("type", "message").field("role", role).key("content").begin_array();
  for (const Item *it : texts) {
    w.begin_object().field("type", output ? "output_text" : "input_text").field("text", it->text);
    if (output) w.key("annotations").begin_array().end_array();
    w.end_object();
  }
  w.end_array().end_object();
}

std::string to_openai_responses(const Lowered &b) {
  json::JsonWriter w;
  w.begin_object().key("input").begin_array();
  for (const Message &m : b.messages) {
    std::vector<const Item *> texts;
    for (const Item &it : m.items) {
      if (it.kind == Item::kText) {
        texts.push_back(&it);
        continue;
      }
      if (!texts.empty()) write_message_item(w, m.role, texts);
      texts.clear();
      if (it.kind == Item::kCall)
        w.begin_object()
            .field("type", "function_call")
            .field("call_id", it.id)
            .field("name", it.name)
            .field("arguments", arguments(it))
            .end_object();
      else
        w.begin_object()
            .field("type", "function_call_output")
            .field("call_id", it.id)
            .field("output", it.text)
            .end_object();
    }
    if (!texts.empty()) write_message_item(w, m.role, texts);
  }
  w.end_array();
  if (!b.tools.empty()) {
    w.key("tools").begin_array();
    for (const Tool &t : b.tools) {
      w.begin_object().field("type", "function").field("name", t.name);
      if (t.description) w.field("description", *t.description);
      w.raw_field("parameters", parameters(t)).key("strict").boolean(false).end_object();
    }
    w.end_array();
  }
  return w.end_object().take();
}

// Anthropic: where each emitted block came from, and whether it carries a
// cache breakpoint.
struct Placed {
  size_t seg;
  bool cache = false;
};

struct AnthropicBlock : Placed {
  const Item *item;
};

struct AnthropicMessage {
  bool user;
  std::vector<AnthropicBlock> blocks;
};

struct SystemBlock : Placed {
  std::string text;
};

// tool_use input: an object, as the API requires.
std::string tool_input(const Item &call) {
  if (!call.args) return "{}";
  std::string_view s;
  if (call.args->get(s)) return json::canonical(*call.args);
  simdjson::dom::parser parser;
  element parsed;
  if (!parser.parse(s).get(parsed) && parsed.is_object()) return json::canonical(parsed);
  json::JsonWriter w;
  return w.begin_object().field("input", s).end_object().take();
}

void write_cache(json::JsonWriter &w, const Placed &p) {
  if (p.cache) w.key("cache_control").begin_object().field("type", "ephemeral").end_object();
}

void write_block(json::JsonWriter &w, const AnthropicBlock &b) {
  const Item &it = *b.item;
  w.begin_object();
  switch (it.kind) {
  case Item::kText: w.field("type", "text").field("text", it.text); break;
  case Item::kCall:
    w.field("type", "tool_use").field("id", it.id).field("name", it.name);
    w.raw_field("input", tool_input(it));
    break;
  case Item::kResult:
    w.field("type", "tool_result").field("tool_use_id", it.id).field("content", it.text);
    if (it.error) w.key("is_error").boolean(true);
    break;
  }
  write_cache(w, b);
  w.end_object();
}

constexpr size_t kMaxCacheBreakpoints = 4;
constexpr size_t kNoSegment = SIZE_MAX;

std::string to_anthropic_messages(const Lowered &b) {
  std::vector<SystemBlock> system;
  std::vector<AnthropicMessage> messages;
  for (const Message &m : b.messages) {
    if (is_instruction(m.role)) {
      std::string text = joined_text(m);
      if (!text.empty()) system.push_back({{m.seg}, std::move(text)});
      continue;
    }
    bool user = m.role != "assistant";
    for (const Item &it : m.items) {
      if (messages.empty() || messages.back().user != user) messages.push_back({user, {}});
      messages.back().blocks.push_back({{m.seg}, &it});
    }
  }
  for (AnthropicMessage &m : messages)
    if (m.user)
      std::stable_partition(m.blocks.begin(), m.blocks.end(), [](const AnthropicBlock &blk) {
        return blk.item->kind == Item::kResult;
      });
  static const Item kContinues{Item::kText, "(conversation continues)"};
  if (!messages.empty() && !messages.front().user)
    messages.insert(messages.begin(),
                    AnthropicMessage{true, {AnthropicBlock{{kNoSegment}, &kContinues}}});

  std::vector<Placed> tools;
  for (const Tool &t : b.tools) tools.push_back({t.seg});

  size_t marked = 0;
  auto mark = [&](Placed *p) {
    if (!p || p->cache || marked == kMaxCacheBreakpoints) return;
    p->cache = true;
    ++marked;
  };
  if (!tools.empty()) mark(&tools.back());
  if (!system.empty()) mark(&system.back());
  if (b.stable_end) {
    // The last block emitted for the segment where the prefix ends, or for
    // the nearest segment before it that emitted one.
    Placed *target = nullptr;
    for (size_t s = *b.stable_end + 1; s-- > 0 && !target;) {
      for (Placed &p : tools)
        if (p.seg == s) target = &p;
      for (Placed &p : system)
        if (p.seg == s) target = &p;
      for (AnthropicMessage &m : messages)
        for (Placed &p : m.blocks)
          if (p.seg == s) target = &p;
    }
    mark(target);
  }
  if (!messages.empty()) mark(&messages.back().blocks.back());

  json::JsonWriter w;
  w.begin_object();
  if (!system.empty()) {
    w.key("system").begin_array();
    for (const SystemBlock &s : system) {
      w.begin_object().field("type", "text").field("text", s.text);
      write_cache(w, s);
      w.end_object();
    }
    w.end_array();
  }
  w.key("messages").begin_array();
  for (const AnthropicMessage &m : messages) {
    w.begin_object().field("role", m.user ? "user" : "assistant").key("content").begin_array();
    for (const AnthropicBlock &blk : m.blocks) write_block(w, blk);
    w.end_array().end_object();
  }
  w.end_array();
  if (!b.tools.empty()) {
    w.key("tools").begin_array();
    for (size_t i = 0; i < b.tools.size(); ++i) {
      const Tool &t = b.tools[i];
      w.begin_object().field("name", t.name);
      if (t.description) w.field("description", *t.description);
      w.raw_field("input_schema", parameters(t));
      write_cache(w, tools[i]);
      w.end_object();
    }
    w.end_array();
  }
  return w.end_object().take();
}

} // namespace

std::string convert_bundle(std::string_view bundle_json, std::string_view format) {
  Format f = parse_format(format);
  simdjson::dom::parser parser;
  element bundle = json::parse(parser, bundle_json, "bundle");
  store::embedded_schema("json/bundle.schema.json").validate(bundle, "bundle");
  if (f == Format::kCanonical) return std::string(bundle_json);
  Lowered lowered = lower(bundle);
  switch (f) {
  case Format::kChat: return to_openai_chat(lowered);
  case Format::kResponses: return to_openai_responses(lowered);
  case Format::kAnthropic: return to_anthropic_messages(lowered);
  case Format::kCanonical: break;
  }
  return std::string(bundle_json);
}

} // namespace ctxdb::compile
