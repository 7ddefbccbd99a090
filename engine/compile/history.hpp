// history.hpp — the conversation a compile may include: the messages on a
// branch's path after the latest compaction's cut, read newest first, a
// turn at a time, each already rendered as it would enter the bundle
// (redacted, withheld when sensitive) with its token count.
//
// A turn is a user message and everything after it up to the next user
// message (a context message, a ContextAdded of kind context, is part of
// the turn it sits in, never its head; instructions are not history); a turn is never ended between
// a tool call and its result (a result that arrives after a later user message pulls the turns
// between into one). Inside a turn, units are the spans nothing may cut: an assistant message with
// its tool calls and every result answering them.
//
// Every call leaves a turn closed (DESIGN §12: no call without its result).
// A call with no result after which the conversation moved on (a later
// user prompt or assistant message: it is *abandoned*) gets a synthetic
// cancelled result right after its call's results, or, with
// drop_interrupted, leaves with its call block (a ToolCallCancelled
// result leaves too). A call with no result and nothing after it in the
// newest turn is being run by the host: a result the request supplies
// enters in its place (source type request); without one the call is
// listed in Turn::unanswered, for the compiler to refuse and the
// compaction planner not to cut before.
#pragma once

#include "artifact/artifact_store.hpp"
#include "artifact/image_info.hpp"
#include "compile/request.hpp"
#include "compile/segment.hpp"
#include "policy/redactor.hpp"
#include "project/branch_path.hpp"
#include "store/store.hpp"
#include "token/counter.hpp"

#include <simdjson.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ctxdb::compile {

// Tokens a provider spends framing one message (role, separators), added
// to the count of every segment so a full bundle does not overflow.
inline constexpr int64_t kFramingTokens = 4;

struct Message {
  int64_t seq = 0;
  std::string event_id;
  const char *role = "user"; // user | assistant | tool | context (a ContextAdded)
  std::string content;       // a JSON array of blocks, as it enters
  int64_t tokens = 0;        // of content, framing included
  std::vector<RedactionNote> redactions;
  std::vector<std::string> calls;      // assistant: the ids of its tool calls
  std::vector<std::string> call_names; // beside calls: each call's tool name
  std::string answers;                 // tool: the call it answers
  // The segment id: msg:<event_id> for a message of the log, else
  // cancelled:<call id> (synthetic) or result:<call id> (from the request).
  std::string segment_id;
  int64_t sub = 0;             // after seq, orders what was added behind a message
  bool synthetic = false;      // a cancelled result the compile made up
  bool supplied = false;       // a result from the request's tool_results
  bool cancelled = false;      // a ToolCallCancelled
  std::string note;            // why it is there, for synthetic and supplied results
  std::vector<Source> sources; // where it comes from, as the bundle names it
  std::string artifact_id;     // tool: where the whole output is kept
  // Tool results long enough to prune: the preview that replaces them.
  std::optional<std::string> pruned_content;
  int64_t pruned_tokens = 0;
  std::vector<RedactionNote> pruned_redactions;
  int64_t image_tokens = 0; // of its images, in tokens
  // Its images (artifact id, tokens), and the content with each replaced by
  // a placeholder text naming its artifact: what enters when they do not fit.
  std::vector<std::pair<std::string, int64_t>> images;
  std::optional<std::string> imageless_content;
  int64_t imageless_tokens = 0;
};

struct Unit {
  size_t first = 0, last = 0; // message indexes, inclusive
  bool pending = false;       // holds a call with no result in the log (yet)
};

// A tool call as the explanation names it.
struct CallRef {
  std::string call_id, name, event_id;
};

struct Turn {
  std::vector<Message> messages;   // oldest first
  bool has_head = false;           // messages[0] is the user message opening it
  std::vector<Unit> units;         // the rest, oldest first
  std::vector<CallRef> dropped;    // drop_interrupted: the calls taken out
  std::vector<CallRef> unanswered; // newest turn: calls the host is running
  std::vector<size_t> supplied;    // newest turn: the request's results used
};

struct HistoryOptions {
  int64_t from_seq = 1; // the compaction's first kept event
  bool allow_sensitive = false;
  int64_t prune_min_tokens = 500;
  int64_t prune_preview_bytes = 800;
  bool drop_interrupted = false;
  const std::vector<ToolResultInput> *supplied = nullptr; // the request's tool_results
  // Images get their width and height from here, and tokens by image_tokens
  // (the target provider's rule); without a store none is read.
  artifact::ArtifactStore *artifacts = nullptr;
  int64_t (*image_tokens)(artifact::ImageSize) = artifact::max_image_tokens;
};

// A History keeps cached statements of its Store stepping while it lives:
// one at a time per Store (another would reset its cursors).
class History {
public:
  History(store::Store &store, const token::Counter &counter, const policy::Redactor &redactor,
          project::BranchPath path, const HistoryOptions &options);

  // The next older turn, or nullopt when the candidates are exhausted.
  std::optional<Turn> next_turn();
  // True when older candidates remain unread.
  bool has_more();
  // The results read so far whose call is before the cut (a late result of
  // a call a compaction passed as abandoned): in no turn, as a result is
  // never sent without its call.
  const std::vector<Message> &orphans() const { return orphans_; }

private:
  // The row the cursor is on: views into the statement's current row, valid
  // until the cursor steps, so a message is rendered without copying its
  // payload out of SQLite first.
  struct Row {
    int64_t seq;
    const char *role;  // user | assistant | tool | context (static)
    bool same_counter; // counted by this compile's counter
    std::string_view event_id, type, payload, visibility;
    int64_t tokens;
  };
  bool on_row();
  bool step_events_to(int64_t seq);
  bool open_older_segment();
  std::optional<std::pair<int64_t, int64_t>> pos_range(int64_t first, int64_t last);
  Row row();
  Message render(const Row &row);
  int64_t mark_context(Message &m);
  void add_pruned(Message &m, simdjson::dom::element payload);
  void add_pruned_placeholders(Message &m, const std::vector<std::string> &texts,
                               const std::string &placeholders);
  void split_units(Turn &t);
  void set_orphans_aside(Turn &t);
  void add_image_sizes(Message &m);
  void write_image(json::JsonWriter &w, simdjson::dom::element block, int64_t &tokens);
  void close_calls(Turn &t);
  void drop_calls(Turn &t, const std::vector<std::string> &ids);
  Message synthetic_result(const Message &after, const std::string &call_id,
                           const std::string &name, const Message &call);
  Message supplied_result(const Message &after, size_t i, const std::string &name);

  store::Store &store_;
  const token::Counter &counter_;
  const policy::Redactor &redactor_;
  project::BranchPath path_;
  HistoryOptions options_;
  simdjson::dom::parser parser_;
  simdjson::dom::parser count_parser_; // recounts, apart from the payload's
  std::string filter_buffer_;          // the redacting filter's, reused
  std::vector<policy::RedactionHit> filter_hits_;
  std::vector<std::string> unanswered_; // next_turn's, reused
  size_t segment_;                      // the path segment being read, from the last
  // Stepping newest first through the segment being read (its messages,
  // or messages joined with their events); reset, and the read snapshot
  // released, when the History goes.
  std::unique_ptr<store::Store::Stmt> cursor_;
  // The session's events of the segment, newest first, beside cursor_
  // when they are stored together; event_seq_ is the row it is on.
  std::unique_ptr<store::Store::Stmt> events_;
  int64_t event_seq_ = 0;
  bool unread_ = false; // the cursor is on a row not yet returned
  bool newest_ = true;  // the next turn is the newest one
  std::vector<Message> orphans_;
};

} // namespace ctxdb::compile
