// formats.hpp — one reader per provider format, each from the provider's
// complete response object and from its stream's events as NDJSON.
#pragma once

#include "provider/answer.hpp"

#include <simdjson.h>

#include <string_view>

namespace ctxdb::provider {

// openai.chat: a ChatCompletion; a stream of ChatCompletionChunks.
Answer openai_chat(simdjson::dom::element response);
Answer openai_chat_stream(std::string_view ndjson);
// openai.responses: a Response; a stream of its events.
Answer openai_responses(simdjson::dom::element response, std::string_view what);
Answer openai_responses_stream(std::string_view ndjson);
// anthropic.messages: a Message; a stream of its events.
Answer anthropic_message(simdjson::dom::element response);
Answer anthropic_stream(std::string_view ndjson);
// gemini.generate_content: a GenerateContentResponse; the chunks of
// streamGenerateContent.
Answer gemini_response(simdjson::dom::element response);
Answer gemini_stream(std::string_view ndjson);

} // namespace ctxdb::provider
