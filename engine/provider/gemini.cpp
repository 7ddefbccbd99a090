// gemini.generate_content: a GenerateContentResponse; the first candidate
// is recorded. https://ai.google.dev/api/generate-content#generatecontentresponse
// Parts: text, thought text (thought: true), functionCall, inlineData; a
// part's thoughtSignature is kept on the block it came with
// (https://ai.google.dev/gemini-api/docs/thought-signatures).
#include "error.hpp"
#include "provider/formats.hpp"
#include "util/sha256.hpp"
#include "json/parse.hpp"

namespace ctxdb::provider {

namespace {

using simdjson::dom::element;

constexpr std::string_view kWhat = "gemini.generate_content response";

// promptTokenCount includes cachedContentTokenCount; candidatesTokenCount
// excludes thoughtsTokenCount, which is output too; toolUsePromptTokenCount
// is input the model read from tool use.
// https://ai.google.dev/api/generate-content#UsageMetadata
Usage gemini_usage(element u) {
  constexpr std::string_view p = "usageMetadata";
  Usage r;
  int64_t prompt =
      count(kWhat, u, "promptTokenCount", p) + count(kWhat, u, "toolUsePromptTokenCount", p);
  r.cache_read = count(kWhat, u, "cachedContentTokenCount", p);
  r.input = minus_cached(kWhat, prompt, r.cache_read, "usageMetadata.cachedContentTokenCount");
  r.reasoning = count(kWhat, u, "thoughtsTokenCount", p);
  r.output = count(kWhat, u, "candidatesTokenCount", p) + r.reasoning;
  r.provider = json::canonical(u);
  return r;
}

void read_part(element part, const std::string &path, size_t &calls, Answer &a) {
  Block b;
  if (auto s = opt_string(kWhat, part, "thoughtSignature", path)) b.signature = std::string(*s);
  if (auto call = field(part, "functionCall")) {
    std::string cp = join_path(path, "functionCall");
    b.kind = Block::kToolCall;
    b.name = std::string(need_string(kWhat, *call, "name", cp));
    // Gemini may give no id: one is made from the response's and the
    // call's place among the calls, so a retry makes the same.
    auto id = opt_string(kWhat, *call, "id", cp);
    b.id = id ? std::string(*id) : "gemini_call_" + a.response_id + "_" + std::to_string(calls);
    ++calls;
    auto args = field(*call, "args");
    if (args && !args->is_object()) wrong_type(kWhat, join_path(cp, "args"), "an object");
    b.args = args ? json::canonical(*args) : "{}";
  } else if (auto data = field(part, "inlineData")) {
    std::string dp = join_path(path, "inlineData");
    b.kind = Block::kImage;
    b.mime_type = std::string(need_string(kWhat, *data, "mimeType", dp));
    b.data = std::string(need_string(kWhat, *data, "data", dp));
    // Only images are recorded; audio or other bytes have no block.
    if (!b.mime_type.starts_with("image/")) return;
  } else if (auto text = opt_string(kWhat, part, "text", path)) {
    b.kind = opt_bool(kWhat, part, "thought", path) ? Block::kThinking : Block::kText;
    b.text = std::string(*text);
    // A thought without text but with a signature is still state to replay.
    if (b.text.empty() && !b.signature) return;
  } else {
    return;
  }
  b.tagged = b.signature.has_value();
  a.blocks.push_back(std::move(b));
}

} // namespace

Answer gemini_response(element r) {
  Answer a;
  a.family = "gemini";
  // responseId is output-only and may be absent (older API versions): the
  // response's own hash stands in, so a retry is still recognised.
  if (auto id = opt_string(kWhat, r, "responseId", ""))
    a.response_id = std::string(*id);
  else
    a.response_id = "sha256_" + util::to_hex(util::sha256(json::canonical(r))).substr(0, 32);
  a.model = std::string(opt_string(kWhat, r, "modelVersion", "").value_or(""));
  simdjson::dom::array candidates = need_array(kWhat, r, "candidates", "");
  element c;
  if (candidates.at(0).get(c)) missing(kWhat, "candidates[0]");
  if (auto f = opt_string(kWhat, c, "finishReason", "candidates[0]"))
    a.stop_reason = std::string(*f);
  // A candidate stopped by a safety filter may have no content.
  if (auto content = field(c, "content")) {
    size_t i = 0, calls = 0;
    if (auto parts = opt_array(kWhat, *content, "parts", "candidates[0].content"))
      for (element part : *parts)
        read_part(part, index_path("candidates[0].content.parts", i++), calls, a);
  }
  if (auto u = field(r, "usageMetadata")) a.usage = gemini_usage(*u);
  return a;
}

} // namespace ctxdb::provider
