// adapters.hpp — the edge of the context compiler: a canonical bundle
// (schema/json/bundle.schema.json) turned into the request shape of one
// provider. Nothing else in the engine knows a provider format exists.
//
// Every output is the part of the provider's request body that the bundle
// decides: the conversation and the tools. The host adds model, max_tokens,
// temperature, stream and the like. Outputs are compact JSON from
// json::JsonWriter, a pure function of the bundle's bytes and the artifacts
// it names: the same bundle gives byte-identical output.
//
// Placement (by position in the bundle). A ContextAdded of kind context is
// a user segment (kind context) whose text is already marked
// "<context source=…>…</context>": every format sends it as the user-side
// message it is, merged where a provider requires alternation; one of kind
// instructions is a developer segment. Segments of role "context" before
// the first conversation segment (user, assistant, tool) are standing
// context (the summary): they go with the instructions — an openai
// `developer` message, an Anthropic system block (the last system block
// carries a cache breakpoint), Gemini systemInstruction parts, an AI SDK
// system message. Context segments after it are the latest turn's (goal,
// plan, open questions, files…): joined into ONE text block
// "<context>\n…\n</context>", the last block of the last user-side message
// (Anthropic and Gemini: the last user message, tool results included);
// openai.chat, openai.responses and ai.sdk append it to the final message
// when that is the user's, else add a user message holding only it (after
// tool outputs). No format ever gets a whitespace-only text block (Claude
// streams "\n\n"): such texts are dropped; an empty tool result reads
// "(no output)".
//
// Thinking round trip: opaque reasoning goes back only to the family that
// produced it (a thinking block's "provider"), never to another:
//   anthropic.messages: {"type":"thinking","thinking","signature"} and
//     {"type":"redacted_thinking","data"}, unchanged and in place; one
//     without a signature (or data) is dropped, as the API would refuse it.
//   openai.responses: {"type":"reasoning","id","summary":[{"type":
//     "summary_text","text"}],"encrypted_content"?} in its position, before
//     the calls and messages it preceded; one with no id (an imported Codex
//     rollout keeps none) goes by its encrypted_content, or is dropped
//     when it has neither.
//   gemini.generate_content: {"text","thought":true,"thoughtSignature"?};
//     a call's thoughtSignature stays on its functionCall part.
//   ai.sdk: reasoning parts with providerOptions keyed by the producer
//     (anthropic: signature / redactedData; openai: itemId,
//     reasoningEncryptedContent, one part per summary text; google:
//     thoughtSignature). The output does not know which provider the host
//     will call: the SDK's Anthropic and OpenAI providers send back only
//     parts keyed by them, but its Google provider sends any reasoning
//     text as a thought, so a host calling Gemini through the SDK drops the
//     reasoning parts not keyed "google" (packages/google/src/
//     convert-to-google-messages.ts).
//   openai.chat takes no reasoning input: all thinking is dropped.
//
// Images: an image block names an artifact; with an ArtifactReader each is
// emitted in its native shape from the artifact's bytes (base64; a block
// the host kept inline, {"data","mime_type"}, as it is):
// Anthropic {"type":"image","source":{"type":"base64","media_type","data"}}
// (also inside tool_result content), openai.chat {"type":"image_url",
// "image_url":{"url":"data:…"}} parts (a tool message carries text only: a
// result's images follow the tool messages in a user message naming the
// call), openai.responses input_image with a data URL (function_call_output
// then holds an input_text / input_image list), Gemini {"inlineData":
// {"mimeType","data"}} (a result's images as parts after the
// functionResponse parts), ai.sdk an image part / image-data in a
// tool-result's content output. A media type the provider does not take,
// or no reader, gives the placeholder text "[image: artifact <id>, <mime>]".
// The provider's documented limits hold, the newest images kept: Anthropic
// 100 images per request and 5 MB each, OpenAI 500 and 50 MB in all,
// Gemini 20 MB inline in all, ai.sdk the strictest of them; an image
// beyond them is its placeholder with "; omitted: <which limit>".
//
// openai.chat       {"messages":[...],"tools":[{"type":"function","function":{...}}]}
//   system/developer segments: one message each, string content (the
//   texts of its blocks joined with "\n\n"). user: a list of text /
//   image_url parts. assistant: {"role":
//   "assistant","content": text or null (a refusal: text and refusal
//   parts),"tool_calls":[{"id","type":"function","function":{"name",
//   "arguments"}}]}, arguments a JSON string (an object arg is serialized;
//   a string arg passes as it is). tool: one {"role":"tool","tool_call_id",
//   "content"} per tool_result. The tool messages follow the assistant
//   message that made the calls: a user message written while they ran
//   (and a result's images) comes after the last of them.
// openai.responses  {"input":[items],"tools":[{"type":"function","name",...}]}
//   system/developer/user messages {"type":"message","role","content":
//   [{"type":"input_text","text"} | {"type":"input_image","image_url",
//   "detail":"auto"}]}; an assistant's consecutive texts are one
//   {"type":"message","role":"assistant","content":"…"}; its calls are
//   {"type":"function_call","call_id","name","arguments"} in block order;
//   results {"type":"function_call_output","call_id","output"}. Tools carry
//   "strict":false and always "parameters": Responses treats an omitted
//   strict as "make the schema strict when possible", which would change
//   the tools' meaning from the bundle's (and Chat Completions') one.
// anthropic.messages {"system":[{"type":"text","text"}],"messages":[...],
//   "tools":[{"name","description"?,"input_schema"}]}
//   system, developer and standing context segments: one system block
//   each. Everything else alternates user/assistant strictly: consecutive
//   same-role segments (tool counts as user) merge into one message's
//   content array, and in a user message the tool_result blocks come first
//   (Anthropic rejects text before them). A cancelled call's result has
//   is_error true. tool_use "input" is the call's args as an object: an
//   object arg as it is, a string that parses to an object that object, any
//   other string {"input": the string}, no args {}. A call id outside
//   ^[a-zA-Z0-9_-]+$ has each other character written as '_' and 8 hex
//   digits of its SHA-256 appended, on the tool_use and its tool_result
//   alike. When the first message
//   would be the assistant's, a user text block "(conversation continues)"
//   goes before it, as the API requires a user turn first; a final
//   assistant message (a continuation) loses its trailing whitespace.
//   cache_control {"type":"ephemeral"} goes, in this priority and at most 4
//   (Anthropic's limit), never twice on one block and never on thinking: on
//   the last tool, the last system block, the last block emitted for the
//   segment where the bundle's stable prefix ends (the leading segments
//   whose tokens sum to <= stable_prefix_tokens; none when that is 0), and
//   the last block before the latest-turn context.
// gemini.generate_content {"systemInstruction"?:{"parts":[{"text"}]},
//   "contents":[{"role":"user"|"model","parts":[...]}],"tools"?:
//   [{"functionDeclarations":[{"name","description"?,"parametersJsonSchema"}]}]}
//   the REST body in the @google/genai field names. Contents alternate
//   user/model (same-role segments merge, tool results are user parts,
//   functionResponse parts first); the first content is the user's, as for
//   Anthropic. A call is {"functionCall":{"id","name","args"}} (args an
//   object, as tool_use input); one no Gemini model made carries the
//   thoughtSignature "skip_thought_signature_validator" Google documents
//   for such calls. A result is {"functionResponse":{"id","name",
//   "response":{"output"|"error": text}}} ("error" for an error or
//   cancelled result).
// ai.sdk {"messages":[ModelMessage...],"tools"?:{name:{"description"?,
//   "inputSchema"}}}: system messages {"role":"system","content":string};
//   user {"role":"user","content":[text | image parts]}; assistant
//   {"role":"assistant","content":[text | reasoning | {"type":"tool-call",
//   "toolCallId","toolName","input"}]}; tool {"role":"tool","content":
//   [{"type":"tool-result","toolCallId","toolName","output":{"type":"text"|
//   "error-text","value"} or {"type":"content","value":[...]}}]}. tools is
//   a ToolSet's shape with JSON Schemas: the host wraps each inputSchema
//   with the SDK's jsonSchema(). As for openai.chat, a user message written
//   while calls ran follows their results.
//
// In every format: the "tools" segment (one tool_specs block) becomes the
// provider's tools field, never a message; a file_ref or artifact_ref is a
// text naming it; a refusal is a text (openai.chat: a refusal part);
// segments left empty are skipped; an error result's content is its error
// text (then its output, if it has one), a pruned one its preview text as
// the compiler wrote it. "tools" is omitted when there are none, "system" /
// "systemInstruction" when there is none.
#pragma once

#include "compile/artifact_reader.hpp"

#include <string>
#include <string_view>

namespace ctxdb::compile {

// The formats convert_bundle accepts, in the order error messages list them.
inline constexpr std::string_view kBundleFormats[] = {
    "canonical", "openai.chat", "openai.responses", "anthropic.messages", "gemini.generate_content",
    "ai.sdk"};

// Converts a canonical bundle to `format`, reading images through `reader`
// (nullptr: images become their placeholder text). "canonical" returns
// bundle_json byte for byte (after the same checks). Throws ctxdb::Error:
// kInvalidArg for an unknown format (naming it and the known ones);
// kInvalidJson / kInvalidUtf8 for a bundle that is not JSON / not UTF-8;
// kInvalidArg naming the field for one that does not match
// bundle.schema.json, or whose blocks break the bundle's rules (a
// tool_call outside an assistant segment, a tool_result outside a tool
// segment, a call without id or name, …); kNotFound naming an image's
// artifact that is not stored.
std::string convert_bundle(std::string_view bundle_json, std::string_view format,
                           const ArtifactReader *reader = nullptr);

} // namespace ctxdb::compile
