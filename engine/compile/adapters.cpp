#include "compile/adapters.hpp"

#include "compile/adapter_lowering.hpp"
#include "error.hpp"
#include "store/store.hpp"
#include "util/base64.hpp"
#include "json/json_writer.hpp"
#include "json/parse.hpp"

#include <simdjson.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ctxdb::compile {

namespace adapt {

namespace {

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

bool opt_bool(element o, const char *key, const std::string &where) {
  auto v = o[key];
  if (v.error()) return false;
  bool b = false;
  if (v.get(b)) bad(where + "." + key, "must be a boolean");
  return b;
}

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

Image lower_image(element block, const std::string &where, const ArtifactReader *reader) {
  Image img{
      req_str(block, "artifact_id", where), opt_str(block, "mime_type", where).value_or(""), {}};
  if (!reader) return img;
  try {
    img.base64 = util::encode_base64(reader->read(img.artifact_id));
  } catch (const Error &e) {
    // The store's message names the id; say which block held it.
    throw Error(e.code(), "bundle: field '" + where + ".artifact_id': " + e.what());
  }
  return img;
}

Thinking lower_thinking(element block, const std::string &where) {
  Thinking t;
  t.provider = opt_str(block, "provider", where).value_or("");
  t.text = opt_str(block, "text", where).value_or("");
  t.signature = opt_str(block, "signature", where);
  t.redacted = opt_bool(block, "redacted", where);
  t.data = opt_str(block, "data", where).value_or("");
  t.id = opt_str(block, "id", where).value_or("");
  t.encrypted_content = opt_str(block, "encrypted_content", where);
  if (auto s = block["summary"]; !s.error()) {
    simdjson::dom::array list;
    if (s.get(list)) bad(where + ".summary", "must be an array of strings");
    for (element e : list) {
      std::string_view text;
      if (e.get(text)) bad(where + ".summary", "must be an array of strings");
      t.summary.push_back(text);
    }
  }
  return t;
}

Item lower_call(element block, const std::string &where) {
  Item it{Item::kCall, {}, req_str(block, "id", where), req_str(block, "name", where)};
  if (auto a = block["args"]; !a.error()) {
    if (!a.value().is_object() && !a.value().is_string())
      bad(where + ".args", "must be an object or a string");
    it.args = a.value();
  }
  it.provider = opt_str(block, "provider", where).value_or("");
  it.signature = opt_str(block, "signature", where);
  return it;
}

// A result's text: an error's message before its output; a cancelled
// call's text says it was interrupted. Never empty: a provider refuses an
// empty text block.
Item lower_result(element block, const std::string &where, const ArtifactReader *reader) {
  Item it{Item::kResult, {}, req_str(block, "tool_call_id", where)};
  it.name = opt_str(block, "name", where).value_or("");
  std::string_view status = opt_str(block, "status", where).value_or("success");
  it.error = status == "error" || status == "cancelled";
  std::string_view text = opt_str(block, "text", where).value_or("");
  std::string_view error = opt_str(block, "error", where).value_or("");
  std::string_view first = status == "error" ? error : text;
  std::string_view second = status == "error" ? text : (it.error ? error : "");
  it.text = first;
  if (!second.empty()) it.text += (it.text.empty() ? "" : "\n\n") + std::string(second);
  if (blank(it.text))
    if (auto id = opt_str(block, "artifact_id", where))
      it.text = "[output in artifact " + std::string(*id) + "]";
  if (auto c = block["content"]; !c.error()) {
    simdjson::dom::array list;
    if (c.get(list)) bad(where + ".content", "must be an array of image and text blocks");
    size_t k = 0;
    for (element part : list) {
      std::string at = where + ".content[" + std::to_string(k++) + "]";
      std::string_view type = req_str(part, "type", at);
      if (type == "image") {
        it.images.push_back(lower_image(part, at, reader));
      } else if (type == "text") {
        // The placeholder of an image the compiler left out to fit.
        std::string_view t = req_str(part, "text", at);
        if (!blank(t))
          it.text = blank(it.text) ? std::string(t) : it.text + "\n\n" + std::string(t);
      } else {
        bad(at + ".type", "must be image or text");
      }
    }
  }
  if (blank(it.text) && it.images.empty()) it.text = "(no output)";
  return it;
}

// A block that is neither a call nor a result, or nullopt for one no
// provider sees (a whitespace-only text, thinking outside the assistant's
// turn).
std::optional<Item> lower_other(element block, std::string_view type, std::string_view role,
                                const std::string &where, const ArtifactReader *reader) {
  auto text_item = [](std::string text) -> std::optional<Item> {
    if (blank(text)) return std::nullopt;
    return Item{Item::kText, std::move(text)};
  };
  auto named = [&](const char *what, const char *key) {
    std::optional<std::string_view> v = opt_str(block, key, where);
    return text_item("[" + std::string(what) + (v ? ": " + std::string(*v) : "") + "]");
  };
  if (type == "text") return text_item(std::string(req_str(block, "text", where)));
  if (role == "context" || role == "system" || role == "developer") {
    if (type == "thinking") return std::nullopt;
    bad(where + ".type", "a " + std::string(role) + " segment holds text blocks only");
  }
  if (type == "refusal") {
    std::string text(req_str(block, "text", where));
    if (blank(text)) return std::nullopt;
    return Item{Item::kRefusal, std::move(text)};
  }
  if (type == "thinking") {
    if (role != "assistant") return std::nullopt;
    Item it{Item::kThinking};
    it.thinking = lower_thinking(block, where);
    return it;
  }
  if (type == "image") {
    Item it{Item::kImage};
    if (!block["artifact_id"].error()) {
      it.images.push_back(lower_image(block, where, reader));
    } else if (std::optional<std::string_view> data = opt_str(block, "data", where)) {
      // Pixels the host kept inline (spill off): sent as they are.
      it.images.push_back(Image{"", req_str(block, "mime_type", where), std::string(*data)});
    } else {
      return text_item("[image]");
    }
    return it;
  }
  if (type == "file_ref") return named("file", "path");
  if (type == "artifact_ref") return named("artifact", "artifact_id");
  bad(where + ".type", "'" + std::string(type) + "' belongs in the tools segment");
}

Message lower_message(element segment, size_t seg, const ArtifactReader *reader) {
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
                                            : lower_result(block, where, reader));
      continue;
    }
    if (m.role == "tool" && type != "thinking")
      bad(where + ".type", "a tool segment holds tool_result blocks only");
    if (std::optional<Item> it = lower_other(block, type, m.role, where, reader))
      m.items.push_back(std::move(*it));
  }
  return m;
}

bool is_conversation(std::string_view role) {
  return role == "user" || role == "assistant" || role == "tool";
}

// Results without a name take their call's.
void name_results(Lowered &out) {
  std::map<std::string_view, std::string_view> names;
  for (const Message &m : out.messages)
    for (const Item &it : m.items)
      if (it.kind == Item::kCall) names.emplace(it.id, it.name);
  for (Message &m : out.messages)
    for (Item &it : m.items)
      if (it.kind == Item::kResult && it.name.empty())
        if (auto n = names.find(it.id); n != names.end()) it.name = n->second;
}

} // namespace

bool blank(std::string_view s) {
  return s.find_first_not_of(" \t\n\r\f\v") == std::string_view::npos;
}

bool is_instruction(std::string_view role) { return role == "system" || role == "developer"; }

Lowered lower(element bundle, const ArtifactReader *reader) {
  Lowered out;
  int64_t stable = bundle["stable_prefix_tokens"].get_int64().value();
  int64_t sum = 0;
  bool in_prefix = stable > 0;
  bool conversation = false;
  std::string latest;
  size_t i = 0;
  for (element segment : array_at(bundle, "segments")) {
    size_t seg = i++;
    std::string_view role = segment["role"].get_string().value();
    conversation = conversation || is_conversation(role);
    if (segment["kind"].get_string().value() == "tools") {
      lower_tools(segment, seg, out);
    } else if (role == "context" && conversation) {
      // Context after the conversation started is the latest turn's.
      std::string text = joined_text(lower_message(segment, seg, reader));
      if (!text.empty()) latest += (latest.empty() ? "" : "\n\n") + text;
    } else {
      out.messages.push_back(lower_message(segment, seg, reader));
    }
    sum += segment["tokens"].get_int64().value();
    in_prefix = in_prefix && sum <= stable;
    if (in_prefix) out.stable_end = seg;
  }
  if (!latest.empty()) out.latest_context = "<context>\n" + latest + "\n</context>";
  name_results(out);
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

std::string call_arguments(const Item &call) {
  if (!call.args) return "{}";
  std::string_view s;
  if (!call.args->get(s)) return std::string(s);
  return json::canonical(*call.args);
}

std::string call_input(const Item &call) {
  if (!call.args) return "{}";
  std::string_view s;
  if (call.args->get(s)) return json::canonical(*call.args);
  simdjson::dom::parser parser;
  element parsed;
  if (!parser.parse(s).get(parsed) && parsed.is_object()) return json::canonical(parsed);
  json::JsonWriter w;
  return w.begin_object().field("input", s).end_object().take();
}

constexpr std::string_view kEmptyParameters = R"({"type":"object","properties":{}})";

std::string tool_parameters(const Tool &t) {
  return t.parameters ? json::canonical(*t.parameters) : std::string(kEmptyParameters);
}

std::string data_url(const Image &image) {
  return "data:" + std::string(image.mime_type) + ";base64," + image.base64;
}

bool accepts_image(std::string_view format, const Image &image) {
  if (image.base64.empty() || !image.omitted.empty()) return false;
  std::string_view m = image.mime_type;
  // Gemini: PNG, JPEG, WEBP, HEIC, HEIF
  // (https://ai.google.dev/gemini-api/docs/image-understanding).
  if (format == "gemini.generate_content")
    return m == "image/png" || m == "image/jpeg" || m == "image/webp" || m == "image/heic" ||
           m == "image/heif";
  // Anthropic: JPEG, PNG, GIF, WebP
  // (https://docs.anthropic.com/en/docs/build-with-claude/vision); OpenAI:
  // PNG, JPEG, WEBP, non-animated GIF
  // (https://platform.openai.com/docs/guides/images-vision); the AI SDK
  // hands the image to one of them.
  return m == "image/png" || m == "image/jpeg" || m == "image/gif" || m == "image/webp";
}

std::string image_placeholder(const Image &image) {
  std::string s = image.artifact_id.empty() ? "[image: inline"
                                            : "[image: artifact " + std::string(image.artifact_id);
  if (!image.mime_type.empty()) s += ", " + std::string(image.mime_type);
  if (!image.omitted.empty()) s += "; omitted: " + image.omitted;
  return s + "]";
}

namespace {

struct ImageLimits {
  size_t count;      // images per request
  size_t each;       // bytes of one image's base64
  size_t total;      // bytes of all images' base64
  const char *owner; // whose limit, for the placeholder
};

constexpr size_t kMiB = 1024 * 1024;

ImageLimits image_limits(std::string_view format) {
  // https://docs.anthropic.com/en/docs/build-with-claude/vision: up to 100
  // images per API request, 5 MB each.
  if (format == "anthropic.messages") return {100, 5 * kMiB, SIZE_MAX, "Anthropic"};
  // https://ai.google.dev/gemini-api/docs/image-understanding: inline data
  // for requests under 20 MB in all.
  if (format == "gemini.generate_content") return {3600, 20 * kMiB, 20 * kMiB, "Gemini"};
  // https://platform.openai.com/docs/guides/images-vision: up to 500 images
  // and 50 MB of payload per request.
  if (format == "openai.chat" || format == "openai.responses")
    return {500, 50 * kMiB, 50 * kMiB, "OpenAI"};
  // ai.sdk: the strictest of the providers it may reach.
  return {100, 5 * kMiB, 20 * kMiB, "the strictest provider"};
}

} // namespace

void limit_images(Lowered &b, std::string_view format) {
  ImageLimits lim = image_limits(format);
  size_t count = 0, total = 0;
  auto visit = [&](Image &img) {
    if (!accepts_image(format, img)) return;
    size_t n = img.base64.size();
    if (n > lim.each)
      img.omitted = "larger than " + std::string(lim.owner) + "'s limit per image";
    else if (count == lim.count)
      img.omitted = "beyond " + std::string(lim.owner) + "'s " + std::to_string(lim.count) +
                    " images per request";
    else if (total + n > lim.total)
      img.omitted = "beyond " + std::string(lim.owner) + "'s request size limit";
    if (!img.omitted.empty()) return;
    ++count;
    total += n;
  };
  for (auto m = b.messages.rbegin(); m != b.messages.rend(); ++m)
    for (auto it = m->items.rbegin(); it != m->items.rend(); ++it)
      for (auto img = it->images.rbegin(); img != it->images.rend(); ++img) visit(*img);
}

std::string_view result_name(const Item &result) {
  if (result.name.empty())
    throw Error(Code::kInvalidArg, "bundle: the tool_result for call '" + std::string(result.id) +
                                       "' has no name and no call in the bundle names it");
  return result.name;
}

} // namespace adapt

namespace {

enum class Format { kCanonical, kChat, kResponses, kAnthropic, kGemini, kAiSdk };

Format parse_format(std::string_view name) {
  for (size_t i = 0; i < std::size(kBundleFormats); ++i)
    if (name == kBundleFormats[i]) return static_cast<Format>(i);
  std::string known;
  for (std::string_view f : kBundleFormats) known += (known.empty() ? "" : ", ") + std::string(f);
  throw Error(Code::kInvalidArg,
              "unknown bundle format '" + std::string(name) + "' (known: " + known + ")");
}

} // namespace

std::string convert_bundle(std::string_view bundle_json, std::string_view format,
                           const ArtifactReader *reader) {
  Format f = parse_format(format);
  simdjson::dom::parser parser;
  simdjson::dom::element bundle = json::parse(parser, bundle_json, "bundle");
  store::embedded_schema("json/bundle.schema.json").validate(bundle, "bundle");
  if (f == Format::kCanonical) return std::string(bundle_json);
  adapt::Lowered lowered = adapt::lower(bundle, reader);
  adapt::limit_images(lowered, format);
  switch (f) {
  case Format::kChat: return adapt::to_openai_chat(lowered);
  case Format::kResponses: return adapt::to_openai_responses(lowered);
  case Format::kAnthropic: return adapt::to_anthropic_messages(lowered);
  case Format::kGemini: return adapt::to_gemini(lowered);
  case Format::kAiSdk: return adapt::to_ai_sdk(lowered);
  case Format::kCanonical: break;
  }
  return std::string(bundle_json);
}

} // namespace ctxdb::compile
