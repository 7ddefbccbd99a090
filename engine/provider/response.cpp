#include "provider/response.hpp"

#include "error.hpp"
#include "provider/formats.hpp"
#include "util/sha256.hpp"
#include "json/parse.hpp"

namespace ctxdb::provider {

namespace {

Answer read(std::string_view format, bool stream, std::string_view text) {
  simdjson::dom::parser parser;
  auto complete = [&](std::string_view what) {
    simdjson::dom::element doc = json::parse(parser, text, what);
    if (!doc.is_object())
      throw Error(Code::kInvalidArg, std::string(what) + " must be a JSON object");
    return doc;
  };
  if (format == "openai.chat")
    return stream ? openai_chat_stream(text) : openai_chat(complete("openai.chat response"));
  if (format == "openai.responses")
    return stream ? openai_responses_stream(text)
                  : openai_responses(complete("openai.responses response"),
                                     "openai.responses response");
  if (format == "anthropic.messages")
    return stream ? anthropic_stream(text)
                  : anthropic_message(complete("anthropic.messages response"));
  if (format == "gemini.generate_content")
    return stream ? gemini_stream(text)
                  : gemini_response(complete("gemini.generate_content response"));
  throw Error(Code::kInvalidArg, "unknown response format '" + std::string(format) +
                                     "' (openai.chat, openai.responses, anthropic.messages, "
                                     "gemini.generate_content)");
}

} // namespace

Recorded read_response(std::string_view format, bool stream, std::string_view text) {
  Answer a = read(format, stream, text);
  if (a.response_id.empty())
    throw Error(Code::kInvalidArg, std::string(format) + ": the response's id is empty");
  return Recorded{write_payload(a), std::move(a.response_id)};
}

std::string event_id(std::string_view session_id, std::string_view response_id) {
  util::Sha256 h;
  h.update(session_id).update("\n", 1).update(response_id);
  return "rsp_" + util::to_hex(h.finish()).substr(0, 40);
}

} // namespace ctxdb::provider
