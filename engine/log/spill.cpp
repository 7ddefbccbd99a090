#include "log/spill.hpp"

#include "artifact/preview.hpp"
#include "artifact/text.hpp"
#include "error.hpp"
#include "util/base64.hpp"
#include "json/json_writer.hpp"
#include "json/parse.hpp"

#include <algorithm>
#include <array>
#include <cstdint>

namespace ctxdb::log {

namespace {

constexpr std::array<std::string_view, 17> kShellTools = {"bash",
                                                          "sh",
                                                          "zsh",
                                                          "shell",
                                                          "exec",
                                                          "run",
                                                          "run_command",
                                                          "shell_command",
                                                          "exec_command",
                                                          "execute_command",
                                                          "command",
                                                          "terminal",
                                                          "powershell",
                                                          "run_terminal_cmd",
                                                          "run_shell_command",
                                                          "local_shell",
                                                          "cmd"};
constexpr std::array<std::string_view, 10> kReadTools = {
    "read",      "read_file", "view",     "view_file", "cat",
    "open_file", "file_read", "readfile", "get_file",  "read_text_file"};

bool equal_ignoring_case(std::string_view a, std::string_view b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c; };
    return lower(x) == lower(y);
  });
}

template <size_t N> bool listed(const std::array<std::string_view, N> &names, std::string_view s) {
  return std::any_of(names.begin(), names.end(),
                     [&](std::string_view n) { return equal_ignoring_case(n, s); });
}

SpillPolicy parse_policy(std::string_view s) {
  return s == "head"   ? SpillPolicy::kHead
         : s == "tail" ? SpillPolicy::kTail
                       : SpillPolicy::kHeadTail;
}

// Fields of an element or an object, or nullopt when absent or not of the type.
template <class O> std::optional<int64_t> get_int(O o, const char *key) {
  int64_t v;
  if (o[key].get(v)) return std::nullopt;
  return v;
}

template <class O> std::optional<std::string_view> get_string(O o, const char *key) {
  std::string_view v;
  if (o[key].get(v)) return std::nullopt;
  return v;
}

bool is_tool_result(std::string_view type) {
  return type == "ToolCallFinished" || type == "ToolCallFailed";
}

// The text field a type may spill, or nullptr.
const char *text_field(std::string_view type) {
  if (is_tool_result(type)) return "output";
  if (type == "FileRead") return "content";
  return nullptr;
}

// Types whose `content` blocks may hold base64 images.
bool has_blocks(std::string_view type) {
  return is_tool_result(type) || type == "UserPromptSubmitted" ||
         type == "AssistantMessageCreated" || type == "ContextAdded";
}

// Head, tail or both of `text`, ending on whole lines when the budget
// allows any; an artifact id in the marker.
artifact::Preview make_preview(std::string_view text, SpillPolicy policy,
                               const SpillConfig::Limits &l, const std::string &artifact_id) {
  // A line limit makes the preview cut between lines only; "no line
  // budget" is a limit no text reaches.
  constexpr int64_t kNoLineBudget = INT64_MAX / 4;
  artifact::PreviewSpec spec;
  spec.mode = policy == SpillPolicy::kHead   ? artifact::PreviewMode::kHead
              : policy == SpillPolicy::kTail ? artifact::PreviewMode::kTail
                                             : artifact::PreviewMode::kHeadTail;
  spec.max_lines = l.preview_lines > 0 ? l.preview_lines : kNoLineBudget;
  spec.max_bytes = std::min(l.preview_bytes, l.threshold_bytes);
  artifact::Preview p = artifact::preview_text(text, spec, artifact_id);
  // A first (or last) line longer than the whole budget: whole lines would
  // show nothing, so cut inside it (still between UTF-8 characters).
  if (p.omitted_bytes == int64_t(text.size()) && spec.max_bytes > 0) {
    spec.max_lines = -1;
    p = artifact::preview_text(text, spec, artifact_id);
  }
  return p;
}

} // namespace

std::string_view policy_name(SpillPolicy p) {
  switch (p) {
  case SpillPolicy::kHead: return "head";
  case SpillPolicy::kTail: return "tail";
  case SpillPolicy::kHeadTail: break;
  }
  return "head_tail";
}

SpillPolicy default_policy(std::string_view tool) {
  if (listed(kShellTools, tool)) return SpillPolicy::kTail;
  if (listed(kReadTools, tool)) return SpillPolicy::kHead;
  return SpillPolicy::kHeadTail;
}

SpillConfig SpillConfig::parse(std::string_view config_json) {
  SpillConfig c;
  if (config_json.empty()) return c;
  simdjson::dom::parser parser;
  simdjson::dom::element spill;
  // The config passed its schema when the store opened: types and ranges
  // hold, so absent is the only case left.
  if (json::parse(parser, config_json, "config")["spill"].get(spill)) return c;
  bool flag = true;
  if (!spill["enabled"].get(flag)) c.enabled = flag;
  if (!spill["images"].get(flag)) c.images = flag;
  auto read_limits = [](simdjson::dom::element o, auto &l) {
    if (auto v = get_int(o, "threshold_bytes")) l.threshold_bytes = *v;
    if (auto v = get_int(o, "preview_bytes")) l.preview_bytes = *v;
    if (auto v = get_int(o, "preview_lines")) l.preview_lines = *v;
  };
  read_limits(spill, c.defaults);
  simdjson::dom::object tools;
  if (!spill["tools"].get(tools)) {
    for (auto [name, rule] : tools) {
      Tool &t = c.tools[std::string(name)];
      if (auto p = get_string(rule, "policy")) t.policy = parse_policy(*p);
      read_limits(rule, t);
    }
  }
  return c;
}

SpillConfig::Limits SpillConfig::limits_for(std::string_view tool) const {
  Limits l = defaults;
  if (auto it = tools.find(tool); it != tools.end()) {
    l.threshold_bytes = it->second.threshold_bytes.value_or(l.threshold_bytes);
    l.preview_bytes = it->second.preview_bytes.value_or(l.preview_bytes);
    l.preview_lines = it->second.preview_lines.value_or(l.preview_lines);
  }
  return l;
}

SpillPolicy SpillConfig::policy_for(std::string_view tool) const {
  if (auto it = tools.find(tool); it != tools.end() && it->second.policy) return *it->second.policy;
  return default_policy(tool);
}

int64_t SpillConfig::min_threshold() const {
  int64_t least = defaults.threshold_bytes > 0 ? defaults.threshold_bytes : INT64_MAX;
  for (const auto &[name, t] : tools)
    if (t.threshold_bytes && *t.threshold_bytes > 0) least = std::min(least, *t.threshold_bytes);
  return least;
}

Spiller::Spiller(artifact::ArtifactStore &artifacts, SpillConfig config, ToolNameResolver tool_name)
    : artifacts_(artifacts), config_(std::move(config)), tool_name_(std::move(tool_name)) {}

bool Spiller::may_change(const Event &e) const {
  if (!config_.enabled) return false;
  if (text_field(e.type) && int64_t(e.payload.size()) > config_.min_threshold()) return true;
  // Payloads are canonical (no spaces), so an image block reads like this.
  return config_.images && has_blocks(e.type) &&
         e.payload.find(R"("type":"image")") != std::string::npos;
}

// The spilled text field, when it is over its tool's threshold.
std::optional<Spiller::TextSpill> Spiller::spill_text(const Event &e, simdjson::dom::object payload,
                                                      const SpillPlace &at, Spill &out) {
  const char *field = text_field(e.type);
  std::string_view text;
  if (!field || payload["artifact_id"].error() == simdjson::SUCCESS ||
      payload["spill"].error() == simdjson::SUCCESS || payload[field].get(text) ||
      int64_t(text.size()) <= config_.min_threshold())
    return std::nullopt;
  bool file = e.type == "FileRead";
  std::string name;
  if (file) {
    name = get_string(payload, "path").value_or("");
  } else if (auto n = get_string(payload, "name")) {
    name = *n;
  } else if (auto call = get_string(payload, "tool_call_id"); call && tool_name_) {
    name = tool_name_(*call, at).value_or("");
  }
  SpillConfig::Limits limits = config_.limits_for(file ? std::string_view() : name);
  if (limits.threshold_bytes == 0 || int64_t(text.size()) <= limits.threshold_bytes)
    return std::nullopt;
  SpillPolicy policy = file ? SpillPolicy::kHead : config_.policy_for(name);
  Spill::Put put;
  put.bytes.assign(text);
  put.meta.kind = file                           ? artifact::Kind::kFile
                  : policy == SpillPolicy::kTail ? artifact::Kind::kCommandLog
                                                 : artifact::Kind::kToolOutput;
  put.meta.mime = "text/plain";
  put.meta.name = name;
  put.meta.role = file ? "content" : "output";
  std::string id = artifact::content_id(text);
  artifact::Preview p = make_preview(text, policy, limits, id);
  // The fields that go after the payload's own.
  json::JsonWriter w;
  std::string f(field);
  w.begin_object()
      .field("artifact_id", id)
      .field(f + "_bytes", int64_t(text.size()))
      .field(f + "_lines", artifact::count_lines(text))
      .key("spill")
      .begin_object()
      .field("policy", policy_name(policy))
      .field("omitted_bytes", p.omitted_bytes)
      .field("omitted_lines", p.omitted_lines)
      .end_object()
      .end_object();
  out.puts.push_back(std::move(put));
  return TextSpill{std::move(p.text), w.take()};
}

// The content array with its base64 images replaced by artifact refs, or
// nullopt when it holds none.
std::optional<std::string> Spiller::spill_images(const Event &e, simdjson::dom::array blocks,
                                                 Spill &out) {
  bool changed = false;
  json::JsonWriter w;
  w.begin_array();
  size_t i = 0;
  for (simdjson::dom::element block : blocks) {
    std::string where = "payload.content[" + std::to_string(i++) + "]";
    std::string_view data, mime;
    simdjson::dom::element source;
    if (get_string(block, "type") != "image") {
      w.raw(json::canonical(block));
      continue;
    }
    if (auto d = get_string(block, "data")) {
      data = *d;
      where += ".data";
      mime = get_string(block, "mime_type").value_or(get_string(block, "media_type").value_or(""));
    } else if (!block["source"].get(source) && get_string(source, "type") == "base64" &&
               get_string(source, "data")) {
      data = *get_string(source, "data");
      where += ".source.data";
      mime =
          get_string(source, "media_type").value_or(get_string(source, "mime_type").value_or(""));
    } else {
      w.raw(json::canonical(block)); // a url, a file id, an artifact already
      continue;
    }
    std::optional<std::string> bytes = util::decode_base64(data);
    if (!bytes)
      throw Error(Code::kInvalidArg,
                  e.type + ": field '" + where + "' is not valid base64 (an image's bytes)");
    std::string mime_type(mime.empty() ? "application/octet-stream" : mime);
    std::string id = artifact::content_id(*bytes);
    w.begin_object().field("type", "image");
    simdjson::dom::object fields = block.get_object().value();
    for (auto [key, value] : fields)
      if (key != "type" && key != "data" && key != "source" && key != "mime_type" &&
          key != "media_type")
        w.raw_field(key, json::canonical(value));
    w.field("artifact_id", id)
        .field("mime_type", mime_type)
        .field("bytes", int64_t(bytes->size()))
        .end_object();
    Spill::Put put;
    put.meta.kind = artifact::Kind::kImage;
    put.meta.mime = std::move(mime_type);
    put.meta.role = "image";
    put.bytes = std::move(*bytes);
    out.puts.push_back(std::move(put));
    changed = true;
  }
  w.end_array();
  if (!changed) return std::nullopt;
  return w.take();
}

std::optional<Spill> Spiller::plan(const Event &e, const SpillPlace &at) {
  if (!may_change(e)) return std::nullopt;
  simdjson::dom::object payload;
  if (parser_.parse(e.payload).get(payload)) return std::nullopt; // not an object
  Spill out;
  std::optional<TextSpill> text = spill_text(e, payload, at, out);
  std::string field = text ? text_field(e.type) : "";
  std::optional<std::string> images;
  simdjson::dom::array blocks;
  if (config_.images && has_blocks(e.type) && !payload["content"].get(blocks))
    images = spill_images(e, blocks, out);
  if (!text && !images) return std::nullopt;
  json::JsonWriter w;
  w.begin_object();
  for (auto [key, value] : payload) {
    if (text && key == field)
      w.field(key, text->preview);
    else if (images && key == "content")
      w.raw_field(key, *images);
    else if (!text || (key != field + "_bytes" && key != field + "_lines"))
      w.raw_field(key, json::canonical(value)); // a host's own *_bytes give way to the spill's
  }
  w.end_object();
  std::string json = w.take();
  if (text) {
    // The spill's fields go last: splice its object into this one.
    json.pop_back();
    json += ',';
    json.append(text->fields, 1);
  }
  // Written by the engine's writer, read back into the one canonical form
  // the log stores and hashes.
  out.payload = json::canonical(parser_.parse(json).value());
  return out;
}

void Spiller::store(const Spill &s, const std::string &event_id) {
  for (const Spill::Put &p : s.puts) {
    artifact::Meta meta = p.meta;
    meta.event_id = event_id;
    artifacts_.put(p.bytes, meta);
  }
}

} // namespace ctxdb::log
