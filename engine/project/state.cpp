#include "project/state.hpp"

#include "error.hpp"

#include <algorithm>

namespace ctxdb::project {

namespace {

constexpr char kSelectRow[] =
    "SELECT session_no,seq,event_id,since_snapshot,state FROM state WHERE branch_no=?";
constexpr char kSelectLeaf[] = "SELECT seq,event_id FROM state WHERE branch_no=?";
constexpr char kUpsertRow[] = "INSERT OR REPLACE INTO state(branch_no,session_no,seq,event_id,"
                              "since_snapshot,state) VALUES(?,?,?,?,?,?)";
constexpr char kInsertSnapshot[] =
    "INSERT OR REPLACE INTO state_snapshots(branch_no,seq,state) VALUES(?,?,?)";
constexpr char kNearestSnapshot[] = "SELECT seq,state FROM state_snapshots WHERE branch_no=? AND "
                                    "seq>=? AND seq<=? ORDER BY seq DESC LIMIT 1";

// A snapshot's state: a zstd frame of its compact JSON (schema 16).
std::string_view frame_of(const SQLite::Column &c) {
  return {static_cast<const char *>(c.getBlob()), size_t(c.getBytes())};
}

constexpr int64_t kReplayPage = 512;
// Branch states kept between transactions: enough for the branches a host
// appends to at a time, small enough that memory stays bounded.
constexpr size_t kCachedBranches = 64;
// Branch states one transaction keeps in memory (each tens of KB in a
// working agent's session).
constexpr size_t kMaxPendingBranches = 1024;

} // namespace

std::span<const char *const> State::tables() const {
  static const char *const kTables[] = {"state", "state_snapshots"};
  return kTables;
}

void State::on_append(const log::Event &e) {
  // A long transaction (a rebuild, a large import) touches many branches:
  // past kMaxPendingBranches their rows are written and their states
  // dropped, to be read back from the rows if their branches come again.
  if (branches_.size() >= kMaxPendingBranches && !branches_.count(e.branch_no)) {
    write_pending();
    branches_.clear();
  }
  BranchState &b = branch_for(e);
  bool affects = affects_state(e.type);
  if (affects) apply(b.state, e, payloads_.get(e));
  b.seq = e.seq;
  b.event_id = e.id;
  if (++b.since_snapshot >= kSnapshotEvery) {
    snapshots_[{e.branch_no, e.seq}] = packed(b.state);
    b.since_snapshot = 0;
  }
}

State::BranchState &State::branch_for(const log::Event &e) {
  if (auto it = branches_.find(e.branch_no); it != branches_.end()) return it->second;
  if (std::optional<BranchState> cached = take_cached(e.branch_no))
    return branches_.emplace(e.branch_no, std::move(*cached)).first->second;
  BranchState b;
  auto q = store_.statement(kSelectRow);
  q->bind(1, e.branch_no);
  if (q->executeStep()) {
    b.session_no = q->getColumn(0).getInt64();
    b.seq = q->getColumn(1).getInt64();
    b.event_id = q->getColumn(2).getString();
    b.since_snapshot = q->getColumn(3).getInt64();
    b.state = from_json(q->getColumn(4).getString(), state_row_name(e.branch_no));
  } else {
    // A new branch (or a file from before this projection): it starts
    // from the state right before e on e's path, i.e. at its fork point.
    std::vector<log::Segment> path = log_.tree().path(e.branch_no, e.seq);
    if (--path.back().last_seq < path.back().first_seq) path.pop_back();
    Base start = replay(e.session_id, path);
    b.session_no = e.session_no;
    b.since_snapshot = start.since;
    b.state = std::move(start.state);
  }
  return branches_.emplace(e.branch_no, std::move(b)).first->second;
}

std::optional<State::BranchState> State::take_cached(int64_t branch_no) {
  auto it = cache_.find(branch_no);
  if (it == cache_.end()) return std::nullopt;
  BranchState b = std::move(it->second);
  cache_.erase(it);
  // The state is a function of the branch's leaf: while the stored row
  // names the same leaf (no other connection appended, nothing rolled
  // back), the cached state is the stored one, without parsing it.
  auto q = store_.statement(kSelectLeaf);
  q->bind(1, branch_no);
  if (!q->executeStep() || q->getColumn(0).getInt64() != b.seq ||
      q->getColumn(1).getString() != b.event_id)
    return std::nullopt;
  return b;
}

std::optional<State::Base> State::nearest_in(const log::Segment &seg) {
  auto inside = [&](int64_t seq) { return seq >= seg.first_seq && seq <= seg.last_seq; };
  std::optional<Base> best;
  auto offer = [&](int64_t seq, int64_t since, auto &&state) {
    if (inside(seq) && (!best || seq > best->seq)) best = Base{seq, since, state()};
  };
  if (auto it = branches_.find(seg.branch_no); it != branches_.end()) {
    const BranchState &b = it->second;
    offer(b.seq, b.since_snapshot, [&] { return b.state; });
  } else {
    auto q = store_.statement(kSelectRow);
    q->bind(1, seg.branch_no);
    if (q->executeStep())
      offer(q->getColumn(1).getInt64(), q->getColumn(3).getInt64(),
            [&] { return from_json(q->getColumn(4).getString(), state_row_name(seg.branch_no)); });
  }
  auto pending = snapshots_.upper_bound({seg.branch_no, seg.last_seq});
  if (pending != snapshots_.begin() && (--pending)->first.first == seg.branch_no)
    offer(pending->first.second, 0,
          [&] { return unpacked(pending->second, seg.branch_no, pending->first.second); });
  auto q = store_.statement(kNearestSnapshot);
  q->bind(1, seg.branch_no);
  q->bind(2, seg.first_seq);
  q->bind(3, seg.last_seq);
  if (q->executeStep())
    offer(q->getColumn(0).getInt64(), 0, [&] {
      return unpacked(frame_of(q->getColumn(1)), seg.branch_no, q->getColumn(0).getInt64());
    });
  return best;
}

State::Base State::replay(const std::string &session_id, const std::vector<log::Segment> &path) {
  Base b; // the empty state before the first event, unless a nearer one is found
  size_t from = 0;
  for (size_t i = path.size(); i-- > 0;) {
    if (auto found = nearest_in(path[i])) {
      b = std::move(*found);
      from = i;
      break;
    }
  }
  for (size_t i = from; i < path.size(); ++i)
    replay_range(session_id, std::max(path[i].first_seq, b.seq + 1), path[i].last_seq, b);
  return b;
}

void State::fold(Base &b, const log::Event &e) {
  apply(b.state, e, replay_parser_);
  b.seq = e.seq;
  ++b.since;
}

// Replays seqs from..to of the session. A new branch's start is replayed
// inside the append transaction; the log writes every queued event before
// an event that opens a branch reaches the projections, so they are all in
// the table.
void State::replay_range(const std::string &session_id, int64_t from, int64_t to, Base &b) {
  for (int64_t seq = from; seq <= to;) {
    std::vector<log::Event> page = log_.read_session(session_id, seq, to, kReplayPage);
    if (page.empty() || page.front().seq != seq)
      throw Error(Code::kInternal, "state replay: seq " + std::to_string(seq) + " of session '" +
                                       session_id + "' is not in the log");
    for (const log::Event &e : page) fold(b, e);
    seq = page.back().seq + 1;
  }
}

void State::write_pending() {
  for (const auto &[no, b] : branches_) {
    std::string json = to_json(b.state);
    auto q = store_.statement(kUpsertRow);
    q->bind(1, no);
    q->bind(2, b.session_no);
    q->bind(3, b.seq);
    q->bindNoCopy(4, b.event_id);
    q->bind(5, b.since_snapshot);
    q->bindNoCopy(6, json);
    q->exec();
  }
  for (const auto &[key, frame] : snapshots_) {
    auto q = store_.statement(kInsertSnapshot);
    q->bind(1, key.first);
    q->bind(2, key.second);
    q->bindNoCopy(3, frame.data(), int(frame.size()));
    q->exec();
  }
  snapshots_.clear();
}

void State::flush() {
  write_pending();
  if (cache_.size() + branches_.size() > kCachedBranches) cache_.clear();
  if (branches_.size() <= kCachedBranches)
    for (auto &[no, b] : branches_) cache_.insert_or_assign(no, std::move(b));
  branches_.clear();
}

// The cache goes too: what this transaction flushed into it is rolled
// back with it (a rebuild's states name the same leaves as the rows it
// leaves behind, so their leaves cannot tell them apart).
void State::discard() {
  branches_.clear();
  snapshots_.clear();
  cache_.clear();
}

State::Current State::current(const std::string &session_id, const log::Branch &b) {
  auto q = store_.statement(kSelectRow);
  q->bind(1, b.no);
  if (q->executeStep())
    return {q->getColumn(1).getInt64(), q->getColumn(2).getString(), q->getColumn(4).getString()};
  return {b.leaf_seq, b.leaf_event_id, to_json(at(session_id, b.no, b.leaf_seq))};
}

std::string state_row_name(int64_t branch_no) {
  return "the state row of branch " + std::to_string(branch_no);
}

std::string State::packed(const AgentState &s) { return std::string(pack_.compress(to_json(s))); }

AgentState State::unpacked(std::string_view frame, int64_t branch_no, int64_t seq) {
  std::string what = "the state snapshot of branch " + std::to_string(branch_no) + " at seq " +
                     std::to_string(seq);
  return from_json(unpack_.decompress(frame, what), what);
}

AgentState State::at(const std::string &session_id, int64_t branch_no, int64_t seq) {
  return replay(session_id, log_.tree().path(branch_no, seq)).state;
}

} // namespace ctxdb::project
