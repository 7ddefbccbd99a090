#include "compact/planner.hpp"

#include "compile/history.hpp"
#include "error.hpp"
#include "project/payload_cache.hpp"
#include "json/json_writer.hpp"
#include "json/parse.hpp"

#include <algorithm>
#include <unordered_map>

namespace ctxdb::compact {

namespace {

using project::string_field;
using simdjson::dom::element;

constexpr char kRangeEvents[] = "SELECT seq,id,type,payload FROM events "
                                "WHERE session_no=?1 AND seq BETWEEN ?2 AND ?3 ORDER BY seq";
constexpr char kMessageSums[] = "SELECT coalesce(sum(tokens),0),count(*) FROM messages "
                                "WHERE session_no=?1 AND seq BETWEEN ?2 AND ?3 AND role<>'summary'";
constexpr char kMessageTokens[] = "SELECT tokens FROM messages WHERE session_no=? AND seq=?";
constexpr char kLatestAssistant[] =
    "SELECT seq,id,payload FROM events WHERE session_no=?1 AND seq BETWEEN ?2 AND ?3 "
    "AND type='AssistantMessageCreated' ORDER BY seq DESC LIMIT 16";

// A message's tool output above this many characters enters the
// transcript's non-message lines (event payloads) shortened.
constexpr size_t kLineChars = 400;

template <class T> void read(element o, const char *key, T &out) {
  T v;
  if (!o[key].get(v)) out = v;
}

// The path clipped to seqs [from, to]: what a range scan reads.
project::BranchPath clip(const project::BranchPath &path, int64_t from, int64_t to) {
  project::BranchPath out = path;
  out.segments.clear();
  out.segment_branch_ids.clear();
  for (size_t i = 0; i < path.segments.size(); ++i) {
    log::Segment s = path.segments[i];
    s.first_seq = std::max(s.first_seq, from);
    s.last_seq = std::min(s.last_seq, to);
    if (s.first_seq > s.last_seq) continue;
    out.segments.push_back(s);
    out.segment_branch_ids.push_back(path.segment_branch_ids[i]);
  }
  return out;
}

// The texts of a message's rendered blocks, as transcript lines.
std::string render_blocks(simdjson::dom::parser &parser, std::string_view content) {
  std::string out;
  for (element b : json::parse(parser, content, "content").get_array()) {
    std::string_view type = string_field(b, "type");
    if (type == "text") {
      out.append(string_field(b, "text")).append("\n");
    } else if (type == "tool_call") {
      element args;
      out.append("-> tool_call ").append(string_field(b, "name"));
      out.append(" (id ").append(string_field(b, "id")).append(")");
      if (!b["args"].get(args))
        out.append(" ").append(args.is_string() ? std::string(args.get_string().value())
                                                : json::canonical(args));
      out.append("\n");
    } else if (type == "tool_result") {
      std::string_view text = string_field(b, "text"), error = string_field(b, "error");
      if (!error.empty()) out.append("error: ").append(error).append("\n");
      if (!text.empty()) out.append(text).append("\n");
      std::string_view artifact = string_field(b, "artifact_id");
      if (!artifact.empty())
        out.append("[whole output in artifact ").append(artifact).append("]\n");
    } else if (type == "thinking") {
      continue; // the model's own scratch: not evidence
    } else if (!type.empty()) {
      out.append("[").append(type).append(" block]\n");
    }
  }
  return out;
}

std::string first_text(simdjson::dom::parser &parser, std::string_view content) {
  for (element b : json::parse(parser, content, "content").get_array())
    if (string_field(b, "type") == "text") return std::string(string_field(b, "text"));
  return "";
}

struct Line {
  int64_t seq;
  std::string text;
};

// What a plan reads of the conversation: every turn after the previous cut.
struct Conversation {
  std::vector<compile::Turn> turns; // newest first
};

Conversation read_conversation(compile::Sources &src, const Target &t, const Policy &policy,
                               const policy::Redactor &redactor) {
  compile::HistoryOptions options;
  options.from_seq = t.from_seq;
  options.prune_min_tokens = policy.preview_min_tokens;
  options.prune_preview_bytes = policy.preview_bytes;
  // Images cost what a compile for no one provider counts (the largest
  // rule), read the same way, so a cut keeps what a compile can fit.
  options.artifacts = src.artifacts;
  compile::History history(src.store, src.counter, redactor, t.path, options);
  Conversation c;
  while (std::optional<compile::Turn> turn = history.next_turn())
    c.turns.push_back(std::move(*turn));
  return c;
}

int64_t turn_tokens(const compile::Turn &t) {
  int64_t n = 0;
  for (const compile::Message &m : t.messages) n += m.tokens;
  return n;
}

int64_t unit_tokens(const compile::Turn &t, const compile::Unit &u) {
  int64_t n = 0;
  for (size_t k = u.first; k <= u.last; ++k) n += t.messages[k].tokens;
  return n;
}

// The cut by the policy: the seq of the first kept message (leaf + 1 when
// nothing is kept).
void choose_cut(Plan &p, const Conversation &c, simdjson::dom::parser &parser) {
  const int64_t keep = p.policy.keep_recent_tokens;
  int64_t kept = 0;
  p.cut_seq = p.target.leaf_seq + 1;
  p.cut_kind = "all";
  const compile::Turn *split = nullptr;
  for (const compile::Turn &t : c.turns) {
    int64_t tokens = turn_tokens(t);
    if (kept + tokens <= keep) {
      kept += tokens;
      p.cut_seq = t.messages.front().seq;
      p.cut_kind = "turn";
      continue;
    }
    // Only a turn too large to keep whole by itself is split; a smaller one
    // goes to the summary whole.
    if (tokens > keep) {
      int64_t left = keep - kept;
      size_t first = t.units.size();
      for (size_t u = t.units.size(); u-- > 0;) {
        int64_t need = unit_tokens(t, t.units[u]);
        if (need > left) break;
        left -= need;
        first = u;
      }
      if (first < t.units.size()) {
        p.cut_seq = t.messages[t.units[first].first].seq;
        p.cut_kind = "split_turn";
        split = &t;
      }
    }
    break;
  }
  // Something recent always stays unless the policy keeps nothing: the
  // newest unit (or turn) however large.
  if (p.cut_kind == "all" && keep > 0 && !c.turns.empty()) {
    const compile::Turn &t = c.turns.front();
    if (t.units.empty()) {
      p.cut_seq = t.messages.front().seq;
      p.cut_kind = "turn";
    } else {
      p.cut_seq = t.messages[t.units.back().first].seq;
      p.cut_kind = t.units.back().first == 0 ? "turn" : "split_turn";
      if (p.cut_kind == "split_turn") split = &t;
    }
  }
  // Never before a call the host is still running (the newest turn's,
  // with nothing after it): move the cut back to the start of its turn. A
  // call the conversation moved on from is closed (History), so the cut
  // may pass it like any answered pair.
  if (!c.turns.empty()) {
    const compile::Turn &t = c.turns.front();
    std::unordered_set<std::string> running;
    for (const compile::CallRef &call : t.unanswered) running.insert(call.event_id);
    for (const compile::Message &m : t.messages)
      if (running.count(m.event_id) && m.seq < p.cut_seq) {
        p.cut_seq = t.messages.front().seq;
        p.cut_kind = "turn";
        split = nullptr;
      }
  }
  if (split && split->has_head && split->messages.front().seq < p.cut_seq)
    p.split_request = project::Sourced{first_text(parser, split->messages.front().content),
                                       split->messages.front().event_id};
}

void add_memory(Plan &p, std::string kind, std::string_view content,
                std::optional<std::string> confidence, const std::string &event_id) {
  for (MemoryCandidate &m : p.memory)
    if (m.kind == kind && m.content == content) {
      m.confidence = std::move(confidence); // restated: the newest wins
      m.event_id = event_id;
      return;
    }
  p.memory.push_back({std::move(kind), std::string(content), std::move(confidence), event_id});
}

// The range's events: what the summary is obliged to cover, the memory
// candidates, and the transcript lines of events that are not messages.
void scan_events(compile::Sources &src, Plan &p, const policy::Redactor &redactor,
                 std::vector<Line> &lines) {
  simdjson::dom::parser parser;
  std::unordered_map<std::string, std::string> call_names;
  project::BranchPath range = clip(p.target.path, p.target.from_seq, p.cut_seq - 1);
  auto line = [&](int64_t seq, const std::string &id, std::string text) {
    std::vector<policy::RedactionHit> hits;
    redactor.redact(text, hits);
    lines.push_back({seq, "[#" + std::to_string(seq) + " " + id + "] " + text + "\n"});
  };
  project::for_each_row(src.store, kRangeEvents, range, [&](SQLite::Statement &q, auto &) {
    int64_t seq = q.getColumn(0).getInt64();
    std::string id = q.getColumn(1).getString();
    std::string type = q.getColumn(2).getString();
    if (p.range_events++ == 0) {
      p.from_seq = seq;
      p.from_event_id = id;
    }
    p.to_seq = seq;
    p.to_event_id = id;
    p.range_ids.insert(id);
    std::string payload_text = q.getColumn(3).getString();
    element payload = json::parse_payload(parser, payload_text, id);
    if (type == "UserPromptSubmitted") {
      p.prompts.push_back({std::string(string_field(payload, "text")), id});
    } else if (type == "AssistantMessageCreated") {
      simdjson::dom::array content;
      if (!payload["content"].get(content))
        for (element b : content)
          if (string_field(b, "type") == "tool_call")
            call_names[std::string(string_field(b, "id"))] = string_field(b, "name");
    } else if (type == "FileRead" || type == "FileWritten" || type == "DiffApplied") {
      FileTouch f{std::string(string_field(payload, "path")), id, std::nullopt};
      std::string_view summary = string_field(payload, "change_summary");
      if (!summary.empty()) f.change_summary = std::string(summary);
      std::string text = (type == "FileRead" ? "file read: " : "file modified: ") + f.path;
      if (f.change_summary) text += " — " + *f.change_summary;
      line(seq, id, text);
      (type == "FileRead" ? p.files_read : p.files_modified).push_back(std::move(f));
    } else if (type == "ToolCallFailed" || type == "ToolCallFinished") {
      std::string call(string_field(payload, "tool_call_id"));
      std::string name(string_field(payload, "name"));
      if (name.empty() && call_names.count(call)) name = call_names[call];
      bool is_error = type == "ToolCallFailed";
      if (!is_error) read(payload, "is_error", is_error);
      std::string_view artifact = string_field(payload, "artifact_id");
      if (is_error) {
        std::string_view error = string_field(payload, "error");
        if (error.empty()) error = string_field(payload, "output");
        p.tool_errors.push_back({call, name, shorten(error, kLineChars), id});
      } else if (!artifact.empty()) {
        p.tool_results.push_back({call, name, shorten(string_field(payload, "output"), kLineChars),
                                  std::string(artifact), id});
      }
    } else if (type == "DecisionRecorded") {
      project::Decision d;
      d.decision = string_field(payload, "decision");
      std::string_view rationale = string_field(payload, "rationale");
      if (!rationale.empty()) d.rationale = std::string(rationale);
      simdjson::dom::array refs;
      if (!payload["evidence_refs"].get(refs))
        for (element r : refs)
          if (r.is_string()) d.evidence_refs.emplace_back(r.get_string().value());
      d.event_id = id;
      line(seq, id, "decision: " + d.decision + (d.rationale ? " — " + *d.rationale : ""));
      add_memory(p, "decision", d.decision, std::nullopt, id);
      p.decisions.push_back(std::move(d));
    } else if (type == "StateUpdated") {
      std::string text;
      for (element op : payload["ops"].get_array()) {
        std::string_view name = string_field(op, "op");
        std::string_view body = string_field(op, "text");
        if (body.empty()) body = string_field(op, "content");
        text.append(text.empty() ? "" : "; ").append(name);
        if (!body.empty()) text.append(": ").append(body);
        if (name == "add_fact") {
          element c;
          std::optional<std::string> confidence;
          double d = 1;
          if (!op["confidence"].get(c)) {
            confidence = json::canonical(c);
            if (c.get(d)) d = 1;
          }
          // Stable, confirmed facts only: a guess is not worth keeping.
          if (d >= 0.8) add_memory(p, "fact", body, confidence, id);
        } else if (name == "add_constraint") {
          // A memory kind (memory_write.schema.json), so the host can
          // promote it as it is: a constraint is an instruction to keep.
          std::string_view kind = string_field(op, "kind");
          add_memory(p, kind == "preference" ? "preference" : "instruction", body, std::nullopt,
                     id);
        }
      }
      line(seq, id, "state: " + text);
    }
  });
}

// The messages of the range (as transcript lines), the tokens on each
// side of the cut, and the tool pairs a cut would break.
void scan_messages(Plan &p, const Conversation &c, std::vector<Line> &lines,
                   simdjson::dom::parser &parser) {
  std::unordered_set<std::string> range_calls, kept_results;
  for (const compile::Turn &t : c.turns)
    for (const compile::Message &m : t.messages) {
      bool in_range = m.seq < p.cut_seq;
      if (!in_range && m.role == std::string_view("tool")) kept_results.insert(m.answers);
      if (!in_range) {
        p.kept_tokens += m.tokens;
        if (m.seq == p.cut_seq && !m.synthetic) p.first_kept_event_id = m.event_id;
        continue;
      }
      p.range_tokens += m.tokens;
      ++p.range_messages;
      for (const std::string &call : m.calls) range_calls.insert(call);
      const std::string &content = m.pruned_content ? *m.pruned_content : m.content;
      std::string who = m.role;
      if (!m.answers.empty()) who += " " + m.answers;
      lines.push_back({m.seq, "[#" + std::to_string(m.seq) + " " + m.event_id + " " + who + "]\n" +
                                  render_blocks(parser, content)});
    }
  for (const std::string &call : range_calls)
    if (kept_results.count(call)) p.split_pairs.push_back(call);
  std::sort(p.split_pairs.begin(), p.split_pairs.end());
  if (!c.turns.empty())
    for (const compile::CallRef &call : c.turns.front().unanswered)
      (p.range_ids.count(call.event_id) ? p.pending_in_range : p.pending_kept)
          .push_back(call.call_id);
}

void read_previous(compile::Sources &src, Plan &p) {
  if (!p.target.previous) return;
  std::optional<log::Event> e = src.log.find(p.target.previous->event_id);
  if (!e) return;
  simdjson::dom::parser parser;
  element payload = json::parse_payload(parser, e->payload, e->id);
  p.previous_compaction_id = e->id;
  p.previous_summary = json::canonical(payload["summary"].value());
  p.previous_summary_tokens = src.counter.count(compile::summary_text(payload["summary"].value())) +
                              compile::kFramingTokens;
}

// The head of the range (where the task was set) and its tail (the latest
// work, what the kept turns continue) matter most to a summary; what lies
// between is left out, whole lines, when all of it would not fit: a
// quarter of the budget for the head, the rest for the tail. A marker
// says what is missing and where the log still has it.
void cap_transcript(Plan &p, std::vector<Line> &lines, const token::Counter &counter) {
  constexpr int64_t kMarkerTokens = 64; // room kept for the marker
  int64_t budget = transcript_budget(p.policy, p.previous_summary_tokens);
  size_t n = lines.size();
  std::vector<int64_t> tokens(n);
  int64_t total = 0;
  for (size_t i = 0; i < n; ++i) total += tokens[i] = counter.count(lines[i].text);
  p.transcript_tokens = total;
  if (total <= budget) {
    for (Line &l : lines) p.transcript += l.text;
    return;
  }
  size_t head = 0, tail = n; // lines [head, tail) are left out
  int64_t head_used = 0, tail_used = 0;
  while (head < n && head_used + tokens[head] <= budget / 4) head_used += tokens[head++];
  while (tail > head && tail_used + tokens[tail - 1] <= budget - head_used - kMarkerTokens)
    tail_used += tokens[--tail];
  Plan::Omitted o;
  o.entries = int64_t(tail - head);
  o.tokens = total - head_used - tail_used;
  o.from_seq = lines[head].seq;
  o.to_seq = lines[tail - 1].seq;
  std::string marker = "[... " + std::to_string(o.entries) + " entries of the range, #" +
                       std::to_string(o.from_seq) + " to #" + std::to_string(o.to_seq) +
                       ", about " + std::to_string(o.tokens) +
                       " tokens, are left out of this transcript to fit its budget; the log "
                       "keeps them whole ...]\n";
  p.transcript.clear();
  for (size_t i = 0; i < head; ++i) p.transcript += lines[i].text;
  p.transcript += marker;
  for (size_t i = tail; i < n; ++i) p.transcript += lines[i].text;
  p.transcript_tokens = head_used + counter.count(marker) + tail_used;
  p.transcript_omitted = o;
}

} // namespace

int64_t transcript_budget(const Policy &policy, int64_t previous_summary_tokens) {
  if (policy.transcript_max_tokens > 0) return policy.transcript_max_tokens;
  int64_t hard = policy.context_window - policy.reserve_tokens;
  // A floor, so a tiny window still gets a usable transcript.
  return std::max<int64_t>(1024, hard - previous_summary_tokens - policy.summary_tokens);
}

Plan plan_target(compile::Sources &src, Target target, const Policy &policy,
                 const std::optional<std::string> &first_kept) {
  store::Store::ReadTransaction snapshot(src.store);
  Plan p;
  p.target = std::move(target);
  p.policy = policy;
  policy::Redactor redactor({}, true);
  simdjson::dom::parser parser;
  Conversation c = read_conversation(src, p.target, policy, redactor);
  read_previous(src, p);
  if (!first_kept) {
    choose_cut(p, c, parser);
  } else if (first_kept->empty()) {
    p.cut_seq = p.target.leaf_seq + 1;
    p.cut_kind = "all";
  } else {
    p.cut_seq = 0;
    for (const compile::Turn &t : c.turns)
      for (const compile::Message &m : t.messages)
        if (m.event_id == *first_kept) p.cut_seq = m.seq;
    if (p.cut_seq == 0)
      throw Error(Code::kNotFound, "first_kept_event_id '" + *first_kept +
                                       "' is not a message on the branch after the previous "
                                       "compaction's cut");
    p.cut_kind = "given";
  }
  std::vector<Line> lines;
  scan_events(src, p, redactor, lines);
  scan_messages(p, c, lines, parser);
  std::stable_sort(lines.begin(), lines.end(),
                   [](const Line &a, const Line &b) { return a.seq < b.seq; });
  cap_transcript(p, lines, src.counter);
  p.empty = p.range_messages == 0;
  if (p.empty)
    p.reason = c.turns.empty() ? "no messages after the previous compaction's cut"
                               : "the recent turns fit keep_recent_tokens: nothing before the cut";
  return p;
}

namespace {

void write_sourced(json::JsonWriter &w, const std::optional<project::Sourced> &s) {
  if (!s) {
    w.null();
    return;
  }
  w.begin_object().field("text", s->text).field("event_id", s->event_id).end_object();
}

} // namespace

std::string shorten(std::string_view s, size_t max) {
  if (s.size() <= max) return std::string(s);
  size_t cut = max;
  while (cut > 0 && (static_cast<unsigned char>(s[cut]) & 0xC0) == 0x80) --cut; // UTF-8 boundary
  return std::string(s.substr(0, cut)) + "…";
}

std::vector<element> items_of(simdjson::simdjson_result<element> v) {
  std::vector<element> out;
  simdjson::dom::array a;
  if (!v.get(a))
    for (element e : a) out.push_back(e);
  return out;
}

void write_range(json::JsonWriter &w, const Plan &p) {
  w.begin_object()
      .field("branch_id", p.target.branch.id)
      .field("from_seq", p.from_seq)
      .field("to_seq", p.to_seq)
      .field("from_event_id", p.from_event_id)
      .field("to_event_id", p.to_event_id)
      .field("events", p.range_events)
      .field("messages", p.range_messages)
      .end_object();
}

Policy parse_policy(std::string_view text) {
  Policy p;
  if (text.empty()) return p;
  simdjson::dom::parser parser;
  element doc = json::parse(parser, text, "compaction policy");
  store::embedded_schema("json/compaction_policy.schema.json").validate(doc, "policy");
  std::string_view branch;
  if (!doc["branch_id"].get(branch)) p.branch = std::string(branch);
  read(doc, "context_window", p.context_window);
  read(doc, "reserve_tokens", p.reserve_tokens);
  read(doc, "keep_recent_tokens", p.keep_recent_tokens);
  read(doc, "min_reclaim_tokens", p.min_reclaim_tokens);
  read(doc, "summary_tokens", p.summary_tokens);
  read(doc, "timeout_ms", p.timeout_ms);
  read(doc, "preview_min_tokens", p.preview_min_tokens);
  read(doc, "preview_bytes", p.preview_bytes);
  read(doc, "transcript_max_tokens", p.transcript_max_tokens);
  element soft;
  if (!doc["soft_threshold"].get(soft)) {
    double d = 0;
    int64_t i = 0;
    if (!soft.get(d))
      p.soft_threshold = d;
    else if (!soft.get(i))
      p.soft_threshold = double(i);
    p.soft_threshold_json = json::canonical(soft);
  }
  if (p.reserve_tokens >= p.context_window)
    throw Error(Code::kInvalidArg, "policy: reserve_tokens (" + std::to_string(p.reserve_tokens) +
                                       ") leaves nothing of context_window (" +
                                       std::to_string(p.context_window) + ")");
  return p;
}

void write_policy(json::JsonWriter &w, const Policy &p) {
  w.begin_object();
  if (p.branch) w.field("branch_id", *p.branch);
  w.field("context_window", p.context_window)
      .field("reserve_tokens", p.reserve_tokens)
      .raw_field("soft_threshold", p.soft_threshold_json)
      .field("keep_recent_tokens", p.keep_recent_tokens)
      .field("min_reclaim_tokens", p.min_reclaim_tokens)
      .field("summary_tokens", p.summary_tokens)
      .field("timeout_ms", p.timeout_ms)
      .field("preview_min_tokens", p.preview_min_tokens)
      .field("preview_bytes", p.preview_bytes)
      .field("transcript_max_tokens", p.transcript_max_tokens)
      .end_object();
}

Target resolve(compile::Sources &src, std::string_view session_id,
               const std::optional<std::string> &branch,
               const std::optional<std::string> &leaf_id) {
  Target t;
  t.session_id = session_id;
  t.session_no = src.log.session_no(session_id);
  if (t.session_no == 0)
    throw Error(Code::kNotFound, "session '" + std::string(session_id) + "' not found");
  log::Tree &tree = src.log.tree();
  if (leaf_id) {
    std::optional<log::Event> e = src.log.find(*leaf_id);
    if (!e) throw Error(Code::kNotFound, "event '" + *leaf_id + "' not found");
    if (e->session_no != t.session_no)
      throw Error(Code::kInvalidArg, "event '" + e->id + "' belongs to session '" + e->session_id +
                                         "', not '" + t.session_id + "'");
    src.log.locate(*e);
    t.branch = tree.branch(e->branch_no);
    t.leaf_seq = e->seq;
    t.leaf_id = e->id;
    t.state = src.state.at(t.session_id, e->branch_no, e->seq);
  } else {
    t.branch = branch ? tree.find_branch(t.session_no, *branch) : tree.main_branch(t.session_no);
    project::State::Current c = src.state.current(t.session_id, t.branch);
    t.leaf_seq = c.seq;
    t.leaf_id = c.event_id;
    t.state = project::from_json(c.state_json, project::state_row_name(t.branch.no));
  }
  t.path = project::path_of(tree, t.session_no, t.branch, t.leaf_seq);
  t.previous = src.compactions.latest(t.path);
  t.from_seq = t.previous ? t.previous->first_kept_seq : 1;
  return t;
}

Plan plan(compile::Sources &src, const std::string &session_id, const Policy &policy) {
  Target t;
  {
    store::Store::ReadTransaction snapshot(src.store);
    t = resolve(src, session_id, policy.branch);
  }
  return plan_target(src, std::move(t), policy, std::nullopt);
}

Plan plan_at(compile::Sources &src, const std::string &session_id, const std::string &leaf_id,
             const std::string &first_kept_event_id, const Policy &policy) {
  Target t;
  {
    store::Store::ReadTransaction snapshot(src.store);
    t = resolve(src, session_id, std::nullopt, leaf_id);
  }
  return plan_target(src, std::move(t), policy, first_kept_event_id);
}

std::string to_json(const Plan &p) {
  const Target &t = p.target;
  json::JsonWriter w;
  w.begin_object()
      .field("session_id", t.session_id)
      .field("branch_id", t.branch.id)
      .field("leaf_event_id", t.leaf_id)
      .field("status", p.empty ? "nothing_to_compact" : "ready");
  if (p.empty) w.field("reason", p.reason);
  w.key("policy");
  write_policy(w, p.policy);
  w.key("cut").begin_object().key("first_kept_event_id");
  if (p.first_kept_event_id.empty())
    w.null();
  else
    w.value(p.first_kept_event_id);
  w.field("first_kept_seq", p.cut_seq).field("kind", p.cut_kind);
  if (p.split_request) {
    w.key("split_turn_request");
    write_sourced(w, p.split_request);
  }
  w.end_object();
  w.key("range");
  write_range(w, p);
  w.key("tokens")
      .begin_object()
      .field("before", p.tokens_before())
      .field("previous_summary", p.previous_summary_tokens)
      .field("range", p.range_tokens)
      .field("kept", p.kept_tokens)
      .field("after_estimate", p.kept_tokens + p.policy.summary_tokens)
      .end_object();
  w.key("previous_compaction");
  if (p.previous_compaction_id.empty()) {
    w.null();
  } else {
    w.begin_object()
        .field("event_id", p.previous_compaction_id)
        .raw_field("summary", p.previous_summary)
        .end_object();
  }
  const project::Goal &goal = t.state.goal;
  w.key("obligations").begin_object().key("current_task");
  write_sourced(w, goal.current_task ? goal.current_task : goal.request);
  w.key("files_read").begin_array();
  for (const FileTouch &f : p.files_read)
    w.begin_object().field("path", f.path).field("event_id", f.event_id).end_object();
  w.end_array().key("files_modified").begin_array();
  for (const FileTouch &f : p.files_modified) {
    w.begin_object().field("path", f.path).field("event_id", f.event_id);
    if (f.change_summary) w.field("change_summary", *f.change_summary);
    w.end_object();
  }
  w.end_array().key("tool_errors").begin_array();
  for (const ToolError &e : p.tool_errors)
    w.begin_object()
        .field("tool_call_id", e.call_id)
        .field("name", e.name)
        .field("error", e.error)
        .field("event_id", e.event_id)
        .end_object();
  w.end_array().key("decisions").begin_array();
  for (const project::Decision &d : p.decisions) {
    w.begin_object().field("decision", d.decision);
    if (d.rationale) w.field("rationale", *d.rationale);
    w.field("event_id", d.event_id).end_object();
  }
  w.end_array().key("open_questions").begin_array();
  for (const project::Question &q : t.state.open_questions)
    w.begin_object()
        .field("id", q.id)
        .field("text", q.text)
        .field("event_id", q.event_id)
        .end_object();
  w.end_array().end_object();
  w.key("memory_candidates").begin_array();
  for (const MemoryCandidate &m : p.memory) {
    w.begin_object().field("kind", m.kind).field("content", m.content);
    if (m.confidence) w.raw_field("confidence", *m.confidence);
    w.key("source_refs").begin_array().value(m.event_id).end_array().end_object();
  }
  w.end_array().key("pending_calls_kept").begin_array();
  for (const std::string &id : p.pending_kept) w.value(id);
  w.end_array().field("transcript", p.transcript);
  w.key("transcript_info")
      .begin_object()
      .field("tokens", p.transcript_tokens)
      .field("budget", transcript_budget(p.policy, p.previous_summary_tokens));
  w.key("omitted");
  if (const auto &o = p.transcript_omitted) {
    w.begin_object()
        .field("entries", o->entries)
        .field("tokens", o->tokens)
        .field("from_seq", o->from_seq)
        .field("to_seq", o->to_seq)
        .end_object();
  } else {
    w.null();
  }
  w.end_object().end_object();
  return w.take();
}

std::string should_compact(compile::Sources &src, const std::string &session_id,
                           const Policy &policy) {
  store::Store::ReadTransaction snapshot(src.store);
  Target t = resolve(src, session_id, policy.branch);
  int64_t summary_tokens = 0;
  if (t.previous) {
    auto q = src.store.statement(kMessageTokens);
    q->bind(1, t.session_no);
    q->bind(2, t.previous->seq);
    if (q->executeStep()) summary_tokens = q->getColumn(0).getInt64() + compile::kFramingTokens;
  }
  int64_t conversation = 0;
  project::BranchPath after_cut = clip(t.path, t.from_seq, t.leaf_seq);
  project::for_each_row(src.store, kMessageSums, after_cut, [&](SQLite::Statement &q, auto &) {
    conversation += q.getColumn(0).getInt64() + q.getColumn(1).getInt64() * compile::kFramingTokens;
  });
  int64_t estimated = summary_tokens + conversation;
  // Anchored on what the provider last reported, after the latest
  // compaction (an earlier report counted what was since summarized).
  std::optional<std::pair<std::string, int64_t>> anchor;
  int64_t anchor_seq = 0;
  int64_t anchor_from = t.previous ? t.previous->seq + 1 : 1;
  simdjson::dom::parser parser;
  project::for_each_row_backward(src.store, kLatestAssistant, clip(t.path, anchor_from, t.leaf_seq),
                                 [&](SQLite::Statement &q, auto &) {
                                   element usage;
                                   std::string payload = q.getColumn(2).getString();
                                   if (json::parse_payload(parser, payload, "")["usage"].get(usage))
                                     return true;
                                   int64_t total = 0;
                                   for (const char *k : {"input_tokens", "cache_read_tokens",
                                                         "cache_write_tokens", "output_tokens"}) {
                                     int64_t n = 0;
                                     read(usage, k, n);
                                     total += n;
                                   }
                                   if (total == 0) return true;
                                   anchor_seq = q.getColumn(0).getInt64();
                                   anchor = std::pair{q.getColumn(1).getString(), total};
                                   return false;
                                 });
  int64_t context = estimated, after_anchor = 0;
  if (anchor) {
    project::for_each_row(src.store, kMessageSums, clip(t.path, anchor_seq + 1, t.leaf_seq),
                          [&](SQLite::Statement &q, auto &) {
                            after_anchor += q.getColumn(0).getInt64() +
                                            q.getColumn(1).getInt64() * compile::kFramingTokens;
                          });
    context = anchor->second + after_anchor;
  }
  int64_t hard = policy.context_window - policy.reserve_tokens;
  int64_t soft = int64_t(double(hard) * policy.soft_threshold);
  const char *level = context >= hard ? "hard" : context >= soft ? "soft" : "ok";
  // What a compaction would free: everything but the kept tail, less the
  // summary that replaces it.
  int64_t kept = std::min(conversation, policy.keep_recent_tokens);
  int64_t replaced = summary_tokens + conversation - kept;
  int64_t net = replaced - policy.summary_tokens;
  bool advise = std::string_view(level) != "ok" && net >= policy.min_reclaim_tokens;
  std::string reason =
      std::string_view(level) == "ok" ? "the context is below the soft limit"
      : net < policy.min_reclaim_tokens
          ? "compacting would free " + std::to_string(std::max<int64_t>(net, 0)) +
                " tokens, below min_reclaim_tokens (" + std::to_string(policy.min_reclaim_tokens) +
                "): not worth the summary and the prompt-cache prefix it invalidates"
          : std::string("the context is over the ") + level + " limit and compacting frees " +
                std::to_string(net) + " tokens";
  json::JsonWriter w;
  w.begin_object()
      .field("session_id", t.session_id)
      .field("branch_id", t.branch.id)
      .field("leaf_event_id", t.leaf_id)
      .field("context_tokens", context)
      .field("estimated_tokens", estimated)
      .key("anchor");
  if (anchor)
    w.begin_object()
        .field("event_id", anchor->first)
        .field("usage_tokens", anchor->second)
        .field("tokens_after", after_anchor)
        .end_object();
  else
    w.null();
  w.field("context_window", policy.context_window)
      .field("reserve_tokens", policy.reserve_tokens)
      .field("soft_limit", soft)
      .field("hard_limit", hard)
      .field("level", level)
      .field("previous_summary_tokens", summary_tokens)
      .field("conversation_tokens", conversation)
      .field("keep_recent_tokens", policy.keep_recent_tokens)
      .field("reclaimable_tokens", replaced)
      .field("summary_tokens", policy.summary_tokens)
      .field("net_benefit_tokens", net)
      // The summarizer reads what it replaces and writes the summary.
      .field("summary_cost_tokens", replaced + policy.summary_tokens)
      // The summary changes the start of the conversation, so a provider's
      // cached prefix past the instructions is written again once.
      .field("cache_invalidated_tokens", summary_tokens + conversation)
      .field("min_reclaim_tokens", policy.min_reclaim_tokens)
      .key("should_compact")
      .boolean(advise)
      .field("reason", reason)
      .end_object();
  return w.take();
}

} // namespace ctxdb::compact
