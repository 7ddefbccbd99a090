#include "compact/compactor.hpp"

#include "compact/extractive.hpp"
#include "compile/history.hpp"
#include "error.hpp"
#include "project/payload_cache.hpp"
#include "util/ids.hpp"
#include "json/json_writer.hpp"
#include "json/parse.hpp"

#include <chrono>
#include <cstdio>

namespace ctxdb::compact {

namespace {

using project::string_field;
using simdjson::dom::element;

constexpr char kOnPath[] =
    "SELECT c.seq,c.event_id,c.first_kept_seq,c.tokens_before,c.tokens_after,e.payload "
    "FROM compactions c JOIN events e ON e.id=c.event_id "
    "WHERE c.session_no=?1 AND c.seq BETWEEN ?2 AND ?3 ORDER BY c.seq";

std::string ratio(int64_t after, int64_t before) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4f", before > 0 ? double(after) / double(before) : 0.0);
  return buf;
}

void write_summarizer(json::JsonWriter &w, const SummarizerInfo &info) {
  w.begin_object().field("name", info.name).field("version", info.version).end_object();
}

// Records a failed attempt at the branch's leaf, in a transaction of its
// own: the file is as before plus this one event.
void record_failure(compile::Sources &src, const Plan &p, const std::vector<Check> &checks,
                    const std::string &reason, const SummarizerInfo &info) {
  json::JsonWriter w;
  w.begin_object()
      .field("type", "CompactionFailed")
      .field("actor", "ctxdb")
      .field("branch_id", p.target.branch.id)
      .key("payload")
      .begin_object()
      .field("reason", reason)
      .key("failed_checks")
      .begin_array();
  for (const Check &c : checks)
    if (!c.ok) w.value(c.name);
  w.end_array().key("checks");
  write_checks(w, checks);
  w.key("range");
  write_range(w, p);
  w.field("leaf_event_id", p.target.leaf_id).key("summarizer");
  write_summarizer(w, info);
  w.end_object().end_object();
  src.log.append(p.target.session_id, w.str());
}

[[noreturn]] void reject(compile::Sources &src, const Plan &p, const std::vector<Check> &checks,
                         const SummarizerInfo &info) {
  std::string reason;
  for (const Check &c : checks)
    if (!c.ok) {
      reason.append(reason.empty() ? "" : "; ").append(c.name).append(": ").append(c.detail);
      for (size_t i = 0; i < c.missing.size() && i < 8; ++i)
        reason.append(i ? ", " : " (").append(c.missing[i]);
      if (!c.missing.empty()) reason.append(c.missing.size() > 8 ? ", …)" : ")");
    }
  record_failure(src, p, checks, reason, info);
  throw Error(Code::kCheckFailed, "compaction rejected, failed checks: " + failed_names(checks) +
                                      " — " + reason + " (recorded as a CompactionFailed event)");
}

SummarizerInfo info_of(std::string_view summary_json, const SummarizerInfo &fallback) {
  simdjson::dom::parser parser;
  element s;
  if (parser.parse(summary_json.data(), summary_json.size()).get(s)) return fallback;
  element n;
  if (s["provenance"]["summarizer"].get(n) || !n.is_object()) return fallback;
  SummarizerInfo info{std::string(string_field(n, "name")),
                      std::string(string_field(n, "version"))};
  return info.name.empty() ? fallback : info;
}

// Checks, then commits or rejects.
std::string check_and_commit(compile::Sources &src, const Plan &p, std::string_view summary_json,
                             const SummarizerInfo &fallback) {
  SummarizerInfo info = info_of(summary_json, fallback);
  std::vector<Check> checks = check_summary(p, summary_json);
  if (!all_ok(checks)) reject(src, p, checks, info);
  std::string summary = normalize_summary(p, summary_json, info);
  simdjson::dom::parser parser;
  int64_t summary_tokens =
      src.counter.count(compile::summary_text(json::parse(parser, summary, "summary"))) +
      compile::kFramingTokens;
  int64_t before = p.tokens_before(), after = summary_tokens + p.kept_tokens;
  // Nothing kept: the compaction is its own first kept event.
  std::string event_id = util::new_id("evt_");
  std::string first_kept = p.first_kept_event_id.empty() ? event_id : p.first_kept_event_id;
  json::JsonWriter w;
  w.begin_object()
      .field("id", event_id)
      .field("type", "CompactionCompleted")
      .field("actor", "ctxdb")
      .field("parent_id", p.target.leaf_id)
      .field("branch_id", p.target.branch.id)
      .key("payload")
      .begin_object()
      .raw_field("summary", summary)
      .key("range");
  write_range(w, p);
  w.field("first_kept_event_id", first_kept)
      .field("cut_kind", p.cut_kind)
      .field("tokens_before", before)
      .field("tokens_after", after)
      .key("checks");
  write_checks(w, checks);
  w.key("summarizer");
  write_summarizer(w, info);
  if (!p.previous_compaction_id.empty())
    w.field("previous_compaction_id", p.previous_compaction_id);
  w.end_object().end_object();
  try {
    src.log.append(p.target.session_id, w.str());
  } catch (const Error &e) {
    if (e.code() != Code::kConflict) throw;
    record_failure(src, p, checks, std::string("the branch moved while summarizing: ") + e.what(),
                   info);
    throw;
  }
  json::JsonWriter r;
  r.begin_object()
      .field("status", "compacted")
      .field("event_id", event_id)
      .field("session_id", p.target.session_id)
      .field("branch_id", p.target.branch.id)
      .field("first_kept_event_id", first_kept)
      .field("cut_kind", p.cut_kind)
      .key("range");
  write_range(r, p);
  r.field("tokens_before", before)
      .field("tokens_after", after)
      .raw_field("ratio", ratio(after, before))
      .key("checks");
  write_checks(r, checks);
  r.key("summarizer");
  write_summarizer(r, info);
  r.raw_field("summary", summary).end_object();
  return r.take();
}

std::string nothing_to_compact(const Plan &p) {
  json::JsonWriter w;
  w.begin_object()
      .field("status", "nothing_to_compact")
      .field("reason", p.reason)
      .field("session_id", p.target.session_id)
      .field("branch_id", p.target.branch.id)
      .field("tokens_before", p.tokens_before())
      .end_object();
  return w.take();
}

} // namespace

std::string compact(compile::Sources &src, const std::string &session_id, const Policy &policy,
                    const Summarizer *host) {
  Plan p = plan(src, session_id, policy);
  if (p.empty) return nothing_to_compact(p);
  if (!host) return check_and_commit(src, p, extractive_summary(p), kExtractive);
  const SummarizerInfo host_info{"host", ""};
  std::string summary;
  auto t0 = std::chrono::steady_clock::now();
  try {
    summary = (*host)(to_json(p));
  } catch (const std::exception &e) {
    reject(src, p,
           {Check{"summarizer", false, std::string("the summarizer failed: ") + e.what(), {}}},
           host_info);
  } catch (...) {
    reject(src, p, {Check{"summarizer", false, "the summarizer failed", {}}}, host_info);
  }
  int64_t ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0)
          .count();
  if (policy.timeout_ms > 0 && ms > policy.timeout_ms)
    reject(src, p,
           {Check{"summarizer",
                  false,
                  "the summarizer answered after " + std::to_string(ms) + " ms, past timeout_ms " +
                      std::to_string(policy.timeout_ms) + "; its answer is not used",
                  {}}},
           host_info);
  if (summary.empty())
    reject(src, p, {Check{"summarizer", false, "the summarizer returned an empty summary", {}}},
           host_info);
  return check_and_commit(src, p, summary, host_info);
}

std::string commit(compile::Sources &src, const std::string &session_id, std::string_view plan_json,
                   std::string_view summary_json) {
  simdjson::dom::parser parser;
  element doc = json::parse(parser, plan_json, "plan");
  std::string_view leaf;
  if (!doc.is_object() || doc["leaf_event_id"].get(leaf) || leaf.empty())
    throw Error(Code::kInvalidArg, "plan: missing required field 'leaf_event_id' (give the JSON "
                                   "plan_compaction returned)");
  element kept;
  if (doc["cut"]["first_kept_event_id"].get(kept))
    throw Error(Code::kInvalidArg, "plan: missing required field 'cut.first_kept_event_id'");
  std::string first_kept = kept.is_string() ? std::string(kept.get_string().value()) : "";
  std::string_view plan_session;
  if (!doc["session_id"].get(plan_session) && plan_session != session_id)
    throw Error(Code::kInvalidArg, "plan: it is a plan of session '" + std::string(plan_session) +
                                       "', not '" + session_id + "'");
  Policy policy;
  element given;
  if (!doc["policy"].get(given)) policy = parse_policy(json::canonical(given));
  Plan p = plan_at(src, session_id, std::string(leaf), first_kept, policy);
  if (p.empty) throw Error(Code::kInvalidArg, "plan: nothing to compact (" + p.reason + ")");
  return check_and_commit(src, p, summary_json, SummarizerInfo{"host", ""});
}

std::string summarize_branch(compile::Sources &src, const std::string &session_id,
                             const std::string &from_leaf, const std::string &to_event) {
  Target t;
  int64_t ancestor = 0;
  std::string ancestor_id;
  {
    store::Store::ReadTransaction snapshot(src.store);
    t = resolve(src, session_id, std::nullopt, from_leaf);
    Target to = resolve(src, session_id, std::nullopt, to_event);
    // The common ancestor: the last seq both paths hold (seqs are unique
    // in a session, so paths meet where their seq ranges overlap).
    for (const log::Segment &a : t.path.segments)
      for (const log::Segment &b : to.path.segments)
        if (std::max(a.first_seq, b.first_seq) <= std::min(a.last_seq, b.last_seq))
          ancestor = std::max(ancestor, std::min(a.last_seq, b.last_seq));
    if (ancestor >= t.leaf_seq)
      throw Error(Code::kInvalidArg, "from_leaf '" + from_leaf + "' is on the path of '" +
                                         to_event + "': nothing was abandoned");
    std::vector<log::Event> at = src.log.read_session(session_id, ancestor, ancestor, 1);
    if (!at.empty()) ancestor_id = at.front().id;
  }
  t.from_seq = ancestor + 1;
  t.previous.reset();
  Policy policy;
  policy.keep_recent_tokens = 0;
  Plan p = plan_target(src, std::move(t), policy, std::string());
  std::string summary = extractive_summary(p);
  std::vector<Check> checks = check_summary(p, summary);
  // Nothing is removed from the abandoned branch: its pending calls stay
  // there, so that rule does not apply.
  std::erase_if(checks, [](const Check &c) { return c.name == "pending_call"; });
  if (!all_ok(checks))
    throw Error(Code::kCheckFailed, "branch summary failed its checks: " + failed_names(checks));
  summary = normalize_summary(p, summary, kExtractive);
  simdjson::dom::parser parser;
  std::string text = "Summary of a branch that was abandoned (events #" +
                     std::to_string(p.from_seq) + " to #" + std::to_string(p.to_seq) +
                     " after event " + ancestor_id + "); what was tried there:\n\n" +
                     compile::summary_text(json::parse(parser, summary, "summary"));
  json::JsonWriter w;
  w.begin_object()
      .field("type", "BranchSummarized")
      .field("actor", "ctxdb")
      .field("parent_id", to_event)
      .key("payload")
      .begin_object()
      .field("text", text)
      .raw_field("summary", summary)
      .field("from_leaf_event_id", from_leaf)
      .field("common_ancestor_event_id", ancestor_id)
      .key("range");
  write_range(w, p);
  w.key("checks");
  write_checks(w, checks);
  w.end_object().end_object();
  log::Event e = src.log.append(session_id, w.str());
  json::JsonWriter r;
  r.begin_object()
      .field("event_id", e.id)
      .field("branch_id", e.branch_id)
      .field("from_leaf_event_id", from_leaf)
      .field("common_ancestor_event_id", ancestor_id)
      .key("range");
  write_range(r, p);
  r.raw_field("summary", summary).field("text", text).end_object();
  return r.take();
}

std::string list(compile::Sources &src, const std::string &session_id,
                 const std::optional<std::string> &branch) {
  store::Store::ReadTransaction snapshot(src.store);
  Target t = resolve(src, session_id, branch);
  simdjson::dom::parser parser;
  json::JsonWriter w;
  w.begin_array();
  project::for_each_row(src.store, kOnPath, t.path, [&](SQLite::Statement &q, auto &branch_id) {
    std::string payload_text = q.getColumn(5).getString();
    element payload = json::parse_payload(parser, payload_text, q.getColumn(1).getString());
    w.begin_object()
        .field("event_id", q.getColumn(1).getString())
        .field("seq", q.getColumn(0).getInt64())
        .field("branch_id", branch_id)
        .field("first_kept_event_id", string_field(payload, "first_kept_event_id"))
        .field("first_kept_seq", q.getColumn(2).getInt64());
    element range, checks, summarizer;
    w.key("range");
    if (!payload["range"].get(range))
      w.element(range);
    else
      w.null();
    project::column_field(w, "tokens_before", q.getColumn(3));
    project::column_field(w, "tokens_after", q.getColumn(4));
    w.key("ratio");
    if (q.getColumn(3).isNull() || q.getColumn(4).isNull())
      w.null();
    else
      w.raw(ratio(q.getColumn(4).getInt64(), q.getColumn(3).getInt64()));
    w.key("checks").begin_array();
    if (!payload["checks"].get(checks))
      for (element c : checks.get_array()) {
        bool ok = false;
        if (c["ok"].get(ok)) ok = false;
        w.begin_object().field("name", string_field(c, "name")).key("ok").boolean(ok).end_object();
      }
    w.end_array().key("summarizer");
    if (!payload["summarizer"].get(summarizer))
      w.element(summarizer);
    else
      w.null();
    w.end_object();
  });
  w.end_array();
  return w.take();
}

} // namespace ctxdb::compact
