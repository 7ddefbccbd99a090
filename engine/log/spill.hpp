// spill.hpp — spill at append (DESIGN §4): large tool outputs, file
// contents and base64 images move out of the event into the artifact
// store, and the event keeps a preview and the artifact's id.
//
// The log calls the Spiller while it places an event: after its id is
// known and before its payload and chain hashes are computed, so the
// stored (spilled) payload is what the chain covers, and an export and
// import carries it unchanged (import never spills). The puts run in the
// append's transaction: a rolled-back append leaves no artifact, chunk or
// reference behind.
//
// What is rewritten (fields are added at the end of the payload):
//   - ToolCallFinished / ToolCallFailed `output` longer than the
//     threshold: output becomes the preview, plus artifact_id,
//     output_bytes, output_lines and spill {policy, omitted_bytes,
//     omitted_lines}. The policy is the tool's: by name from the config,
//     else tail for shells, head for file readers, head_tail otherwise.
//   - FileRead `content` the same way (head; content_bytes, content_lines).
//   - image blocks with base64 data in `content` (UserPromptSubmitted,
//     AssistantMessageCreated, ToolCallFinished/Failed, ContextAdded) become
//     {type: image, artifact_id, mime_type, bytes}, whatever their size.
// A payload that already names an artifact_id or carries spill is left as
// it is (the host stored the whole itself, or sends a stored event back).
//
// A spill is a pure function of the payload, the config and the tool name
// (artifact ids are content hashes), so a retry of an event can be
// compared with the stored one by spilling it again: plan() writes
// nothing, store() does the puts.
#pragma once

#include "artifact/artifact_store.hpp"
#include "log/event.hpp"

#include <simdjson.h>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ctxdb::log {

enum class SpillPolicy { kHead, kTail, kHeadTail };

std::string_view policy_name(SpillPolicy p);

// The "spill" object of the database config (schema/json/config.schema.json).
struct SpillConfig {
  struct Limits {
    int64_t threshold_bytes = 16 * 1024; // spill text longer than this; 0: never
    int64_t preview_bytes = 2 * 1024;
    int64_t preview_lines = -1; // -1: no line budget (cuts still fall between lines)
  };
  struct Tool {
    std::optional<SpillPolicy> policy;
    std::optional<int64_t> threshold_bytes, preview_bytes, preview_lines;
  };

  bool enabled = true;
  bool images = true;
  Limits defaults;
  std::map<std::string, Tool, std::less<>> tools; // by exact tool name

  // The "spill" object of a config already validated against its schema
  // (empty text: the defaults).
  static SpillConfig parse(std::string_view config_json);

  // The limits and policy for a tool (empty name: unknown).
  Limits limits_for(std::string_view tool) const;
  SpillPolicy policy_for(std::string_view tool) const;
  // No text shorter than this is ever spilled (the least threshold).
  int64_t min_threshold() const;
};

// The policy of the built-in table: tail for shell-like tools, head for
// file readers, head_tail for the rest (names compared ignoring case).
SpillPolicy default_policy(std::string_view tool);

// Where an event goes: after event `parent_seq` of branch `branch_no` of
// session `session_no` (the parent's branch, which the event continues or
// forks from). A result's call is looked up on the path there.
struct SpillPlace {
  int64_t session_no = 0;
  int64_t branch_no = 0;
  int64_t parent_seq = 0;
};

// The name of tool call `call_id` on the path to `at`, or nullopt. Given by
// the engine (the tool_calls projection knows), since the log cannot see
// projections.
using ToolNameResolver =
    std::function<std::optional<std::string>(std::string_view call_id, const SpillPlace &at)>;

// A payload rewritten by a spill, and the artifacts it refers to.
struct Spill {
  std::string payload; // canonical JSON
  struct Put {
    std::string bytes;
    artifact::Meta meta; // event_id is filled by store()
  };
  std::vector<Put> puts;
};

class Spiller {
public:
  Spiller(artifact::ArtifactStore &artifacts, SpillConfig config, ToolNameResolver tool_name);

  const SpillConfig &config() const { return config_; }

  // A cheap test on the raw payload: false when plan() surely returns
  // nullopt (the common case, no parse needed).
  bool may_change(const Event &e) const;

  // The payload `e` is stored with, when a spill changes it; nothing is
  // written. kInvalidArg naming the field for an image whose data is not
  // base64.
  std::optional<Spill> plan(const Event &e, const SpillPlace &at);
  // Puts the spill's artifacts, each referred to by event `event_id`.
  void store(const Spill &s, const std::string &event_id);

private:
  struct TextSpill {
    std::string preview;
    std::string fields; // the fields a spill adds, as a JSON object
  };
  std::optional<TextSpill> spill_text(const Event &e, simdjson::dom::object payload,
                                      const SpillPlace &at, Spill &out);
  std::optional<std::string> spill_images(const Event &e, simdjson::dom::array blocks, Spill &out);

  artifact::ArtifactStore &artifacts_;
  SpillConfig config_;
  ToolNameResolver tool_name_;
  simdjson::dom::parser parser_;
};

} // namespace ctxdb::log
