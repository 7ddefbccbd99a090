#include "log/tree.hpp"

#include "error.hpp"
#include "json/parse.hpp"

#include <algorithm>

namespace ctxdb::log {

namespace {

#define CTXDB_BRANCH_SELECT                                                                        \
  "SELECT b.branch_no,b.id,b.session_no,b.kind,b.name,b.parent_no,p.id,b.fork_seq,"                \
  "b.fork_event_id,b.first_seq,b.leaf_seq,b.leaf_event_id,b.event_count FROM branches b "          \
  "LEFT JOIN branches p ON p.branch_no=b.parent_no "

constexpr char kBranchByNo[] = CTXDB_BRANCH_SELECT "WHERE b.branch_no=?";
constexpr char kBranchNoById[] = "SELECT branch_no FROM branches WHERE id=? AND session_no=?";
constexpr char kBranchNoByName[] =
    "SELECT branch_no FROM branches WHERE session_no=? AND name=? LIMIT 2";
constexpr char kMainBranchNo[] =
    "SELECT branch_no FROM branches WHERE session_no=? AND fork_seq=0 AND parent_no IS NULL";
constexpr char kSessionBranchNos[] =
    "SELECT branch_no FROM branches WHERE session_no=? ORDER BY branch_no";
constexpr char kForkNos[] = "SELECT branch_no FROM branches WHERE session_no=? AND fork_seq=? "
                            "AND parent_no IS NOT NULL ORDER BY branch_no";
constexpr char kInsertBranch[] =
    "INSERT INTO branches(branch_no,id,session_no,kind,name,parent_no,fork_seq,fork_event_id,"
    "first_seq,leaf_seq,leaf_event_id,event_count) VALUES(?,?,?,?,?,?,?,?,?,?,?,?)";
constexpr char kUpdateLeaf[] =
    "UPDATE branches SET leaf_seq=?,leaf_event_id=?,event_count=? WHERE branch_no=?";
constexpr char kMaxBranchNo[] = "SELECT COALESCE(MAX(branch_no),0) FROM branches";

constexpr char kLastRun[] = "SELECT first_seq,last_seq,branch_no FROM branch_runs "
                            "WHERE session_no=? ORDER BY first_seq DESC LIMIT 1";
constexpr char kRunAt[] =
    "SELECT first_seq,last_seq,branch_no FROM branch_runs WHERE session_no=? AND "
    "first_seq<=? ORDER BY first_seq DESC LIMIT 1";
constexpr char kRunsOf[] = "SELECT first_seq,last_seq FROM branch_runs WHERE branch_no=? AND "
                           "first_seq<=? ORDER BY first_seq";
constexpr char kInsertRun[] =
    "INSERT INTO branch_runs(session_no,first_seq,last_seq,branch_no) VALUES(?,?,?,?)";
constexpr char kUpdateRun[] =
    "UPDATE branch_runs SET last_seq=? WHERE session_no=? AND first_seq=?";
constexpr char kEventSeq[] = "SELECT e.seq FROM events e WHERE e.id=? AND e.session_no=?";

Branch read_branch(SQLite::Statement &q) {
  Branch b;
  b.no = q.getColumn(0).getInt64();
  b.id = q.getColumn(1).getString();
  b.session_no = q.getColumn(2).getInt64();
  b.kind = q.getColumn(3).getString();
  if (!q.getColumn(4).isNull()) b.name = q.getColumn(4).getString();
  b.parent_no = q.getColumn(5).getInt64(); // NULL reads as 0
  b.parent_id = q.getColumn(6).getString();
  b.fork_seq = q.getColumn(7).getInt64();
  b.fork_event_id = q.getColumn(8).getString();
  b.first_seq = q.getColumn(9).getInt64();
  b.leaf_seq = q.getColumn(10).getInt64();
  b.leaf_event_id = q.getColumn(11).getString();
  b.event_count = q.getColumn(12).getInt64();
  return b;
}

std::vector<int64_t> read_nos(SQLite::Statement &q) {
  std::vector<int64_t> nos;
  while (q.executeStep()) nos.push_back(q.getColumn(0).getInt64());
  return nos;
}

} // namespace

std::span<const char *const> Tree::tables() {
  static const char *const kTables[] = {"branches", "branch_runs"};
  return kTables;
}

void Tree::begin_write() {
  if (active_) return;
  discard();
  active_ = true;
}

void Tree::begin_read() {
  if (!active_) discard();
}

Tree::CachedBranch &Tree::load_branch(int64_t no) {
  if (auto it = branches_.find(no); it != branches_.end()) return it->second;
  auto q = store_.statement(kBranchByNo);
  q->bind(1, no);
  if (!q->executeStep())
    throw Error(Code::kNotFound, "branch number " + std::to_string(no) + " not found");
  CachedBranch &c = branches_[no];
  c.b = read_branch(*q);
  return c;
}

Tree::CachedBranch *Tree::load_main(int64_t session_no) {
  if (auto it = mains_.find(session_no); it != mains_.end()) return &load_branch(it->second);
  auto q = store_.statement(kMainBranchNo);
  q->bind(1, session_no);
  if (!q->executeStep()) return nullptr;
  int64_t no = q->getColumn(0).getInt64();
  q->reset(); // load_branch may run another statement
  mains_[session_no] = no;
  return &load_branch(no);
}

int64_t Tree::find_branch_no(int64_t session_no, std::string_view id_or_name) {
  // "main" first: an event (a fork) may have the id "main", and the name
  // must still mean the main branch.
  if (id_or_name == "main") {
    if (CachedBranch *m = load_main(session_no)) return m->b.no;
  }
  {
    auto q = store_.statement(kBranchNoById);
    store::bind_text(*q, 1, id_or_name);
    q->bind(2, session_no);
    if (q->executeStep()) return q->getColumn(0).getInt64();
  }
  auto q = store_.statement(kBranchNoByName);
  q->bind(1, session_no);
  store::bind_text(*q, 2, id_or_name);
  std::vector<int64_t> nos = read_nos(*q);
  if (nos.size() > 1)
    throw Error(Code::kInvalidArg, "branch name '" + std::string(id_or_name) +
                                       "' is ambiguous in this session; name the branch by id");
  if (nos.empty())
    throw Error(Code::kNotFound,
                "no branch '" + std::string(id_or_name) + "' (by id or name) in this session");
  return nos[0];
}

Tree::Run *Tree::last_run(int64_t session_no) {
  if (auto it = runs_.find(session_no); it != runs_.end()) return &it->second;
  auto q = store_.statement(kLastRun);
  q->bind(1, session_no);
  if (!q->executeStep()) return nullptr;
  Run &r = runs_[session_no];
  r.first_seq = q->getColumn(0).getInt64();
  r.last_seq = q->getColumn(1).getInt64();
  r.branch_no = q->getColumn(2).getInt64();
  return &r;
}

void Tree::write_run(int64_t session_no, const Run &r) {
  if (r.is_new) {
    auto q = store_.statement(kInsertRun);
    q->bind(1, session_no);
    q->bind(2, r.first_seq);
    q->bind(3, r.last_seq);
    q->bind(4, r.branch_no);
    q->exec();
  } else if (r.dirty) {
    auto q = store_.statement(kUpdateRun);
    q->bind(1, r.last_seq);
    q->bind(2, session_no);
    q->bind(3, r.first_seq);
    q->exec();
  }
}

int64_t Tree::resolve_parent(EventDraft &d, int64_t session_no) {
  begin_write();
  Event &e = d.event;
  if (e.type == "BranchCreated") {
    if (d.branch)
      throw Error(Code::kInvalidArg, "BranchCreated opens a branch at payload.fork_event_id; it "
                                     "takes no branch_id");
    // The payload passed its schema: fork_event_id is a string.
    std::string fork(
        json::parse_payload(parser_, e.payload, e.id)["fork_event_id"].get_string().value());
    if (e.parent_id && *e.parent_id != fork)
      throw Error(Code::kInvalidArg, "BranchCreated: parent_id '" + *e.parent_id +
                                         "' differs from payload.fork_event_id '" + fork + "'");
    e.parent_id = fork;
    return 0;
  }
  if (session_no == 0 || e.type == "SessionStarted") {
    if (d.branch)
      throw Error(Code::kInvalidArg, "branch_id: a session's first event opens its main branch");
    return 0;
  }
  CachedBranch *b =
      d.branch ? &load_branch(find_branch_no(session_no, *d.branch)) : load_main(session_no);
  if (!b) throw Error(Code::kCorrupt, "the session has no main branch (run rebuild)");
  if (!e.parent_id) {
    e.parent_id = b->b.leaf_event_id;
    return b->b.leaf_seq;
  }
  if (d.branch && *e.parent_id != b->b.leaf_event_id)
    throw Error(Code::kConflict, "parent_id '" + *e.parent_id + "' is not the leaf of branch '" +
                                     b->b.id + "' (its leaf is '" + b->b.leaf_event_id +
                                     "'): another event was appended to it first");
  return 0;
}

void Tree::place(Event &e, int64_t session_no, int64_t parent_seq) {
  begin_write();
  e.session_no = session_no;
  CachedBranch &c = e.type == "SessionStarted"
                        ? open_branch(e, session_no, nullptr, 0, "main", "main")
                        : branch_for(e, session_no, parent_seq);
  set_leaf(c, e);
  Run *r = last_run(session_no);
  if (r && r->branch_no == c.b.no && r->last_seq == e.seq - 1) {
    r->last_seq = e.seq;
    r->dirty = true;
  } else {
    // The session switches branch: the run it leaves is complete.
    if (r) write_run(session_no, *r);
    runs_[session_no] = Run{e.seq, e.seq, c.b.no, true, true};
  }
  e.branch_no = c.b.no;
  e.branch_id = c.b.id;
}

Tree::CachedBranch &Tree::branch_for(const Event &e, int64_t session_no, int64_t parent_seq) {
  if (!e.parent_id) { // an event from before the tree: it continues main
    CachedBranch *m = load_main(session_no);
    if (!m) throw Error(Code::kCorrupt, "event '" + e.id + "' precedes its session's start");
    return *m;
  }
  CachedBranch *parent = nullptr;
  // Replays (parent_seq unknown) mostly continue the branch the session's
  // last event went to: its leaf is the parent.
  if (Run *r = last_run(session_no); parent_seq == 0 && r) {
    CachedBranch &current = load_branch(r->branch_no);
    if (current.b.leaf_event_id == *e.parent_id) {
      parent = &current;
      parent_seq = current.b.leaf_seq;
    }
  }
  if (parent_seq == 0) {
    auto q = store_.statement(kEventSeq);
    q->bindNoCopy(1, *e.parent_id);
    q->bind(2, session_no);
    if (!q->executeStep())
      throw Error(Code::kNotFound, "event '" + e.id + "': parent '" + *e.parent_id +
                                       "' is not an event of its session");
    parent_seq = q->getColumn(0).getInt64();
  }
  if (!parent) parent = &load_branch(branch_of(session_no, parent_seq));
  if (e.type == "BranchCreated") {
    simdjson::dom::element p = json::parse_payload(parser_, e.payload, e.id);
    std::string kind(p["kind"].get_string().value());
    std::optional<std::string> name;
    if (std::string_view n; !p["name"].get(n)) name = std::string(n);
    return open_branch(e, session_no, parent, parent_seq, std::move(kind), std::move(name));
  }
  if (parent->b.leaf_seq == parent_seq) return *parent;
  return open_branch(e, session_no, parent, parent_seq, "fork", std::nullopt);
}

Tree::CachedBranch &Tree::open_branch(const Event &e, int64_t session_no,
                                      const CachedBranch *parent, int64_t fork_seq,
                                      std::string kind, std::optional<std::string> name) {
  if (next_no_ == 0) {
    auto q = store_.statement(kMaxBranchNo);
    q->executeStep();
    next_no_ = q->getColumn(0).getInt64() + 1;
  }
  CachedBranch &c = branches_[next_no_];
  Branch &b = c.b;
  b.no = next_no_++;
  b.id = e.id;
  b.session_no = session_no;
  b.kind = std::move(kind);
  b.name = std::move(name);
  if (parent) {
    b.parent_no = parent->b.no;
    b.parent_id = parent->b.id;
    b.fork_seq = fork_seq;
    b.fork_event_id = *e.parent_id;
  }
  b.first_seq = b.leaf_seq = e.seq;
  b.leaf_event_id = e.id;
  // Inserted now, so reads by id or name in this transaction find it;
  // its leaf and count are brought up to date by flush().
  auto q = store_.statement(kInsertBranch);
  q->bind(1, b.no);
  q->bindNoCopy(2, b.id);
  q->bind(3, session_no);
  q->bindNoCopy(4, b.kind);
  if (b.name) q->bindNoCopy(5, *b.name);
  if (parent) {
    q->bind(6, b.parent_no);
    q->bindNoCopy(8, b.fork_event_id);
  }
  q->bind(7, b.fork_seq);
  q->bind(9, b.first_seq);
  q->bind(10, b.leaf_seq);
  q->bindNoCopy(11, b.leaf_event_id);
  q->bind(12, int64_t{0});
  q->exec();
  return c;
}

void Tree::set_leaf(CachedBranch &c, const Event &e) {
  c.b.leaf_seq = e.seq;
  c.b.leaf_event_id = e.id;
  ++c.b.event_count;
  c.dirty = true;
}

void Tree::flush() {
  for (auto &[no, c] : branches_) {
    if (!c.dirty) continue;
    auto q = store_.statement(kUpdateLeaf);
    q->bind(1, c.b.leaf_seq);
    q->bindNoCopy(2, c.b.leaf_event_id);
    q->bind(3, c.b.event_count);
    q->bind(4, no);
    q->exec();
  }
  for (auto &[session_no, r] : runs_) write_run(session_no, r);
  discard();
}

void Tree::discard() {
  branches_.clear();
  runs_.clear();
  mains_.clear();
  next_no_ = 0;
  active_ = false;
}

Branch Tree::branch(int64_t no) {
  begin_read();
  return load_branch(no).b;
}

Branch Tree::find_branch(int64_t session_no, std::string_view id_or_name) {
  begin_read();
  return load_branch(find_branch_no(session_no, id_or_name)).b;
}

Branch Tree::main_branch(int64_t session_no) {
  begin_read();
  CachedBranch *m = load_main(session_no);
  if (!m) throw Error(Code::kNotFound, "the session has no main branch");
  return m->b;
}

Segment Tree::run_at(int64_t session_no, int64_t seq) {
  begin_read();
  if (Run *r = last_run(session_no); r && seq >= r->first_seq && seq <= r->last_seq)
    return {r->branch_no, r->first_seq, r->last_seq};
  auto q = store_.statement(kRunAt);
  q->bind(1, session_no);
  q->bind(2, seq);
  if (!q->executeStep() || q->getColumn(1).getInt64() < seq)
    throw Error(Code::kCorrupt, "seq " + std::to_string(seq) +
                                    " is on no branch (the tree is out of date: run rebuild)");
  return {q->getColumn(2).getInt64(), q->getColumn(0).getInt64(), q->getColumn(1).getInt64()};
}

std::vector<Branch> Tree::branches(int64_t session_no) {
  begin_read();
  auto q = store_.statement(kSessionBranchNos);
  q->bind(1, session_no);
  std::vector<int64_t> nos = read_nos(*q);
  std::vector<Branch> out;
  for (int64_t no : nos) out.push_back(load_branch(no).b);
  return out;
}

std::vector<Branch> Tree::forks_at(int64_t session_no, int64_t seq) {
  begin_read();
  auto q = store_.statement(kForkNos);
  q->bind(1, session_no);
  q->bind(2, seq);
  std::vector<int64_t> nos = read_nos(*q);
  std::vector<Branch> out;
  for (int64_t no : nos) out.push_back(load_branch(no).b);
  return out;
}

std::vector<Segment> Tree::path(int64_t branch_no, int64_t upto_seq) {
  begin_read();
  std::vector<Segment> reversed; // leaf first, each branch's runs newest first
  int64_t limit = upto_seq < 0 ? INT64_MAX : upto_seq;
  for (int64_t no = branch_no; no != 0;) {
    const Branch b = load_branch(no).b;
    std::vector<Segment> runs;
    {
      auto q = store_.statement(kRunsOf);
      q->bind(1, no);
      q->bind(2, limit);
      while (q->executeStep())
        runs.push_back({no, q->getColumn(0).getInt64(), q->getColumn(1).getInt64()});
    }
    // The session's open run may be newer than its row.
    if (Run *r = last_run(b.session_no); r && r->branch_no == no && r->first_seq <= limit) {
      if (!runs.empty() && runs.back().first_seq == r->first_seq)
        runs.back().last_seq = r->last_seq;
      else
        runs.push_back({no, r->first_seq, r->last_seq});
    }
    for (auto it = runs.rbegin(); it != runs.rend(); ++it) {
      it->last_seq = std::min(it->last_seq, limit);
      reversed.push_back(*it);
    }
    limit = std::min(limit, b.fork_seq); // upto_seq may lie before the fork point
    no = b.parent_no;
  }
  return {reversed.rbegin(), reversed.rend()};
}

bool Tree::on_path(int64_t event_branch, int64_t event_seq, int64_t branch_no) {
  begin_read();
  int64_t limit = INT64_MAX;
  for (int64_t no = branch_no; no != 0;) {
    const CachedBranch &c = load_branch(no);
    if (no == event_branch) return event_seq <= limit;
    limit = c.b.fork_seq;
    no = c.b.parent_no;
  }
  return false;
}

} // namespace ctxdb::log
