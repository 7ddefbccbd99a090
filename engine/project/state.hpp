// state.hpp — the state projection: the AgentState (agent_state.hpp) of
// every branch, kept current as events are appended, plus snapshots so
// that the state after any past event costs a bounded replay.
//
// Within a transaction each touched branch's state lives in memory and is
// folded event by event; flush() writes it once (one row per branch), and
// discard() forgets it. A transaction that touches more than 1024
// branches writes them early and reads them back as needed, so a rebuild's
// memory does not grow with the number of branches. A new branch starts
// from the state at its fork point on its parent's path. Every
// kSnapshotEvery events on a path a snapshot row (branch_no, seq, state)
// is written, so time travel is the nearest snapshot (or current row) at
// or before the event on its path, plus a replay of at most about
// kSnapshotEvery events after it. A
// snapshot holds the state as a zstd frame of its compact JSON: a working
// agent's state runs to tens of KB (facts, files, decisions with their
// event ids) and compresses about tenfold, and a snapshot is written once
// and read only by time travel. The branch's row stays JSON: every
// transaction rewrites it and every state() reads it, and compressing it
// cost single appends more than its smaller pages saved (bench_append).
#pragma once

#include "log/event_log.hpp"
#include "project/agent_state.hpp"
#include "project/payload_cache.hpp"
#include "project/projection.hpp"
#include "store/store.hpp"
#include "util/zstd.hpp"

#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace ctxdb::project {

// A snapshot costs one serialized state (a few KB compressed) per this many
// events on a path, and bounds every time-travel replay to about this many
// events: at 256, snapshots add about 1% to the file for ~1 KB events, and a
// replay reads a few hundred rows (about a millisecond), which keeps reads
// cheap without making appends serialize the state often.
inline constexpr int64_t kSnapshotEvery = 256;

// What errors call a branch's stored state row: "the state row of branch 3".
std::string state_row_name(int64_t branch_no);

class State : public Projection {
public:
  State(store::Store &store, log::EventLog &log, PayloadCache &payloads)
      : store_(store), log_(log), payloads_(payloads) {}

  void on_append(const log::Event &e) override;
  void flush() override;
  void discard() override;
  // A rebuild replays every branch: the states of earlier transactions go.
  void before_rebuild() override { cache_.clear(); }
  std::span<const char *const> tables() const override;

  // A branch's current state as stored: the JSON of state.schema.json's
  // "state", the seq and id of the last event folded. Replays the path when
  // the branch has no row (a file from before this projection).
  struct Current {
    int64_t seq = 0;
    std::string event_id;
    std::string state_json;
  };
  Current current(const std::string &session_id, const log::Branch &b);
  // The state right after event `seq` of branch_no's path.
  AgentState at(const std::string &session_id, int64_t branch_no, int64_t seq);

private:
  struct BranchState {
    AgentState state;
    int64_t session_no = 0;
    int64_t seq = 0; // the last event folded (the branch's leaf)
    std::string event_id;
    int64_t since_snapshot = 0; // events on the path since the nearest snapshot
  };
  // A state at `seq` on a path (seq 0: the empty state before the session's
  // first event), `since` events after the nearest snapshot.
  struct Base {
    int64_t seq = 0;
    int64_t since = 0;
    AgentState state;
  };
  BranchState &branch_for(const log::Event &e);
  // Writes the touched branches' rows and the pending snapshots.
  void write_pending();
  // A branch state flushed by an earlier transaction, if still current.
  std::optional<BranchState> take_cached(int64_t branch_no);
  // The latest stored or pending state within a segment of a path.
  std::optional<Base> nearest_in(const log::Segment &seg);
  // The state after the last event of `path`: the nearest state on it,
  // then the events after that.
  Base replay(const std::string &session_id, const std::vector<log::Segment> &path);
  void replay_range(const std::string &session_id, int64_t from, int64_t to, Base &b);
  void fold(Base &b, const log::Event &e);
  // A snapshot's state as stored (a zstd frame of its JSON) and back.
  std::string packed(const AgentState &s);
  AgentState unpacked(std::string_view frame, int64_t branch_no, int64_t seq);

  store::Store &store_;
  log::EventLog &log_;
  PayloadCache &payloads_;
  simdjson::dom::parser replay_parser_; // replays must not disturb payloads_
  util::ZstdCompressor pack_;
  util::ZstdDecompressor unpack_;
  // Per transaction: the touched branches and the snapshots to write
  // (packed), by (branch_no, seq).
  std::unordered_map<int64_t, BranchState> branches_;
  std::map<std::pair<int64_t, int64_t>, std::string> snapshots_;
  // Branch states as the last transactions flushed them.
  std::unordered_map<int64_t, BranchState> cache_;
};

} // namespace ctxdb::project
