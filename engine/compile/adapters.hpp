// adapters.hpp — the edge of the context compiler: a canonical bundle
// (schema/json/bundle.schema.json) turned into the request shape of one
// provider. Nothing else in the engine knows a provider format exists.
//
// Every output is the part of the provider's request body that the bundle
// decides: the conversation and the tools. The host adds model, max_tokens,
// temperature, stream and the like. Outputs are compact JSON from
// json::JsonWriter, a pure function of the bundle's bytes: the same bundle
// gives byte-identical output.
//
// openai.chat       {"messages":[...],"tools":[{"type":"function","function":{...}}]}
//   system/developer/user segments: one message each, string content (the
//   texts of its blocks joined with "\n\n"). assistant: {"role":"assistant",
//   "content": text or null, "tool_calls":[{"id","type":"function",
//   "function":{"name","arguments"}}]}, arguments a JSON string (an object
//   arg is serialized; a string arg passes as it is). tool: one
//   {"role":"tool","tool_call_id","content"} per tool_result.
// openai.responses  {"input":[items],"tools":[{"type":"function","name",...}]}
//   messages {"type":"message","role","content":[{"type":"input_text",
//   "text"}]} (assistant: output_text with "annotations":[], as the
//   documented output_text part has them); an assistant's consecutive texts
//   share one message item, its calls are {"type":"function_call","call_id",
//   "name","arguments"} in block order; results {"type":
//   "function_call_output","call_id","output"}. Tools carry "strict":false
//   and always "parameters": Responses treats an omitted strict as "make the
//   schema strict when possible", which would change the tools' meaning from
//   the bundle's (and Chat Completions') non-strict one.
// anthropic.messages {"system":[{"type":"text","text"}],"messages":[...],
//   "tools":[{"name","description"?,"input_schema"}]}
//   system and developer segments: one system block each. Everything else
//   alternates user/assistant strictly: consecutive same-role segments (tool
//   counts as user) merge into one message's content array, and in a user
//   message the tool_result blocks come first (Anthropic rejects text before
//   them). tool_use "input" is the call's args as an object: an object arg as
//   it is, a string that parses to an object that object, any other string
//   {"input": the string}, no args {}. When the first message would be the
//   assistant's, a user text block "(conversation continues)" goes before
//   it, as the API requires a user turn first. cache_control {"type":
//   "ephemeral"} goes, in this priority and at most 4 (Anthropic's limit),
//   never twice on one block: on the last tool, the last system block, the
//   last block emitted for the segment where the bundle's stable prefix ends
//   (the leading segments whose tokens sum to <= stable_prefix_tokens; none
//   when that is 0), and the last block of the last message.
//
// In every format: the "tools" segment (one tool_specs block) becomes the
// provider's tools field, never a message; thinking blocks are dropped (they
// carry no provider signature); an image becomes a text placeholder naming
// its artifact (the bundle holds no pixels), a file_ref or artifact_ref a
// text naming it; empty texts and segments left empty are skipped; an error
// result's content is its error text (then its output, if it has one), a
// pruned one its preview text as the compiler wrote it. "tools" is omitted
// when there are none, "system" when there is none. A pending call (no
// result yet) is passed through: the host answers it before sending.
#pragma once

#include <string>
#include <string_view>

namespace ctxdb::compile {

// The formats convert_bundle accepts, in the order error messages list them.
inline constexpr std::string_view kBundleFormats[] = {"canonical", "openai.chat",
                                                      "openai.responses", "anthropic.messages"};

// Converts a canonical bundle to `format`. "canonical" returns bundle_json
// byte for byte (after the same checks). Throws ctxdb::Error: kInvalidArg
// for an unknown format (naming it and the known ones); kInvalidJson /
// kInvalidUtf8 for a bundle that is not JSON / not UTF-8; kInvalidArg naming the
// field for one that does not match bundle.schema.json, or whose blocks
// break the bundle's rules (a tool_call outside an assistant segment, a
// tool_result outside a tool segment, a call without id or name, …).
std::string convert_bundle(std::string_view bundle_json, std::string_view format);

} // namespace ctxdb::compile
