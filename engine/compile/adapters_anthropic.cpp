// anthropic.messages (adapters.hpp says what it emits).
#include "compile/adapter_lowering.hpp"

#include "util/sha256.hpp"
#include "json/json_writer.hpp"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

namespace ctxdb::compile::adapt {

namespace {

constexpr std::string_view kFormat = "anthropic.messages";

// Where each emitted block came from, and whether it carries a cache
// breakpoint.
struct Placed {
  size_t seg;
  bool cache = false;
};

struct Block : Placed {
  const Item *item;
};

struct AnthropicMessage {
  bool user;
  std::vector<Block> blocks;
};

struct SystemBlock : Placed {
  std::string text;
};

constexpr size_t kMaxCacheBreakpoints = 4;
constexpr size_t kNoSegment = SIZE_MAX;

// Thinking goes back only to the family that produced it, and only with
// what the API verifies: a signature, or a redacted block's data
// (https://docs.anthropic.com/en/docs/build-with-claude/extended-thinking#preserving-thinking-blocks).
bool sendable(const Item &it) {
  if (it.kind != Item::kThinking) return true;
  const Thinking &t = it.thinking;
  if (t.provider != "anthropic") return false;
  return t.redacted ? !t.data.empty() : t.signature.has_value();
}

// Thinking blocks cannot carry cache_control (they are cached as part of
// the turn around them).
bool cacheable(const Block &b) { return b.item->kind != Item::kThinking; }

bool id_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

// tool_use ids match ^[a-zA-Z0-9_-]+$ (https://docs.anthropic.com/en/api/messages).
// An id made elsewhere that does not (Pi keeps a Responses call as
// "call_…|fc_…") is written with each other character as '_' and 8 hex
// digits of its hash, the same on the call and on its result.
std::string tool_use_id(std::string_view id) {
  if (!id.empty() && std::all_of(id.begin(), id.end(), id_char)) return std::string(id);
  std::string s(id);
  for (char &c : s)
    if (!id_char(c)) c = '_';
  return s + "_" + util::to_hex(util::sha256(id)).substr(0, 8);
}

void write_cache(json::JsonWriter &w, const Placed &p) {
  if (p.cache) w.key("cache_control").begin_object().field("type", "ephemeral").end_object();
}

// An image block's fields, into an open object: a base64 source
// (https://docs.anthropic.com/en/docs/build-with-claude/vision), or the
// placeholder text of an image the API does not take.
void image_fields(json::JsonWriter &w, const Image &img) {
  if (!accepts_image(kFormat, img)) {
    w.field("type", "text").field("text", image_placeholder(img));
    return;
  }
  w.field("type", "image").key("source").begin_object();
  w.field("type", "base64").field("media_type", img.mime_type).field("data", img.base64);
  w.end_object();
}

// A result: a string, or text and image blocks when it has images
// (https://docs.anthropic.com/en/docs/agents-and-tools/tool-use/implement-tool-use#handling-tool-use-and-tool-result-content-blocks).
// A cancelled call's result is an error result.
void write_result(json::JsonWriter &w, const Item &it) {
  w.field("type", "tool_result").field("tool_use_id", tool_use_id(it.id)).key("content");
  if (it.images.empty()) {
    w.value(it.text);
  } else {
    w.begin_array();
    if (!blank(it.text)) w.begin_object().field("type", "text").field("text", it.text).end_object();
    for (const Image &img : it.images) {
      w.begin_object();
      image_fields(w, img);
      w.end_object();
    }
    w.end_array();
  }
  if (it.error) w.key("is_error").boolean(true);
}

void write_block(json::JsonWriter &w, const Block &b) {
  const Item &it = *b.item;
  w.begin_object();
  switch (it.kind) {
  case Item::kText:
  case Item::kRefusal: w.field("type", "text").field("text", it.text); break;
  case Item::kImage: image_fields(w, it.images[0]); break;
  case Item::kThinking:
    if (it.thinking.redacted)
      w.field("type", "redacted_thinking").field("data", it.thinking.data);
    else
      w.field("type", "thinking")
          .field("thinking", it.thinking.text)
          .field("signature", *it.thinking.signature);
    break;
  case Item::kCall:
    w.field("type", "tool_use").field("id", tool_use_id(it.id)).field("name", it.name);
    w.raw_field("input", call_input(it));
    break;
  case Item::kResult: write_result(w, it); break;
  }
  write_cache(w, b);
  w.end_object();
}

struct Built {
  std::vector<SystemBlock> system;
  std::vector<AnthropicMessage> messages;
  const Item *context = nullptr; // the latest-turn context block, when placed
};

// Roles alternate strictly: consecutive same-role segments (tool counts as
// user) merge into one message, and in a user message the tool_result
// blocks come first
// (https://docs.anthropic.com/en/api/messages: "consecutive user or
// assistant turns … will be combined"; tool_result blocks must come first).
Built build(const Lowered &b, std::deque<Item> &made) {
  Built out;
  for (const Message &m : b.messages) {
    if (is_instruction(m.role) || m.role == "context") {
      std::string text = joined_text(m);
      if (!text.empty()) out.system.push_back({{m.seg}, std::move(text)});
      continue;
    }
    bool user = m.role != "assistant";
    for (const Item &it : m.items) {
      if (!sendable(it)) continue;
      if (out.messages.empty() || out.messages.back().user != user)
        out.messages.push_back({user, {}});
      const Item *block = &it;
      if (!user && it.kind == Item::kImage) {
        // Assistant turns take no image blocks: a model-made image is named.
        made.push_back(Item{Item::kText, image_placeholder(it.images[0])});
        block = &made.back();
      }
      out.messages.back().blocks.push_back({{m.seg}, block});
    }
  }
  for (AnthropicMessage &m : out.messages)
    if (m.user)
      std::stable_partition(m.blocks.begin(), m.blocks.end(),
                            [](const Block &blk) { return blk.item->kind == Item::kResult; });
  // The first message must be the user's.
  if (!out.messages.empty() && !out.messages.front().user) {
    made.push_back(Item{Item::kText, "(conversation continues)"});
    out.messages.insert(out.messages.begin(),
                        AnthropicMessage{true, {Block{{kNoSegment}, &made.back()}}});
  }
  if (b.latest_context) {
    made.push_back(Item{Item::kText, *b.latest_context});
    out.context = &made.back();
    auto last_user = std::find_if(out.messages.rbegin(), out.messages.rend(),
                                  [](const AnthropicMessage &m) { return m.user; });
    if (last_user == out.messages.rend())
      out.messages.push_back({true, {Block{{kNoSegment}, out.context}}});
    else
      last_user->blocks.push_back(Block{{kNoSegment}, out.context});
  }
  return out;
}

// A final assistant message (a continuation) may not end in whitespace
// (https://docs.anthropic.com/en/api/messages: "the final assistant content
// cannot end with trailing whitespace").
void trim_final_assistant(std::vector<AnthropicMessage> &messages, std::deque<Item> &made) {
  if (messages.empty() || messages.back().user) return;
  Block &last = messages.back().blocks.back();
  if (last.item->kind != Item::kText) return;
  std::string text = last.item->text;
  text.erase(text.find_last_not_of(" \t\n\r\f\v") + 1);
  if (text == last.item->text) return;
  made.push_back(Item{Item::kText, std::move(text)});
  last.item = &made.back();
}

// cache_control {"type":"ephemeral"} in this priority, at most 4
// (https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching),
// never twice on one block: the last tool, the last system block (the end
// of the standing context), the last block of the segment where the stable
// prefix ends, and the last block of the conversation before the
// latest-turn context (which changes every turn, so the next request
// shares everything before it).
void place_breakpoints(const Lowered &b, Built &built, std::vector<Placed> &tools) {
  size_t marked = 0;
  auto mark = [&](Placed *p) {
    if (!p || p->cache || marked == kMaxCacheBreakpoints) return;
    p->cache = true;
    ++marked;
  };
  if (!tools.empty()) mark(&tools.back());
  if (!built.system.empty()) mark(&built.system.back());
  if (b.stable_end) {
    // The last block emitted for the segment where the prefix ends, or for
    // the nearest segment before it that emitted one.
    Placed *target = nullptr;
    for (size_t s = *b.stable_end + 1; s-- > 0 && !target;) {
      for (Placed &p : tools)
        if (p.seg == s) target = &p;
      for (Placed &p : built.system)
        if (p.seg == s) target = &p;
      for (AnthropicMessage &m : built.messages)
        for (Block &p : m.blocks)
          if (p.seg == s && cacheable(p)) target = &p;
    }
    mark(target);
  }
  Block *tail = nullptr;
  for (AnthropicMessage &m : built.messages)
    for (Block &blk : m.blocks)
      if (blk.item != built.context && cacheable(blk)) tail = &blk;
  mark(tail);
}

} // namespace

std::string to_anthropic_messages(const Lowered &b) {
  std::deque<Item> made;
  Built built = build(b, made);
  trim_final_assistant(built.messages, made);
  std::vector<Placed> tools;
  for (const Tool &t : b.tools) tools.push_back({t.seg});
  place_breakpoints(b, built, tools);

  json::JsonWriter w;
  w.begin_object();
  if (!built.system.empty()) {
    w.key("system").begin_array();
    for (const SystemBlock &s : built.system) {
      w.begin_object().field("type", "text").field("text", s.text);
      write_cache(w, s);
      w.end_object();
    }
    w.end_array();
  }
  w.key("messages").begin_array();
  for (const AnthropicMessage &m : built.messages) {
    w.begin_object().field("role", m.user ? "user" : "assistant").key("content").begin_array();
    for (const Block &blk : m.blocks) write_block(w, blk);
    w.end_array().end_object();
  }
  w.end_array();
  if (!b.tools.empty()) {
    w.key("tools").begin_array();
    for (size_t i = 0; i < b.tools.size(); ++i) {
      const Tool &t = b.tools[i];
      w.begin_object().field("name", t.name);
      if (t.description) w.field("description", *t.description);
      w.raw_field("input_schema", tool_parameters(t));
      write_cache(w, tools[i]);
      w.end_object();
    }
    w.end_array();
  }
  return w.end_object().take();
}

} // namespace ctxdb::compile::adapt
