// response.hpp — a provider's response as the AssistantMessageCreated it
// means (engine/provider/: the edge beside compile; only the Engine calls
// it). Formats: openai.chat, openai.responses, anthropic.messages and
// gemini.generate_content, each a complete response or its stream's events
// (chunks, for Gemini) as NDJSON.
#pragma once

#include <string>
#include <string_view>

namespace ctxdb::provider {

struct Recorded {
  std::string payload;     // AssistantMessageCreated payload JSON
  std::string response_id; // the provider's id of the response
};

// kInvalidArg naming the field path when a required field is missing or
// the format is unknown; kInvalidJson / kInvalidUtf8 for bad text.
Recorded read_response(std::string_view format, bool stream, std::string_view text);

// The id of the event that records `response_id` in `session_id`: the same
// on every retry, so a second record of a response finds the first.
std::string event_id(std::string_view session_id, std::string_view response_id);

} // namespace ctxdb::provider
