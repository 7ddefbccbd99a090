#include "project/tool_calls.hpp"

#include "store/row_inserts.hpp"
#include "json/json_writer.hpp"
#include "json/parse.hpp"

#include <map>
#include <tuple>
#include <utility>

namespace ctxdb::project {

namespace {

const store::RowInsert
    kInsertCalls("INSERT INTO tool_calls(session_no,seq,idx,branch_no,call_id,name,args,result_seq,"
                 "result_branch_no,status,artifact_id,error,duration_ms,exit_code) VALUES",
                 "(?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
constexpr char kSetFirstResult[] =
    "UPDATE tool_calls SET result_seq=?4,result_branch_no=?5,status=?6,artifact_id=?7,error=?8,"
    "duration_ms=?9,exit_code=?10 WHERE session_no=?1 AND seq=?2 AND idx=?3";
constexpr char kInsertResult[] =
    "INSERT INTO tool_results(session_no,call_seq,call_idx,seq,branch_no,status,artifact_id,"
    "error,duration_ms,exit_code) VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10)";
// No ORDER BY: the (covering) indexes return rows in seq order, as their
// keys end with the primary key, and one would steer SQLite off them.
constexpr char kCallsById[] = "SELECT seq,idx,branch_no FROM tool_calls "
                              "WHERE session_no=? AND call_id=?";
constexpr char kCallNames[] = "SELECT seq,branch_no,name FROM tool_calls "
                              "WHERE session_no=? AND call_id=?";
constexpr char kResultsOfCall[] =
    "SELECT result_seq,result_branch_no FROM tool_calls "
    "WHERE session_no=?1 AND seq=?2 AND idx=?3 AND result_seq IS NOT NULL "
    "UNION ALL SELECT seq,branch_no FROM tool_results "
    "WHERE session_no=?1 AND call_seq=?2 AND call_idx=?3";
// The event ids come from the events table, which the projection does not
// copy: a join on its (session_no, seq) key.
constexpr char kCallsInRange[] =
    "SELECT c.seq,c.idx,c.call_id,e.id,c.name,c.args,c.result_seq,c.result_branch_no,c.status,"
    "f.id,c.artifact_id,c.error,c.duration_ms,c.exit_code FROM tool_calls c "
    "JOIN events e ON e.session_no=c.session_no AND e.seq=c.seq "
    "LEFT JOIN events f ON f.session_no=c.session_no AND f.seq=c.result_seq "
    "WHERE c.session_no=?1 AND c.seq BETWEEN ?2 AND ?3 ORDER BY c.seq,c.idx";
constexpr char kFurtherResultsInRange[] =
    "SELECT r.call_seq,r.call_idx,e.id,r.seq,r.status,r.artifact_id,r.error,r.duration_ms,"
    "r.exit_code FROM tool_results r JOIN events e ON e.session_no=r.session_no AND e.seq=r.seq "
    "WHERE r.session_no=?1 AND r.seq BETWEEN ?2 AND ?3";

std::string call_key(int64_t session_no, std::string_view call_id) {
  std::string k = std::to_string(session_no);
  k += '\x1f';
  k += call_id;
  return k;
}

// "event evt_… (ToolCallFinished)": how every rule violation starts.
std::string event_name(const log::Event &e) { return "event " + e.id + " (" + e.type + ")"; }

// Optional payload fields, their types checked by the event's schema.
std::optional<std::string> text_field(simdjson::dom::element obj, const char *key) {
  std::string_view v;
  if (obj[key].get(v)) return std::nullopt;
  return std::string(v);
}
std::optional<int64_t> int_field(simdjson::dom::element obj, const char *key) {
  int64_t v;
  if (obj[key].get(v)) return std::nullopt;
  return v;
}

// The branch id of the path segment holding (branch_no, seq), or nullptr.
const std::string *segment_branch(const BranchPath &path, int64_t branch_no, int64_t seq) {
  for (size_t i = 0; i < path.segments.size(); ++i) {
    const log::Segment &s = path.segments[i];
    if (s.branch_no == branch_no && seq >= s.first_seq && seq <= s.last_seq)
      return &path.segment_branch_ids[i];
  }
  return nullptr;
}

bool type_is_cancel(std::string_view type) { return type == "ToolCallCancelled"; }

} // namespace

bool is_tool_result(std::string_view type) {
  return type == "ToolCallFinished" || type == "ToolCallFailed" || type == "ToolCallCancelled";
}

const char *result_status(std::string_view type, simdjson::dom::element payload) {
  if (type == "ToolCallCancelled") return "cancelled";
  bool is_error = false;
  if (payload["is_error"].get(is_error)) is_error = false; // absent
  return type == "ToolCallFailed" || is_error ? "error" : "success";
}

std::span<const char *const> ToolCalls::tables() const {
  static const char *const kTables[] = {"tool_calls", "tool_results"};
  return kTables;
}

void ToolCalls::on_append(const log::Event &e) {
  if (e.type == "AssistantMessageCreated")
    add_calls(e, payloads_.get(e));
  else if (is_tool_result(e.type))
    add_result(e, payloads_.get(e));
}

void ToolCalls::clear() {
  calls_.clear();
  results_.clear();
  new_calls_.clear();
  new_call_at_.clear();
  complete_ = false;
}

void ToolCalls::flush() {
  write_new_calls();
  clear();
}

void ToolCalls::write_new_calls() {
  store::insert_rows(store_, kInsertCalls, std::span<const NewCall>(new_calls_),
                     [](SQLite::Statement &q, int first, const NewCall &c) {
                       q.bind(first + 1, c.key.session_no);
                       q.bind(first + 2, c.key.seq);
                       q.bind(first + 3, c.key.idx);
                       q.bind(first + 4, c.branch_no);
                       q.bindNoCopy(first + 5, c.call_id);
                       store::bind_optional(q, first + 6, c.name);
                       store::bind_optional(q, first + 7, c.args);
                       if (c.result) bind_result(q, first + 8, *c.result);
                     });
  new_calls_.clear();
  new_call_at_.clear();
}

void ToolCalls::add_calls(const log::Event &e, simdjson::dom::element payload) {
  simdjson::dom::array content = payload["content"].get_array().value();
  int64_t idx = 0;
  for (simdjson::dom::element block : content) {
    if (string_field(block, "type") == "tool_call") add_call(e, block, idx);
    ++idx;
  }
}

void ToolCalls::add_call(const log::Event &e, simdjson::dom::element block, int64_t idx) {
  std::string_view id = string_field(block, "id");
  // Built only for an error: this runs for every call appended.
  auto where = [&] { return event_name(e) + ": content[" + std::to_string(idx) + "]"; };
  if (id.empty())
    throw Error(Code::kInvalidArg,
                where() + ": a tool_call block needs a non-empty id (its result names it)");
  std::vector<Place> &same = calls(e.session_no, id);
  if (const Place *p = on_path_of(same, e))
    throw Error(Code::kConflict, where() + ": tool call id '" + std::string(id) +
                                     "' is already used on this branch's path (seq " +
                                     std::to_string(p->seq) +
                                     "); a call id names one call per path");
  same.push_back({e.seq, idx, e.branch_no});
  CallKey key{e.session_no, e.seq, idx};
  results_.emplace(key, std::vector<Place>{}); // none yet
  NewCall &c = new_calls_.emplace_back();
  c.key = key;
  c.branch_no = e.branch_no;
  c.call_id = id;
  c.name = text_field(block, "name");
  simdjson::dom::element args;
  if (!block["args"].get(args)) c.args = json::canonical(args);
  new_call_at_.emplace(key, new_calls_.size() - 1);
  // A replay is one long transaction: keep what waits in memory bounded
  // (a first result that comes later updates the written row).
  if (new_calls_.size() == kMaxNewCalls) write_new_calls();
}

void ToolCalls::add_result(const log::Event &e, simdjson::dom::element payload) {
  std::string_view id = string_field(payload, "tool_call_id");
  std::vector<Place> &candidates = calls(e.session_no, id);
  const Place *call = on_path_of(candidates, e);
  if (!call) throw_orphan(e, id, candidates);
  std::vector<Place> &earlier = results(e.session_no, *call);
  if (const Place *r = on_path_of(earlier, e))
    throw Error(Code::kConflict, event_name(e) + ": tool call '" + std::string(id) +
                                     "' already has a result on this branch's path (seq " +
                                     std::to_string(r->seq) + "); a call gets one result per path");
  Result r;
  r.seq = e.seq;
  r.branch_no = e.branch_no;
  r.status = result_status(e.type, payload);
  r.artifact_id = text_field(payload, "artifact_id");
  r.error = text_field(payload, type_is_cancel(e.type) ? "reason" : "error");
  r.duration_ms = int_field(payload, "duration_ms");
  r.exit_code = int_field(payload, "exit_code");
  CallKey key{e.session_no, call->seq, call->idx};
  if (earlier.empty())
    put_first_result(key, std::move(r));
  else
    write_result(kInsertResult, key, r);
  earlier.push_back({e.seq, 0, e.branch_no});
}

void ToolCalls::put_first_result(const CallKey &call, Result r) {
  if (auto it = new_call_at_.find(call); it != new_call_at_.end()) {
    new_calls_[it->second].result = std::move(r);
    return;
  }
  write_result(kSetFirstResult, call, r);
}

void ToolCalls::write_result(const char *sql, const CallKey &call, const Result &r) {
  // The two statements number their parameters alike: the call's key,
  // then the result's seven columns.
  auto q = store_.statement(sql);
  q->bind(1, call.session_no);
  q->bind(2, call.seq);
  q->bind(3, call.idx);
  bind_result(*q, 4, r);
  q->exec();
}

void ToolCalls::bind_result(SQLite::Statement &q, int first, const Result &r) {
  q.bind(first, r.seq);
  q.bind(first + 1, r.branch_no);
  q.bindNoCopy(first + 2, r.status);
  store::bind_optional(q, first + 3, r.artifact_id);
  store::bind_optional(q, first + 4, r.error);
  store::bind_optional(q, first + 5, r.duration_ms);
  store::bind_optional(q, first + 6, r.exit_code);
}

void ToolCalls::throw_orphan(const log::Event &e, std::string_view call_id,
                             const std::vector<Place> &elsewhere) {
  std::string rule = "; a result needs its call (a tool_call block of an earlier "
                     "AssistantMessageCreated) on the same branch (DESIGN §11 invariant 1)";
  std::string what = event_name(e) + ": tool call '" + std::string(call_id) + "' ";
  if (elsewhere.empty())
    throw Error(Code::kNotFound, what + "is unknown in session '" + e.session_id + "'" + rule);
  log::Branch b = tree_.branch(elsewhere.front().branch_no);
  throw Error(Code::kNotFound, what + "was made on branch '" + b.id + "' (seq " +
                                   std::to_string(elsewhere.front().seq) +
                                   "), which is not on this event's path" + rule);
}

const ToolCalls::Place *ToolCalls::on_path_of(const std::vector<Place> &places,
                                              const log::Event &e) {
  for (const Place &p : places)
    if (tree_.on_path(p.branch_no, p.seq, e.branch_no)) return &p;
  return nullptr;
}

std::vector<ToolCalls::Place> &ToolCalls::calls(int64_t session_no, std::string_view call_id) {
  auto [it, added] = calls_.try_emplace(call_key(session_no, call_id));
  if (!added || complete_) return it->second;
  auto q = store_.statement(kCallsById);
  q->bind(1, session_no);
  store::bind_text(*q, 2, call_id);
  while (q->executeStep())
    it->second.push_back(
        {q->getColumn(0).getInt64(), q->getColumn(1).getInt64(), q->getColumn(2).getInt64()});
  return it->second;
}

std::vector<ToolCalls::Place> &ToolCalls::results(int64_t session_no, const Place &call) {
  auto [it, added] = results_.try_emplace(CallKey{session_no, call.seq, call.idx});
  if (!added || complete_) return it->second;
  auto q = store_.statement(kResultsOfCall);
  q->bind(1, session_no);
  q->bind(2, call.seq);
  q->bind(3, call.idx);
  while (q->executeStep())
    it->second.push_back({q->getColumn(0).getInt64(), 0, q->getColumn(1).getInt64()});
  return it->second;
}

std::optional<std::string> ToolCalls::call_name(int64_t session_no, std::string_view call_id,
                                                int64_t branch_no, int64_t upto_seq) {
  auto q = store_.statement(kCallNames);
  q->bind(1, session_no);
  store::bind_text(*q, 2, call_id);
  while (q->executeStep()) {
    int64_t seq = q->getColumn(0).getInt64();
    if (seq > upto_seq || !tree_.on_path(q->getColumn(1).getInt64(), seq, branch_no)) continue;
    if (q->getColumn(2).isNull()) return std::nullopt;
    return q->getColumn(2).getString();
  }
  // The transaction's calls, not written yet (they come after the table's).
  for (const NewCall &c : new_calls_)
    if (c.key.session_no == session_no && c.call_id == call_id && c.key.seq <= upto_seq &&
        tree_.on_path(c.branch_no, c.key.seq, branch_no))
      return c.name;
  return std::nullopt;
}

namespace {

// A result as tool_calls.schema.json has it, from the event id at column
// `id_col` and the artifact_id, error, duration_ms, exit_code columns from
// `first` on.
std::string result_json(SQLite::Statement &q, int id_col, int64_t seq, const std::string &branch,
                        int first) {
  json::JsonWriter w;
  w.begin_object().field("event_id", q.getColumn(id_col).getString());
  w.field("seq", seq).field("branch_id", branch);
  int i = first;
  for (const char *key : {"artifact_id", "error", "duration_ms", "exit_code"})
    column_field(w, key, q.getColumn(i++));
  w.end_object();
  return w.take();
}

} // namespace

std::string ToolCalls::path_json(const BranchPath &path) {
  // A call has at most one result on a path. Its first result is in its
  // row; any other on this path is a further result, keyed here by its
  // call (call_seq, call_idx) and kept as its status and JSON object.
  std::map<std::pair<int64_t, int64_t>, std::pair<std::string, std::string>> further;
  for_each_row(
      store_, kFurtherResultsInRange, path, [&](SQLite::Statement &q, const std::string &branch) {
        further[{q.getColumn(0).getInt64(), q.getColumn(1).getInt64()}] = {
            q.getColumn(4).getString(), result_json(q, 2, q.getColumn(3).getInt64(), branch, 5)};
      });
  json::JsonWriter w;
  w.begin_array();
  for_each_row(store_, kCallsInRange, path, [&](SQLite::Statement &q, const std::string &branch) {
    std::string status = "pending", result;
    const std::string *result_branch = nullptr;
    if (!q.getColumn(6).isNull())
      result_branch = segment_branch(path, q.getColumn(7).getInt64(), q.getColumn(6).getInt64());
    if (result_branch) {
      status = q.getColumn(8).getString();
      result = result_json(q, 9, q.getColumn(6).getInt64(), *result_branch, 10);
    } else if (auto r = further.find({q.getColumn(0).getInt64(), q.getColumn(1).getInt64()});
               r != further.end()) {
      std::tie(status, result) = r->second;
    }
    w.begin_object().field("call_id", q.getColumn(2).getString());
    column_field(w, "name", q.getColumn(4));
    w.key("args");
    if (q.getColumn(5).isNull())
      w.null();
    else
      w.raw(q.getColumn(5).getString());
    w.field("event_id", q.getColumn(3).getString())
        .field("seq", q.getColumn(0).getInt64())
        .field("branch_id", branch)
        .field("status", status);
    w.key("result");
    if (result.empty())
      w.null();
    else
      w.raw(result);
    w.end_object();
  });
  w.end_array();
  return w.take();
}

} // namespace ctxdb::project
