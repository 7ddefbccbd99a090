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
Usage gemini_usage(std::string_view what, element u) {
  constexpr std::string_view p = "usageMetadata";
  Usage r;
  int64_t prompt =
      count(what, u, "promptTokenCount", p) + count(what, u, "toolUsePromptTokenCount", p);
  r.cache_read = count(what, u, "cachedContentTokenCount", p);
  r.input = minus_cached(what, prompt, r.cache_read, "usageMetadata.cachedContentTokenCount");
  r.reasoning = count(what, u, "thoughtsTokenCount", p);
  r.output = count(what, u, "candidatesTokenCount", p) + r.reasoning;
  r.provider = json::canonical(u);
  return r;
}

void read_part(std::string_view what, element part, const std::string &path, size_t &calls,
               Answer &a) {
  Block b;
  if (auto s = opt_string(what, part, "thoughtSignature", path)) b.signature = std::string(*s);
  if (auto call = field(part, "functionCall")) {
    std::string cp = join_path(path, "functionCall");
    b.kind = Block::kToolCall;
    b.name = std::string(need_string(what, *call, "name", cp));
    // Gemini may give no id: one is made from the response's and the
    // call's place among the calls, so a retry makes the same.
    auto id = opt_string(what, *call, "id", cp);
    b.id = id ? std::string(*id) : "gemini_call_" + a.response_id + "_" + std::to_string(calls);
    ++calls;
    auto args = field(*call, "args");
    if (args && !args->is_object()) wrong_type(what, join_path(cp, "args"), "an object");
    b.args = args ? json::canonical(*args) : "{}";
  } else if (auto data = field(part, "inlineData")) {
    std::string dp = join_path(path, "inlineData");
    b.kind = Block::kImage;
    b.mime_type = std::string(need_string(what, *data, "mimeType", dp));
    b.data = std::string(need_string(what, *data, "data", dp));
    // Only images are recorded; audio or other bytes have no block.
    if (!b.mime_type.starts_with("image/")) return;
  } else if (auto text = opt_string(what, part, "text", path)) {
    b.kind = opt_bool(what, part, "thought", path) ? Block::kThinking : Block::kText;
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

namespace {

// The response's id, model, first candidate's parts (appended to a.blocks)
// and finish reason, and its usage: what one response or one chunk of a
// stream holds.
void read_response(std::string_view what, element r, Answer &a, size_t &calls) {
  // responseId is output-only and may be absent (older API versions): the
  // response's own hash stands in, so a retry is still recognised.
  if (auto id = opt_string(what, r, "responseId", ""))
    a.response_id = std::string(*id);
  else if (a.response_id.empty())
    a.response_id = "sha256_" + util::to_hex(util::sha256(json::canonical(r))).substr(0, 32);
  if (auto m = opt_string(what, r, "modelVersion", "")) a.model = std::string(*m);
  if (auto u = field(r, "usageMetadata")) a.usage = gemini_usage(what, *u);
  simdjson::dom::array candidates = need_array(what, r, "candidates", "");
  element c;
  if (candidates.at(0).get(c)) missing(what, "candidates[0]");
  if (auto f = opt_string(what, c, "finishReason", "candidates[0]"))
    a.stop_reason = std::string(*f);
  // A candidate stopped by a safety filter may have no content.
  if (auto content = field(c, "content")) {
    size_t i = 0;
    if (auto parts = opt_array(what, *content, "parts", "candidates[0].content"))
      for (element part : *parts)
        read_part(what, part, index_path("candidates[0].content.parts", i++), calls, a);
  }
}

// A streamed text part continues the text (or thought) before it; its
// thoughtSignature, which comes with the last piece, goes on that block.
void merge_text(Answer &a, size_t from) {
  std::vector<Block> merged(std::make_move_iterator(a.blocks.begin()),
                            std::make_move_iterator(a.blocks.begin() + from));
  for (size_t i = from; i < a.blocks.size(); ++i) {
    Block &b = a.blocks[i];
    bool text = b.kind == Block::kText || b.kind == Block::kThinking;
    if (text && !merged.empty() && merged.back().kind == b.kind && !merged.back().signature) {
      merged.back().text += b.text;
      merged.back().signature = std::move(b.signature);
      merged.back().tagged = merged.back().signature.has_value();
      continue;
    }
    merged.push_back(std::move(b));
  }
  a.blocks = std::move(merged);
}

} // namespace

Answer gemini_response(element r) {
  Answer a;
  a.family = "gemini";
  size_t calls = 0;
  read_response(kWhat, r, a, calls);
  return a;
}

// streamGenerateContent: each chunk a GenerateContentResponse whose parts
// continue the answer
// (https://ai.google.dev/api/generate-content#method:-models.streamgeneratecontent); the last chunk
// has the finish reason and the usage. A stream without a finishReason ended early.
Answer gemini_stream(std::string_view ndjson) {
  constexpr std::string_view kStream = "gemini.generate_content stream";
  Answer a;
  a.family = "gemini";
  size_t calls = 0;
  bool any = false;
  for_each_event(kStream, ndjson, [&](element chunk, int64_t line) {
    std::string where = std::string(kStream) + " line " + std::to_string(line);
    size_t from = a.blocks.empty() ? 0 : a.blocks.size() - 1;
    read_response(where, chunk, a, calls);
    merge_text(a, from);
    any = true;
  });
  if (!any) throw Error(Code::kInvalidArg, std::string(kStream) + ": the stream has no chunks");
  if (!a.stop_reason)
    throw Error(Code::kInvalidArg, std::string(kStream) +
                                       ": candidates[0].finishReason is missing (the stream "
                                       "ended before its last chunk)");
  return a;
}

} // namespace ctxdb::provider
