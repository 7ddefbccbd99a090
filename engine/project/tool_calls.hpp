// tool_calls.hpp — the tool_calls projection (DESIGN §2, §11 invariant 1):
// each call paired with its result.
//
// A call is a tool_call{id,name,args} block of an AssistantMessageCreated
// event; ToolCallFinished / ToolCallFailed / ToolCallCancelled (a call
// closed without a result: status cancelled) name it by tool_call_id. The
// rules, checked at append (a throw rolls the whole append or batch back):
//   - a result's call must be on the result's path (its own branch, or an
//     ancestor before the fork): otherwise kNotFound;
//   - a call has at most one result on any one path: a second is
//     kConflict (a fork made after the call may get its own);
//   - a call id is used once per path: a repeat is kConflict (the same id
//     on sibling branches is fine: they are different histories).
// The status of a call as seen from a branch is that of the result on the
// branch's path: pending without one, then success or error.
//
// Storage (schema 14): a call's row holds the first result appended for
// it, on whichever branch; a further result (on another path) has a
// tool_results row. A call's row is written at flush, so that a result
// appended in the same transaction (the usual batch) is written with it;
// a first result that comes in a later transaction updates the row.
#pragma once

#include "log/event_log.hpp"
#include "log/tree.hpp"
#include "project/branch_path.hpp"
#include "project/payload_cache.hpp"
#include "project/projection.hpp"
#include "store/store.hpp"

#include <simdjson.h>

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace ctxdb::project {

// True for the event types that carry a tool call's result (a
// ToolCallCancelled is one: it closes the pair).
bool is_tool_result(std::string_view type);
// "cancelled" for a ToolCallCancelled, "error" for a ToolCallFailed or a
// result with is_error, else "success".
const char *result_status(std::string_view type, simdjson::dom::element payload);

class ToolCalls : public Projection {
public:
  ToolCalls(store::Store &store, log::Tree &tree, PayloadCache &payloads)
      : store_(store), tree_(tree), payloads_(payloads) {}

  void on_append(const log::Event &e) override;
  void flush() override;
  void discard() override { clear(); }
  // The tables are about to be emptied and refilled by a replay: until it
  // flushes, the caches hold every row there is, and an id they lack is
  // not looked up.
  void before_rebuild() override { complete_ = true; }
  std::span<const char *const> tables() const override;

  // The calls on a branch's path with their status as seen from it, as the
  // JSON array of schema/json/tool_calls.schema.json.
  std::string path_json(const BranchPath &path);

  // The name of call `call_id` made on the path of branch `branch_no` at
  // or before seq `upto_seq`, or nullopt (no such call, or no name): how a
  // spill at append learns the tool of a result that does not name it.
  std::optional<std::string> call_name(int64_t session_no, std::string_view call_id,
                                       int64_t branch_no, int64_t upto_seq);

private:
  // Where a call or a result is: its event's seq and branch.
  struct Place {
    int64_t seq = 0;
    int64_t idx = 0; // the block's index (calls only)
    int64_t branch_no = 0;
  };

  // A call's place as results name it: (session_no, seq, idx).
  struct CallKey {
    int64_t session_no, seq, idx;
    bool operator==(const CallKey &) const = default;
  };
  struct CallKeyHash {
    size_t operator()(const CallKey &k) const {
      return std::hash<int64_t>()(k.session_no * 1000003 ^ k.seq * 31 ^ k.idx);
    }
  };

  // A result's columns, as its event gives them.
  struct Result {
    int64_t seq = 0;
    int64_t branch_no = 0;
    const char *status = "";
    std::optional<std::string> artifact_id, error;
    std::optional<int64_t> duration_ms, exit_code;
  };

  // A call appended in this transaction: its row, written at flush.
  struct NewCall {
    CallKey key;
    int64_t branch_no = 0;
    std::string call_id;
    std::optional<std::string> name, args;
    std::optional<Result> result; // its first result, when in this transaction
  };

  // Calls waiting for flush, at most (write_new_calls()).
  static constexpr size_t kMaxNewCalls = 4096;

  void add_calls(const log::Event &e, simdjson::dom::element payload);
  // Writes the rows of new_calls_ and forgets them (not the caches).
  void write_new_calls();
  void add_call(const log::Event &e, simdjson::dom::element block, int64_t idx);
  void add_result(const log::Event &e, simdjson::dom::element payload);
  // Every call of the session with that id, the transaction's included.
  std::vector<Place> &calls(int64_t session_no, std::string_view call_id);
  // Every result of a call, the transaction's included.
  std::vector<Place> &results(int64_t session_no, const Place &call);
  // Stores a call's first result: in its row, or in the row to write.
  void put_first_result(const CallKey &call, Result r);
  // Runs kSetFirstResult (a first result for a row already written) or
  // kInsertResult (a further result) for a call and a result.
  void write_result(const char *sql, const CallKey &call, const Result &r);
  // Binds a result's seven columns, in kInsertCall's order, from `first`.
  static void bind_result(SQLite::Statement &q, int first, const Result &r);
  // The first of `places` on the path of e's branch, or nullptr.
  const Place *on_path_of(const std::vector<Place> &places, const log::Event &e);
  [[noreturn]] void throw_orphan(const log::Event &e, std::string_view call_id,
                                 const std::vector<Place> &elsewhere);
  void clear();

  store::Store &store_;
  log::Tree &tree_;
  PayloadCache &payloads_;
  // Read-through caches for one transaction, so a result appended with its
  // call (a batch) never reads back the rows just written.
  std::unordered_map<std::string, std::vector<Place>> calls_;
  std::unordered_map<CallKey, std::vector<Place>, CallKeyHash> results_;
  std::vector<NewCall> new_calls_;                               // to write at flush
  std::unordered_map<CallKey, size_t, CallKeyHash> new_call_at_; // into new_calls_
  bool complete_ = false; // during a rebuild's replay (before_rebuild)
};

} // namespace ctxdb::project
