// tree.hpp — the session tree (DESIGN §3): which branch every event is on.
//
// Every event but SessionStarted has a parent_id, the event before it on
// its branch. The log places each event on a branch as it is appended:
//   - SessionStarted opens the session's main branch;
//   - BranchCreated opens a branch forked at its parent (fork, subagent,
//     what_if, with an optional name);
//   - any other event continues its parent's branch when the parent is that
//     branch's leaf, and otherwise opens a new branch (kind "fork") there.
// Nothing is copied and no ancestor is touched. A branch is named by the id
// of the event that opened it.
//
// Membership is stored as runs: a run is a maximal range of a session's
// seqs that are all on one branch, so a session appended to one branch at a
// time has a handful of runs however long it is. The path root→leaf of a
// branch is its runs plus its ancestors' runs up to each fork point: a few
// range scans of (session, seq), never a walk over parent pointers.
//
// branches and branch_runs are derived tables: rebuild replays the log
// through place() and must get them back row for row.
#pragma once

#include "log/event.hpp"
#include "store/store.hpp"

#include <simdjson.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace ctxdb::log {

struct Branch {
  int64_t no = 0; // 0: none
  std::string id; // the id of the event that opened it
  int64_t session_no = 0;
  std::string kind; // main | fork | subagent | what_if
  std::optional<std::string> name;
  int64_t parent_no = 0; // 0 for main
  std::string parent_id;
  int64_t fork_seq = 0; // the seq of the event it forked from (0 for main)
  std::string fork_event_id;
  int64_t first_seq = 0; // the seq of the event that opened it
  int64_t leaf_seq = 0;
  std::string leaf_event_id;
  int64_t event_count = 0;
};

// Seqs first_seq..last_seq of one session, all on branch branch_no.
struct Segment {
  int64_t branch_no = 0;
  int64_t first_seq = 0;
  int64_t last_seq = 0;
};

class Tree {
public:
  explicit Tree(store::Store &store) : store_(store) {}

  // The tables this tree writes (derived: rebuild clears and replays them).
  static std::span<const char *const> tables();

  // Fills the draft's parent_id when the host gave none: the leaf of the
  // envelope's branch (main when none), or for BranchCreated its
  // fork_event_id. Checks a given parent_id against both. `session_no` is
  // 0 for a session's first event. Returns the parent's seq when it filled
  // the parent in (a leaf is known to be valid), else 0: the caller checks
  // a host's parent_id.
  int64_t resolve_parent(EventDraft &d, int64_t session_no);

  // Puts a complete event (parent_id final, seq assigned) on its branch and
  // sets e.session_no, e.branch_no and e.branch_id. `parent_seq` is the
  // parent's seq, or 0 to have it looked up. Changes are kept in memory
  // until flush(); discard() forgets them.
  void place(Event &e, int64_t session_no, int64_t parent_seq);
  void flush();
  void discard();

  // Reads. Within a write transaction they see what it placed, flushed or
  // not; outside one they read the file afresh.
  //
  // The branch `no`, or kNotFound.
  Branch branch(int64_t no);
  // The branch of a session named by id, or by name when unique in it
  // ("main" is always the main branch); kNotFound / kInvalidArg.
  Branch find_branch(int64_t session_no, std::string_view id_or_name);
  Branch main_branch(int64_t session_no);
  // The branch the session's event `seq` is on, and the run holding it.
  int64_t branch_of(int64_t session_no, int64_t seq) { return run_at(session_no, seq).branch_no; }
  Segment run_at(int64_t session_no, int64_t seq);
  // Every branch of a session, in the order they were opened.
  std::vector<Branch> branches(int64_t session_no);
  // The branches forked at the event (session_no, seq), oldest first.
  std::vector<Branch> forks_at(int64_t session_no, int64_t seq);
  // The path root→`upto_seq` of a branch (its leaf when upto_seq < 0) as
  // segments in seq order; concatenated they are the branch's history.
  std::vector<Segment> path(int64_t branch_no, int64_t upto_seq = -1);
  // True when the event at (event_branch, event_seq) is on the path
  // root→leaf of `branch_no`: its own or an ancestor's before the fork.
  bool on_path(int64_t event_branch, int64_t event_seq, int64_t branch_no);

private:
  struct Run {
    int64_t first_seq = 0;
    int64_t last_seq = 0;
    int64_t branch_no = 0;
    bool is_new = false; // not in branch_runs yet
    bool dirty = false;
  };
  struct CachedBranch {
    Branch b;
    bool is_new = false;
    bool dirty = false;
  };

  // Starts a write transaction's caches, or drops stale ones before a read.
  void begin_write();
  void begin_read();
  CachedBranch &load_branch(int64_t no);
  CachedBranch *load_main(int64_t session_no);
  int64_t find_branch_no(int64_t session_no, std::string_view id_or_name);
  Run *last_run(int64_t session_no); // nullptr for a new session
  void write_run(int64_t session_no, const Run &r);
  // The branch a non-first event goes on; opens one when it forks.
  CachedBranch &branch_for(const Event &e, int64_t session_no, int64_t parent_seq);
  CachedBranch &open_branch(const Event &e, int64_t session_no, const CachedBranch *parent,
                            int64_t fork_seq, std::string kind, std::optional<std::string> name);
  void set_leaf(CachedBranch &c, const Event &e);

  store::Store &store_;
  simdjson::dom::parser parser_;
  bool active_ = false; // inside a write transaction
  // Per write transaction: the touched branches and each touched
  // session's last run.
  std::unordered_map<int64_t, CachedBranch> branches_;
  std::unordered_map<int64_t, Run> runs_;
  std::unordered_map<int64_t, int64_t> mains_; // session_no -> its main branch_no
  int64_t next_no_ = 0;                        // 0: not read yet
};

} // namespace ctxdb::log
