#include "project/stats.hpp"

#include "error.hpp"
#include "token/counter.hpp"
#include "json/json_writer.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <unordered_map>

namespace ctxdb::project {

namespace {

using simdjson::dom::array;
using simdjson::dom::element;
using simdjson::dom::object;

// The stats table's counter columns, in StatField order. Maxima add up
// differently across sessions from the other counters.
constexpr const char *kColumns[kStatFieldCount] = {
    "events",
    "user_prompts",
    "assistant_messages",
    "usage_input_tokens",
    "usage_output_tokens",
    "usage_cache_read_tokens",
    "usage_cache_write_tokens",
    "tool_calls",
    "tool_results",
    "tool_errors",
    "tool_failures",
    "tool_duration_count",
    "tool_duration_total_ms",
    "tool_duration_max_ms",
    "latency_count",
    "latency_total_ms",
    "latency_max_ms",
    "approvals_requested",
    "approvals_granted",
    "approvals_denied",
    "compactions",
    "compactions_failed",
    "compaction_tokens_before",
    "compaction_tokens_after",
    "context_builds",
    "context_used_tokens",
    "errors",
    "usage_reasoning_tokens",
    "cost_nano_usd",
    "priced_messages",
    "tool_cancellations",
};

bool is_max(size_t f) { return f == kToolDurationMaxMs || f == kLatencyMaxMs; }

std::string column_list() {
  std::string s;
  for (const char *c : kColumns) s += std::string(",") + c;
  return s;
}

// SQL built once from kColumns, kept for the statement cache (which keys on
// the address of the text).
const char *upsert_sql() {
  static const std::string sql = [] {
    std::string s = "INSERT OR REPLACE INTO stats(session_no" + column_list() + ") VALUES(?";
    for (size_t i = 0; i < kStatFieldCount; ++i) s += ",?";
    return s + ")";
  }();
  return sql.c_str();
}

const char *select_sql() {
  static const std::string sql =
      "SELECT " + column_list().substr(1) + " FROM stats WHERE session_no=?";
  return sql.c_str();
}

// Every session's totals: sums, and maxima for the max columns. Summed as
// doubles (TOTAL: exact below 2^53) and cast back, which saturates at the
// int64 maximum: SUM fails the whole call on an integer overflow, and
// counters hold whatever large numbers hosts sent.
const char *totals_sql() {
  static const std::string sql = [] {
    std::string s = "SELECT COUNT(*)";
    for (size_t i = 0; i < kStatFieldCount; ++i)
      s += is_max(i) ? std::string(",COALESCE(MAX(") + kColumns[i] + "),0)"
                     : std::string(",CAST(TOTAL(") + kColumns[i] + ") AS INTEGER)";
    return s + " FROM stats";
  }();
  return sql.c_str();
}

// counter += n, saturating at the int64 maximum (n >= 0): token counts
// come from hosts, and a wrapped sum would turn negative.
void add(int64_t &counter, int64_t n) {
  if (__builtin_add_overflow(counter, n, &counter)) counter = INT64_MAX;
}

int64_t int_field(object o, const char *key) {
  int64_t n = 0;
  if (o[key].get(n) || n < 0) return 0;
  return n;
}

void add_duration(SessionStats &s, object p, const char *key, StatField count, StatField total,
                  StatField max) {
  int64_t ms = 0;
  if (p[key].get(ms) || ms < 0) return;
  ++s[count];
  add(s[total], ms);
  s[max] = std::max(s[max], ms);
}

void on_assistant(SessionStats &s, object p) {
  ++s[kAssistantMessages];
  array content;
  if (!p["content"].get(content)) {
    for (element block : content) {
      object b;
      std::string_view type;
      if (block.get(b) || b["type"].get(type)) continue;
      if (type == "tool_call") ++s[kToolCalls];
    }
  }
  object usage;
  if (p["usage"].get(usage)) return;
  add(s[kUsageInputTokens], int_field(usage, "input_tokens"));
  add(s[kUsageOutputTokens], int_field(usage, "output_tokens"));
  add(s[kUsageCacheReadTokens], int_field(usage, "cache_read_tokens"));
  add(s[kUsageCacheWriteTokens], int_field(usage, "cache_write_tokens"));
  add(s[kUsageReasoningTokens], int_field(usage, "reasoning_tokens"));
}

// A price table, checked when its SessionStarted is appended: a bad one is
// refused then, naming the field, rather than mispricing every message.
Stats::Pricing read_pricing(object payload) {
  Stats::Pricing table;
  object pricing;
  if (payload["pricing"].get(pricing)) {
    if (payload["pricing"].error() == simdjson::NO_SUCH_FIELD) return table;
    throw Error(Code::kInvalidArg, "SessionStarted: payload.pricing must be an object of models");
  }
  for (auto [model, value] : pricing) {
    std::string at = "payload.pricing." + std::string(model);
    object o;
    if (value.get(o))
      throw Error(Code::kInvalidArg, "SessionStarted: " + at + " must be an object");
    Stats::Price price;
    std::pair<const char *, double *> kinds[] = {{"input", &price.input},
                                                 {"cache_read", &price.cache_read},
                                                 {"cache_write", &price.cache_write},
                                                 {"output", &price.output}};
    for (auto [key, out] : kinds) {
      element v;
      if (o[key].get(v)) continue; // a kind not priced costs nothing
      double d;
      if (v.get(d) || !(d >= 0) || d > 1e9)
        throw Error(Code::kInvalidArg,
                    "SessionStarted: " + at + "." + key +
                        " must be a number of USD per million tokens (0 to 1e9)");
      *out = d;
    }
    table.emplace(std::string(model), price);
  }
  return table;
}

void on_tool_result(SessionStats &s, object p, bool failed) {
  if (failed) {
    ++s[kToolFailures];
  } else {
    ++s[kToolResults];
    bool is_error = false;
    if (!p["is_error"].get(is_error) && is_error) ++s[kToolErrors];
  }
  add_duration(s, p, "duration_ms", kToolDurationCount, kToolDurationTotalMs, kToolDurationMaxMs);
}

using Handler = void (*)(SessionStats &, object);

const std::unordered_map<std::string_view, Handler> &handlers() {
  static const std::unordered_map<std::string_view, Handler> kHandlers = {
      {"UserPromptSubmitted", [](SessionStats &s, object) { ++s[kUserPrompts]; }},
      {"AssistantMessageCreated", on_assistant},
      {"ToolCallFinished", [](SessionStats &s, object p) { on_tool_result(s, p, false); }},
      {"ToolCallFailed", [](SessionStats &s, object p) { on_tool_result(s, p, true); }},
      {"ToolCallCancelled", [](SessionStats &s, object) { ++s[kToolCancellations]; }},
      {"ApprovalRequested", [](SessionStats &s, object) { ++s[kApprovalsRequested]; }},
      {"ApprovalGranted", [](SessionStats &s, object) { ++s[kApprovalsGranted]; }},
      {"ApprovalDenied", [](SessionStats &s, object) { ++s[kApprovalsDenied]; }},
      {"CompactionCompleted",
       [](SessionStats &s, object p) {
         ++s[kCompactions];
         add(s[kCompactionTokensBefore], int_field(p, "tokens_before"));
         add(s[kCompactionTokensAfter], int_field(p, "tokens_after"));
       }},
      {"CompactionFailed", [](SessionStats &s, object) { ++s[kCompactionsFailed]; }},
      {"ContextBuilt",
       [](SessionStats &s, object p) {
         ++s[kContextBuilds];
         add(s[kContextUsedTokens], int_field(p, "used_tokens"));
       }},
      {"ErrorRaised", [](SessionStats &s, object) { ++s[kErrors]; }},
  };
  return kHandlers;
}

// A ratio for output only (it is never stored), so printf's rounding is fine.

void timing(json::JsonWriter &w, const char *key, const SessionStats &s, StatField count,
            StatField total, StatField max) {
  w.key(key).begin_object().field("count", s[count]).field("total", s[total]).field("max", s[max]);
  w.key("mean");
  Stats::write_ratio(w, s[total], s[count]);
  w.end_object();
}

// The tokens of the messages projection's rows, by role.
struct Counted {
  std::string counter;
  int64_t user = 0, assistant = 0, tool = 0, summary = 0, context = 0;
};

constexpr char kCountedOne[] = "SELECT role,SUM(tokens),MIN(token_counter),MAX(token_counter) "
                               "FROM messages WHERE session_no=? GROUP BY role";
constexpr char kCountedAll[] = "SELECT role,SUM(tokens),MIN(token_counter),MAX(token_counter) "
                               "FROM messages GROUP BY role";

Counted counted(store::Store &store, std::optional<int64_t> session_no) {
  auto q = store.statement(session_no ? kCountedOne : kCountedAll);
  if (session_no) q->bind(1, *session_no);
  Counted c;
  while (q->executeStep()) {
    std::string role = q->getColumn(0).getString();
    int64_t n = q->getColumn(1).getInt64();
    (role == "user"                                ? c.user
     : role == "assistant"                         ? c.assistant
     : role == "tool"                              ? c.tool
     : role == "context" || role == "instructions" ? c.context
                                                   : c.summary) += n;
    // Counts by different counters cannot be added up silently.
    for (int col : {2, 3}) {
      std::string name = q->getColumn(col).getString();
      c.counter = c.counter.empty() || c.counter == name ? name : "mixed";
    }
  }
  if (c.counter.empty()) c.counter = token::default_counter().name();
  return c;
}

// Every model's correction, database-wide: reported / estimated.
void write_calibration(store::Store &store, json::JsonWriter &w) {
  w.key("calibration").begin_array();
  auto q = store.statement("SELECT model,samples,estimated_tokens,reported_tokens FROM "
                           "token_calibration ORDER BY model");
  while (q->executeStep()) {
    int64_t estimated = q->getColumn(2).getInt64(), reported = q->getColumn(3).getInt64();
    w.begin_object()
        .field("model", q->getColumn(0).getString())
        .field("samples", q->getColumn(1).getInt64())
        .field("estimated_tokens", estimated)
        .field("reported_tokens", reported)
        .key("ratio");
    Stats::write_ratio(w, reported, estimated);
    w.end_object();
  }
  w.end_array();
}

std::string write_stats(store::Store &store, const SessionStats &s, const Counted &c,
                        std::string_view session_id, int64_t sessions) {
  json::JsonWriter w;
  w.begin_object().key("session_id");
  session_id.empty() ? w.null() : w.value(session_id);
  w.field("sessions", sessions).field("events", s[kEvents]);
  w.key("messages")
      .begin_object()
      .field("user", s[kUserPrompts])
      .field("assistant", s[kAssistantMessages])
      .end_object();
  w.key("tokens").begin_object().key("counted").begin_object().field("counter", c.counter);
  w.field("user", c.user)
      .field("assistant", c.assistant)
      .field("tool", c.tool)
      .field("summary", c.summary)
      .field("context", c.context)
      .field("total", c.user + c.assistant + c.tool + c.summary + c.context)
      .end_object();
  w.key("usage")
      .begin_object()
      .field("input", s[kUsageInputTokens])
      .field("output", s[kUsageOutputTokens])
      .field("cache_read", s[kUsageCacheReadTokens])
      .field("cache_write", s[kUsageCacheWriteTokens])
      .field("reasoning", s[kUsageReasoningTokens])
      .end_object()
      .end_object();
  w.key("cost")
      .begin_object()
      .field("nano_usd", s[kCostNanoUsd])
      .field("priced_messages", s[kPricedMessages]);
  // USD for reading; nano_usd is the exact sum.
  w.key("usd");
  if (s[kPricedMessages] == 0) {
    w.null();
  } else {
    char buf[48];
    int len = std::snprintf(buf, sizeof buf, "%.6f", double(s[kCostNanoUsd]) / 1e9);
    w.raw(std::string_view(buf, size_t(len)));
  }
  w.end_object();
  w.key("tools")
      .begin_object()
      .field("calls", s[kToolCalls])
      .field("results", s[kToolResults])
      .field("errors", s[kToolErrors])
      .field("failures", s[kToolFailures])
      .field("cancelled", s[kToolCancellations]);
  timing(w, "duration_ms", s, kToolDurationCount, kToolDurationTotalMs, kToolDurationMaxMs);
  w.end_object();
  timing(w, "latency_ms", s, kLatencyCount, kLatencyTotalMs, kLatencyMaxMs);
  w.key("approvals")
      .begin_object()
      .field("requested", s[kApprovalsRequested])
      .field("granted", s[kApprovalsGranted])
      .field("denied", s[kApprovalsDenied])
      .end_object();
  w.key("compactions")
      .begin_object()
      .field("completed", s[kCompactions])
      .field("failed", s[kCompactionsFailed])
      .field("tokens_before", s[kCompactionTokensBefore])
      .field("tokens_after", s[kCompactionTokensAfter])
      .key("ratio");
  Stats::write_ratio(w, s[kCompactionTokensAfter], s[kCompactionTokensBefore]);
  w.end_object();
  w.key("context")
      .begin_object()
      .field("builds", s[kContextBuilds])
      .field("used_tokens", s[kContextUsedTokens])
      .end_object();
  w.field("errors", s[kErrors]);
  write_calibration(store, w);
  w.end_object();
  return w.take();
}

} // namespace

std::optional<Stats::ModelCalibration> Stats::calibration_of(store::Store &store,
                                                             std::string_view model) {
  auto q = store.statement("SELECT samples,estimated_tokens,reported_tokens FROM "
                           "token_calibration WHERE model=?");
  store::bind_text(*q, 1, model);
  if (!q->executeStep()) return std::nullopt;
  return ModelCalibration{q->getColumn(0).getInt64(), q->getColumn(1).getInt64(),
                          q->getColumn(2).getInt64()};
}

void Stats::write_ratio(json::JsonWriter &w, int64_t num, int64_t den) {
  if (den == 0) {
    w.null();
    return;
  }
  char buf[48];
  int len = std::snprintf(buf, sizeof buf, "%.4f", double(num) / double(den));
  std::string_view s(buf, size_t(len));
  // Four decimals at most, without trailing zeros: 0.25, 21, 1.3333.
  s = s.substr(0, s.find_last_not_of('0') + 1);
  if (s.back() == '.') s.remove_suffix(1);
  w.raw(s);
}

std::span<const char *const> Stats::tables() const {
  static const char *const kTables[] = {"stats", "token_calibration"};
  return kTables;
}

SessionStats &Stats::session_for(int64_t session_no) {
  if (auto it = sessions_.find(session_no); it != sessions_.end()) return it->second;
  SessionStats s;
  auto q = store_.statement(select_sql());
  q->bind(1, session_no);
  if (q->executeStep())
    for (size_t i = 0; i < kStatFieldCount; ++i) s.v[i] = q->getColumn(int(i)).getInt64();
  return sessions_.emplace(session_no, std::move(s)).first->second;
}

const Stats::Pricing &Stats::pricing_for(int64_t session_no) {
  if (auto it = pricing_.find(session_no); it != pricing_.end()) return it->second;
  Pricing table;
  auto q = store_.statement("SELECT payload FROM events WHERE session_no=? AND seq=1");
  q->bind(1, session_no);
  if (q->executeStep() && !q->getColumn(0).isNull()) {
    simdjson::dom::parser parser;
    object p;
    // A stored payload was checked when it was appended.
    if (!parser.parse(q->getColumn(0).getString()).get(p)) table = read_pricing(p);
  }
  return pricing_.emplace(session_no, std::move(table)).first->second;
}

// The message's cost under its model's prices (or the table's "*"), in
// nano-USD: tokens x USD per million tokens x 1000, rounded per message.
// Reasoning tokens are billed as the output tokens they are part of.
void Stats::on_assistant_cost(SessionStats &s, int64_t session_no, object p) {
  object usage;
  if (p["usage"].get(usage)) return;
  const Pricing &table = pricing_for(session_no);
  if (table.empty()) return;
  std::string_view model;
  if (p["model"].get(model)) model = {};
  auto it = table.find(std::string(model));
  if (it == table.end()) it = table.find("*");
  if (it == table.end()) return;
  const Price &pr = it->second;
  double nano = (double(int_field(usage, "input_tokens")) * pr.input +
                 double(int_field(usage, "cache_read_tokens")) * pr.cache_read +
                 double(int_field(usage, "cache_write_tokens")) * pr.cache_write +
                 double(int_field(usage, "output_tokens")) * pr.output) *
                1000.0;
  add(s[kCostNanoUsd], nano >= 9.2e18 ? INT64_MAX : std::llround(nano));
  ++s[kPricedMessages];
}

std::optional<int64_t> Stats::build_tokens(const std::string &id) {
  if (auto it = builds_.find(id); it != builds_.end()) return it->second;
  auto q = store_.statement("SELECT payload FROM events WHERE id=? AND type='ContextBuilt'");
  q->bind(1, id);
  if (!q->executeStep() || q->getColumn(0).isNull()) return std::nullopt;
  simdjson::dom::parser parser;
  object p;
  if (parser.parse(q->getColumn(0).getString()).get(p)) return std::nullopt;
  return int_field(p, "used_tokens");
}

// Only a response whose parent is the compile it answered is a sample:
// what the provider read is then what the compile counted (plus the tool
// definitions and framing the provider adds, which the ratio takes in).
void Stats::calibrate(const log::Event &e, object p) {
  std::string_view model;
  object usage;
  if (!e.parent_id || p["model"].get(model) || model.empty() || p["usage"].get(usage)) return;
  std::optional<int64_t> estimated = build_tokens(*e.parent_id);
  if (!estimated || *estimated <= 0) return;
  int64_t reported = 0;
  for (const char *k : {"input_tokens", "cache_read_tokens", "cache_write_tokens"})
    add(reported, int_field(usage, k));
  if (reported == 0) return;
  auto [it, fresh] = calibration_.try_emplace(std::string(model));
  if (fresh) {
    auto q = store_.statement("SELECT samples,estimated_tokens,reported_tokens FROM "
                              "token_calibration WHERE model=?");
    q->bind(1, it->first);
    if (q->executeStep())
      it->second = {q->getColumn(0).getInt64(), q->getColumn(1).getInt64(),
                    q->getColumn(2).getInt64()};
  }
  ++it->second.samples;
  add(it->second.estimated, *estimated);
  add(it->second.reported, reported);
}

void Stats::on_append(const log::Event &e) {
  SessionStats &s = session_for(e.session_no);
  ++s[kEvents];
  object p;
  if (e.type == "SessionStarted" && !payloads_.get(e).get(p)) {
    pricing_[e.session_no] = read_pricing(p);
    return;
  }
  auto h = handlers().find(e.type);
  if (h == handlers().end()) return;
  if (payloads_.get(e).get(p)) return;
  h->second(s, p);
  if (e.type == "AssistantMessageCreated") {
    on_assistant_cost(s, e.session_no, p);
    calibrate(e, p);
  } else if (e.type == "ContextBuilt") {
    builds_[e.id] = int_field(p, "used_tokens");
  }
  // Hosts may time any event (a model call, a compile); core types only, as
  // the payloads of others are not ours to read.
  add_duration(s, p, "latency_ms", kLatencyCount, kLatencyTotalMs, kLatencyMaxMs);
}

void Stats::flush() {
  for (const auto &[no, s] : sessions_) {
    auto q = store_.statement(upsert_sql());
    q->bind(1, no);
    for (size_t i = 0; i < kStatFieldCount; ++i) q->bind(int(i) + 2, s.v[i]);
    q->exec();
  }
  sessions_.clear();
  for (const auto &[model, c] : calibration_) {
    auto q = store_.statement("INSERT OR REPLACE INTO token_calibration(model,samples,"
                              "estimated_tokens,reported_tokens) VALUES(?,?,?,?)");
    q->bind(1, model);
    q->bind(2, c.samples);
    q->bind(3, c.estimated);
    q->bind(4, c.reported);
    q->exec();
  }
  calibration_.clear();
  builds_.clear();
}

void Stats::discard() {
  sessions_.clear();
  pricing_.clear(); // may hold a rolled-back session's; read again when needed
  calibration_.clear();
  builds_.clear();
}

std::string Stats::get_json(std::optional<int64_t> session_no, std::string_view session_id) {
  if (session_no) {
    SessionStats s = session_for(*session_no); // a copy: reads must leave no cache behind
    sessions_.clear();
    return write_stats(store_, s, counted(store_, session_no), session_id, 1);
  }
  auto q = store_.statement(totals_sql());
  q->executeStep();
  SessionStats s;
  for (size_t i = 0; i < kStatFieldCount; ++i) s.v[i] = q->getColumn(int(i) + 1).getInt64();
  return write_stats(store_, s, counted(store_, std::nullopt), {}, q->getColumn(0).getInt64());
}

} // namespace ctxdb::project
