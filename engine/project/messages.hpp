// messages.hpp — the messages projection (DESIGN §2): one row per
// message-bearing event, with its role and token count.
//
//   UserPromptSubmitted      → user      [text, its stored images]
//   AssistantMessageCreated  → assistant its content blocks, as given
//   ToolCallFinished/Failed  → tool      [tool_result, its stored images
//                                         in the result's content]
//   ToolCallCancelled        → tool      [tool_result status cancelled,
//                                         cancelled_text(reason) its text]
//   CompactionCompleted      → summary   [summary]
//   BranchSummarized         → user      [text]
//   ContextAdded             → context   [context {kind, source, text}, its
//                                         stored images]; stored with role
//                                         instructions for kind instructions
//                                         (a compile reads them apart), shown
//                                         as context
//
// Tokens are counted once, at append, by the engine's active counter
// (Engine::set_token_counter) and stored with its name, so a compile never
// recounts history and a change of counter shows. The
// typed blocks are a pure function of the event's payload, which the log
// keeps anyway, so they are rendered from it when read instead of being
// stored twice: appends write one small row per message.
#pragma once

#include "log/event_log.hpp"
#include "project/branch_path.hpp"
#include "project/payload_cache.hpp"
#include "project/projection.hpp"
#include "store/store.hpp"
#include "token/counter.hpp"
#include "json/json_writer.hpp"

#include <simdjson.h>

#include <string>
#include <string_view>
#include <vector>

namespace ctxdb::project {

class Messages : public Projection {
public:
  Messages(store::Store &store, PayloadCache &payloads,
           const token::Counter &counter = token::default_counter())
      : store_(store), payloads_(payloads), counter_(&counter) {}

  // The counter of the rows appended from now on; it must outlive its use.
  // A counter that throws from count() rejects the event being appended.
  void set_counter(const token::Counter &counter) { counter_ = &counter; }

  void on_append(const log::Event &e) override;
  void flush() override;
  void discard() override { pending_.clear(); }
  std::span<const char *const> tables() const override;

  // The messages on a branch's path, root→leaf, as the JSON array of
  // schema/json/messages.schema.json.
  std::string path_json(const BranchPath &path);

  // The role of the message an event type carries, or nullptr for none.
  static const char *role_of(std::string_view type);
  // The role its row is stored with: role_of(type), but instructions for a
  // ContextAdded of kind instructions.
  static const char *role_of(std::string_view type, simdjson::dom::element payload);
  // The tokens of what the model reads of a message event's payload: its
  // texts, and each tool call's name and args, counted one string at a time
  // (so a change to one string changes the sum by that string's count).
  static int64_t count_tokens(const token::Counter &counter, std::string_view type,
                              simdjson::dom::element payload);
  // Writes the typed blocks of a message event's payload as a JSON array.
  static void write_blocks(json::JsonWriter &w, std::string_view type,
                           simdjson::dom::element payload);

  // What the model reads of a call closed without a result: that it was
  // interrupted, and why when a reason is known.
  static std::string cancelled_text(std::string_view reason);

  // Rows wait in memory up to this many (a replay is one transaction).
  static constexpr size_t kMaxPending = 1024;

private:
  struct Row {
    int64_t session_no, seq, branch_no;
    const char *role; // static
    int64_t tokens;
  };
  void bind_row(SQLite::Statement &q, int first, const Row &r) const;

  store::Store &store_;
  PayloadCache &payloads_;
  const token::Counter *counter_;
  simdjson::dom::parser read_parser_; // for reads, apart from the appends' cache
  // The transaction's rows, written at flush(): a multi-row INSERT costs
  // SQLite less per row, and every event of a session is a message.
  std::vector<Row> pending_;
};

} // namespace ctxdb::project
