#include "project/tool_calls.hpp"

#include "json/json_writer.hpp"
#include "json/parse.hpp"

#include <map>
#include <utility>

namespace ctxdb::project {

namespace {

constexpr char kInsertCall[] = "INSERT INTO tool_calls(session_no,seq,idx,branch_no,call_id,"
                               "event_id,name,args) VALUES(?,?,?,?,?,?,?,?)";
constexpr char kInsertResult[] =
    "INSERT INTO tool_results(session_no,seq,call_seq,call_idx,branch_no,event_id,status,"
    "artifact_id,error,duration_ms,exit_code) VALUES(?,?,?,?,?,?,?,?,?,?,?)";
// No ORDER BY: the (covering) indexes return rows in seq order, as their
// keys end with the primary key, and one would steer SQLite off them.
constexpr char kCallsById[] = "SELECT seq,idx,branch_no FROM tool_calls "
                              "WHERE session_no=? AND call_id=?";
constexpr char kCallNames[] = "SELECT seq,branch_no,name FROM tool_calls "
                              "WHERE session_no=? AND call_id=?";
constexpr char kResultsOfCall[] = "SELECT seq,branch_no FROM tool_results "
                                  "WHERE session_no=? AND call_seq=? AND call_idx=?";
constexpr char kCallsInRange[] = "SELECT seq,idx,call_id,event_id,name,args FROM tool_calls "
                                 "WHERE session_no=?1 AND seq BETWEEN ?2 AND ?3 ORDER BY seq,idx";
constexpr char kResultsInRange[] =
    "SELECT call_seq,call_idx,event_id,seq,status,artifact_id,error,duration_ms,exit_code "
    "FROM tool_results WHERE session_no=?1 AND seq BETWEEN ?2 AND ?3";

std::string call_key(int64_t session_no, std::string_view call_id) {
  std::string k = std::to_string(session_no);
  k += '\x1f';
  k += call_id;
  return k;
}

// "event evt_… (ToolCallFinished)": how every rule violation starts.
std::string event_name(const log::Event &e) { return "event " + e.id + " (" + e.type + ")"; }

} // namespace

bool is_tool_result(std::string_view type) {
  return type == "ToolCallFinished" || type == "ToolCallFailed";
}

const char *result_status(std::string_view type, simdjson::dom::element payload) {
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
  complete_ = false;
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
  results_.emplace(CallKey{e.session_no, e.seq, idx}, std::vector<Place>{}); // none yet
  auto q = store_.statement(kInsertCall);
  q->bind(1, e.session_no);
  q->bind(2, e.seq);
  q->bind(3, idx);
  q->bind(4, e.branch_no);
  store::bind_text(*q, 5, id);
  q->bindNoCopy(6, e.id);
  bind_field(*q, 7, block, "name");
  simdjson::dom::element args;
  if (block["args"].get(args))
    q->bind(8);
  else
    q->bind(8, json::canonical(args));
  q->exec();
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
  earlier.push_back({e.seq, 0, e.branch_no});
  auto q = store_.statement(kInsertResult);
  q->bind(1, e.session_no);
  q->bind(2, e.seq);
  q->bind(3, call->seq);
  q->bind(4, call->idx);
  q->bind(5, e.branch_no);
  q->bindNoCopy(6, e.id);
  q->bind(7, result_status(e.type, payload));
  bind_field(*q, 8, payload, "artifact_id");
  bind_field(*q, 9, payload, "error");
  bind_field(*q, 10, payload, "duration_ms");
  bind_field(*q, 11, payload, "exit_code");
  q->exec();
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
  return std::nullopt;
}

std::string ToolCalls::path_json(const BranchPath &path) {
  // A call has at most one result on a path, so (call_seq, call_idx) keys
  // the path's results; each is kept as its status and JSON object.
  std::map<std::pair<int64_t, int64_t>, std::pair<std::string, std::string>> results;
  for_each_row(store_, kResultsInRange, path, [&](SQLite::Statement &q, const std::string &branch) {
    json::JsonWriter w;
    w.begin_object().field("event_id", q.getColumn(2).getString());
    w.field("seq", q.getColumn(3).getInt64()).field("branch_id", branch);
    for (int i = 5; i <= 8; ++i) column_field(w, q.getColumnName(i), q.getColumn(i));
    w.end_object();
    results[{q.getColumn(0).getInt64(), q.getColumn(1).getInt64()}] = {q.getColumn(4).getString(),
                                                                       w.take()};
  });
  json::JsonWriter w;
  w.begin_array();
  for_each_row(store_, kCallsInRange, path, [&](SQLite::Statement &q, const std::string &branch) {
    auto r = results.find({q.getColumn(0).getInt64(), q.getColumn(1).getInt64()});
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
        .field("status", r == results.end() ? std::string("pending") : r->second.first);
    w.key("result");
    if (r == results.end())
      w.null();
    else
      w.raw(r->second.second);
    w.end_object();
  });
  w.end_array();
  return w.take();
}

} // namespace ctxdb::project
