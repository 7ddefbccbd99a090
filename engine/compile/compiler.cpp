#include "compile/compiler.hpp"

#include "artifact/artifact.hpp"
#include "compile/history.hpp"
#include "compile/segment.hpp"
#include "log/event.hpp"
#include "project/agent_state.hpp"
#include "project/branch_path.hpp"
#include "project/payload_cache.hpp"
#include "project/stats.hpp"
#include "util/sha256.hpp"
#include "json/json_writer.hpp"
#include "json/parse.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <unordered_set>

namespace ctxdb::compile {

namespace {

using project::string_field;
using simdjson::dom::element;

// Where a segment goes in the prompt (DESIGN §5): what changes least first,
// so consecutive compiles share the longest prefix; the recent tail last.
//
// Standing context (the summary) goes with the instructions (the request's,
// then the log's ContextAdded instructions), before the conversation; what changes every turn
// (goal, plan, open questions, files, decisions, facts, memories) after it, as the latest turn's
// context, so that a compile's prefix is the previous compile's whole conversation.
enum Slot {
  kInstructions,
  kTools,
  kSummary,
  kStateRequest,
  kConversation,
  kExplicitRequest,
  kTrailingContext, // context messages after everything else on the branch
  kGoal,
  kPlan,
  kOpenQuestions,
  kFiles,
  kDecisions,
  kFacts,
  kMemories,
};

struct Candidate {
  Segment segment;
  std::vector<RedactionNote> redactions;
  Slot slot = kConversation;
  int64_t order = 0; // within the slot: a message's seq, else the collection order
};

std::string bullet_list(std::string_view title, element items, const char *field) {
  std::string text;
  for (element item : items.get_array()) {
    if (text.empty()) text.append(title).append(":\n");
    text.append("- ").append(string_field(item, field)).append("\n");
  }
  return text;
}

void add_source(std::vector<Source> &sources, const char *type, std::string_view id) {
  if (id.empty()) return;
  for (const Source &s : sources)
    if (s.id == id && std::string_view(s.type) == type) return;
  sources.push_back({type, std::string(id)});
}

void add_event_sources(std::vector<Source> &sources, element items) {
  for (element item : items.get_array())
    add_source(sources, "event", string_field(item, "event_id"));
}

// The image-token rule of the format compiled for (artifact/image_info):
// a bundle for no one provider counts the largest.
int64_t (*image_rule(std::string_view format))(artifact::ImageSize) {
  if (format.starts_with("anthropic.")) return artifact::anthropic_image_tokens;
  if (format.starts_with("openai.")) return artifact::openai_image_tokens;
  if (format.starts_with("gemini.")) return artifact::gemini_image_tokens;
  return artifact::max_image_tokens;
}

class Compilation {
public:
  Compilation(Sources &src, const Request &req)
      : src_(src), req_(req), redactor_(req.redact, req.builtin_redaction),
        available_(calibrated_available()),
        tail_left_(int64_t(std::floor(req.tail_share * available_))) {}

  Compiled run();

private:
  int64_t calibrated_available();
  void resolve_target();
  void collect_fixed();
  void collect_log_instructions();
  void read_newest_turn();
  void check_end(const Turn *newest) const;
  void drop_repeated_goal();
  void take_p0_messages();
  int64_t p0_tokens() const;
  void fit_p0_images();
  void check_p0() const;
  void fit_fixed(Candidate *c);
  void fit_conversation();
  void fit_listed(Slot slot, const char *id, const char *kind, const char *title, element items,
                  const char *reason);
  bool fit_turn(size_t i, int priority, bool prune);
  void fit_memories();
  void exclude_rest();
  Compiled write();

  Candidate text_candidate(Slot slot, std::string id, const char *kind, int priority,
                           const char *role, std::string text, std::string reason,
                           std::vector<Source> sources);
  // The tokens of text_candidate's segment for `text`.
  int64_t text_tokens(std::string text);
  // The segment of a message entering the bundle; its content moves out.
  // How a message enters: as it is, its tool output pruned to a preview,
  // or its images replaced by placeholders.
  enum Variant { kWhole, kPruned, kImageless };
  Candidate message_candidate(Message &m, size_t turn, int priority, Variant v, std::string reason);
  Turn *turn(size_t i);
  void take(Candidate c);
  void leave(const Segment &s, std::string reason);
  void leave_message(const Message &m, size_t turn, int priority, std::string reason);
  void leave_images(const Message &m, int priority, const std::string &why);
  int64_t stable_prefix(const std::vector<Segment *> &ordered);
  std::string record_payload(const std::string &hash, const std::vector<Segment *> &ordered) const;

  Sources &src_;
  const Request &req_;
  policy::Redactor redactor_;
  std::optional<project::Stats::ModelCalibration> calibration_; // when it shrank the budget
  int64_t available_;
  int64_t used_ = 0;
  int64_t tail_left_;

  int64_t session_no_ = 0;
  log::Branch branch_;
  int64_t leaf_seq_ = 0;
  std::string leaf_id_;
  project::BranchPath path_;
  simdjson::dom::parser state_parser_;
  element state_;
  std::optional<project::CompactionRef> compaction_;
  std::string request_event_id_; // the last user prompt, when it is the request

  // Candidates of the fixed kinds, by tier, in the order they are fitted.
  std::vector<Candidate> p0_, p1_;
  // The P0 candidates that are messages of the log: (index in p0_, turn,
  // message), for their images to give way when P0 does not fit.
  struct P0Message {
    size_t candidate, turn, message;
  };
  std::vector<P0Message> p0_messages_;
  std::unique_ptr<History> history_;
  std::vector<Turn> turns_; // newest first, read as needed
  std::vector<std::vector<bool>> taken_;
  std::string goal_event_id_; // the user goal's event, when the goal is a user's words
  std::string goal_rest_;     // the goal's text without the user goal's line
  std::vector<Source> goal_rest_sources_;

  std::vector<Candidate> placed_;
  memory::Retrieval memories_;
  std::vector<Excluded> excluded_;
};

// A context message of the newest turn after which only context follows
// (and that has no images, which the latest turn's text block cannot hold):
// the branch's very end.
bool trailing_context(const Turn &newest, const Message &m) {
  if (m.imageless_content) return false;
  bool after = false;
  for (const Message &other : newest.messages) {
    if (&other == &m)
      after = true;
    else if (after && other.role != std::string_view("context"))
      return false;
  }
  return after && std::any_of(newest.messages.begin(), newest.messages.end(),
                              [](auto &o) { return o.role != std::string_view("context"); });
}

// Fewer than this many responses say too little about a counter's error.
constexpr int64_t kMinCalibrationSamples = 3;

// The available tokens, shrunk when providers have reported more input for
// the request's model than recorded compiles counted (a model whose
// tokenizer is not built in, counted by the estimator). A counter that
// counts more than the provider leaves the budget as it is: the bundle
// stays inside the window either way.
int64_t Compilation::calibrated_available() {
  int64_t available = req_.available();
  if (!req_.model) return available;
  std::optional<project::Stats::ModelCalibration> c =
      project::Stats::calibration_of(src_.store, *req_.model);
  if (!c || c->samples < kMinCalibrationSamples || c->estimated <= 0 || c->reported <= c->estimated)
    return available;
  calibration_ = c;
  return int64_t(std::floor(double(available) * double(c->estimated) / double(c->reported)));
}

void Compilation::resolve_target() {
  log::EventLog &log = src_.log;
  session_no_ = log.session_no(req_.session_id);
  if (session_no_ == 0) throw Error(Code::kNotFound, "session '" + req_.session_id + "' not found");
  std::string state_json;
  if (req_.leaf_event_id) {
    std::optional<log::Event> e = log.find(*req_.leaf_event_id);
    if (!e) throw Error(Code::kNotFound, "event '" + *req_.leaf_event_id + "' not found");
    if (e->session_no != session_no_)
      throw Error(Code::kInvalidArg, "event '" + e->id + "' belongs to session '" + e->session_id +
                                         "', not '" + req_.session_id + "'");
    log.locate(*e);
    branch_ = log.tree().branch(e->branch_no);
    leaf_seq_ = e->seq;
    leaf_id_ = e->id;
    state_json = project::to_json(src_.state.at(req_.session_id, e->branch_no, e->seq));
  } else {
    branch_ = req_.branch ? log.tree().find_branch(session_no_, *req_.branch)
                          : log.tree().main_branch(session_no_);
    project::State::Current c = src_.state.current(req_.session_id, branch_);
    leaf_seq_ = c.seq;
    leaf_id_ = c.event_id;
    state_json = std::move(c.state_json);
  }
  path_ = project::path_of(log.tree(), session_no_, branch_, leaf_seq_);
  state_ = json::parse(state_parser_, state_json, "state");
  compaction_ = src_.compactions.latest(path_);
}

Candidate Compilation::text_candidate(Slot slot, std::string id, const char *kind, int priority,
                                      const char *role, std::string text, std::string reason,
                                      std::vector<Source> sources) {
  std::vector<policy::RedactionHit> hits;
  redactor_.redact(text, hits);
  Candidate c;
  c.slot = slot;
  c.order = int64_t(p0_.size() + p1_.size());
  c.segment.id = std::move(id);
  c.segment.kind = kind;
  c.segment.priority = priority;
  c.segment.role = role;
  c.segment.tokens = src_.counter.count(text) + kFramingTokens;
  c.segment.content = text_content(text);
  c.segment.reason = std::move(reason);
  c.segment.sources = std::move(sources);
  for (const policy::RedactionHit &h : hits)
    c.redactions.push_back({c.segment.id, h.rule, h.count});
  return c;
}

int64_t Compilation::text_tokens(std::string text) {
  std::vector<policy::RedactionHit> hits;
  redactor_.redact(text, hits);
  return src_.counter.count(text) + kFramingTokens;
}

// The tiers' fixed kinds: instructions, tools, goal, open questions and the
// request (P0); the summary, the plan and constraints, the files (P1).
void Compilation::collect_fixed() {
  for (size_t i = 0; i < req_.instructions.size(); ++i) {
    const Instruction &in = req_.instructions[i];
    p0_.push_back(text_candidate(kInstructions, "instructions:" + in.id, "instructions", 0,
                                 in.kind == "system" ? "system" : "developer", in.text,
                                 in.kind + " instructions: always included",
                                 {{"request", "instructions[" + std::to_string(i) + "]"}}));
  }
  collect_log_instructions();
  if (!req_.tools_json.empty()) {
    Candidate c;
    c.slot = kTools;
    c.segment.id = "tools";
    c.segment.kind = "tools";
    c.segment.role = "system";
    c.segment.content = R"([{"type":"tool_specs","tools":)" + req_.tools_json + "}]";
    c.segment.tokens = src_.counter.count(req_.tools_json) + kFramingTokens;
    c.segment.reason = "tool specs: always included";
    c.segment.sources = {{"request", "tools"}};
    p0_.push_back(std::move(c));
  }
  element goal = state_["goal"];
  std::string text;
  std::vector<Source> sources;
  element g;
  if (!goal["current_task"].get(g) && !g.is_null()) {
    text.append("Current task: ").append(string_field(g, "text")).append("\n");
    add_source(sources, "event", string_field(g, "event_id"));
  }
  text += bullet_list("Acceptance criteria", goal["acceptance_criteria"], "text");
  add_event_sources(sources, goal["acceptance_criteria"]);
  goal_rest_ = text;
  goal_rest_sources_ = sources;
  if (!goal["user_goal"].get(g) && !g.is_null()) {
    text.insert(0, "Goal: " + std::string(string_field(g, "text")) + "\n");
    goal_event_id_ = std::string(string_field(g, "event_id"));
    sources.insert(sources.begin(), {"event", goal_event_id_});
  }
  if (!text.empty())
    p0_.push_back(text_candidate(kGoal, "goal", "goal", 0, "context", text,
                                 "the active goal: always included", sources));
  element open = state_["open_questions"];
  if (open.get_array().size() > 0) {
    sources.clear();
    add_event_sources(sources, open);
    p0_.push_back(text_candidate(kOpenQuestions, "open_questions", "open_questions", 0, "context",
                                 bullet_list("Open questions", open, "text"),
                                 "open questions: always included", sources));
  }
  if (req_.request) {
    p0_.push_back(text_candidate(kExplicitRequest, "request", "request", 0, "user", *req_.request,
                                 "the current request, given with the compile",
                                 {{"request", "request"}}));
  } else if (!goal["request"].get(g) && !g.is_null()) {
    request_event_id_ = std::string(string_field(g, "event_id"));
  }

  if (compaction_) {
    std::optional<log::Event> e = src_.log.find(compaction_->event_id);
    simdjson::dom::parser parser;
    element payload = json::parse_payload(parser, e->payload, e->id);
    p1_.push_back(text_candidate(
        kSummary, "summary", "summary", 1, "context",
        "Summary of the conversation before this point:\n\n" + summary_text(payload["summary"]),
        "the latest compaction: it stands for the history before its first kept event",
        {{"compaction", compaction_->event_id}}));
  }
  element plan = state_["plan"];
  text.clear();
  sources.clear();
  for (element step : plan["steps"].get_array()) {
    if (text.empty()) text = "Plan:\n";
    text.append("- [")
        .append(string_field(step, "status"))
        .append("] ")
        .append(string_field(step, "text"))
        .append("\n");
  }
  add_source(sources, "event", string_field(plan, "event_id"));
  element constraints = state_["constraints"];
  for (auto [title, key] : {std::pair{"Hard constraints", "hard"},
                            {"Soft constraints", "soft"},
                            {"Preferences", "preferences"}}) {
    text += bullet_list(title, constraints[key], "text");
    add_event_sources(sources, constraints[key]);
  }
  if (!text.empty())
    p1_.push_back(text_candidate(kPlan, "plan", "plan", 1, "context", text,
                                 "the plan and constraints", sources));
  text.clear();
  sources.clear();
  element files = state_["files"];
  for (auto [title, key] : {std::pair{"Files modified", "modified"}, {"Files read", "read"}}) {
    std::string list;
    for (element f : files[key].get_array()) {
      list.append("- ").append(string_field(f, "path"));
      std::string_view summary = string_field(f, "change_summary");
      if (!summary.empty()) list.append(": ").append(summary);
      list.append("\n");
      add_source(sources, "event", string_field(f, "event_id"));
    }
    if (!list.empty()) text.append(title).append(":\n").append(list);
  }
  if (!text.empty())
    p1_.push_back(text_candidate(kFiles, "files", "files", 1, "context", text,
                                 "the files read and modified on this branch", sources));
}

// Every ContextAdded of kind instructions on the branch path, compacted or
// not: standing instructions, in log order after the request's, each
// distinct text once (its repeats named as sources). Role developer: the
// host's own instructions keep the system role they were given. Read
// through the partial index of schema 19: without statistics SQLite would
// walk the session's messages by primary key instead.
void Compilation::collect_log_instructions() {
  constexpr char kInstructionRows[] =
      "SELECT e.id,e.payload,e.visibility FROM messages m INDEXED BY messages_instructions "
      "JOIN events e ON e.session_no=m.session_no AND e.seq=m.seq "
      "WHERE m.session_no=?1 AND m.seq BETWEEN ?2 AND ?3 AND m.role='instructions' ORDER BY m.seq";
  std::vector<std::pair<std::string, size_t>> seen; // text -> its candidate in p0_
  for (const Instruction &in : req_.instructions) seen.emplace_back(in.text, SIZE_MAX);
  simdjson::dom::parser parser;
  project::for_each_row(src_.store, kInstructionRows, path_, [&](SQLite::Statement &q, auto &) {
    std::string id = q.getColumn(0).getString();
    std::string payload_text = q.getColumn(1).getString(), visibility = q.getColumn(2).getString();
    if (!req_.allow_sensitive && log::is_sensitive(parser, visibility)) {
      excluded_.push_back({"instructions:" + id,
                           "instructions",
                           0,
                           std::nullopt,
                           "sensitive: its visibility keeps it out unless allow_sensitive",
                           {{"event", id}}});
      return;
    }
    element payload = json::parse_payload(parser, payload_text, id);
    std::string text(string_field(payload, "text"));
    auto same = std::find_if(seen.begin(), seen.end(), [&](auto &s) { return s.first == text; });
    if (same != seen.end()) {
      if (same->second != SIZE_MAX) add_source(p0_[same->second].segment.sources, "event", id);
      return;
    }
    std::string source(string_field(payload, "source"));
    seen.emplace_back(text, p0_.size());
    p0_.push_back(text_candidate(
        kInstructions, "instructions:" + id, "instructions", 0, "developer", std::move(text),
        "standing instructions from the log" + (source.empty() ? "" : " (" + source + ")") +
            ": always included",
        {{"event", id}}));
  });
}

Turn *Compilation::turn(size_t i) {
  while (turns_.size() <= i) {
    std::optional<Turn> t = history_->next_turn();
    if (!t) return nullptr;
    for (const CallRef &c : t->dropped)
      excluded_.push_back(
          {"call:" + c.call_id,
           "message",
           3,
           std::nullopt,
           "policy interrupted_calls drop: the call '" + c.call_id + "'" +
               (c.name.empty() ? "" : " (" + c.name + ")") +
               " got no result before the conversation moved on, or was cancelled; it left "
               "with its result",
           {{"event", c.event_id}}});
    taken_.emplace_back(t->messages.size(), false);
    turns_.push_back(std::move(*t));
  }
  return &turns_[i];
}

// Only the newest turn can hold a call still running (History closes every
// older one): one the request does not answer fails the compile, as a
// provider refuses a call without its result.
void Compilation::read_newest_turn() {
  const Turn *t = turn(0);
  if (t && !t->unanswered.empty()) {
    const CallRef &c = t->unanswered.front();
    std::string more = t->unanswered.size() > 1
                           ? " (and " + std::to_string(t->unanswered.size() - 1) + " more)"
                           : "";
    throw Error(Code::kConflict,
                "tool call '" + c.call_id + "'" + (c.name.empty() ? "" : " (" + c.name + ")") +
                    " of event " + c.event_id + more +
                    " has no result yet: append its result (or a ToolCallCancelled), or give it "
                    "in the compile request's tool_results");
  }
  for (size_t i = 0; i < req_.tool_results.size(); ++i)
    if (!t || std::find(t->supplied.begin(), t->supplied.end(), i) == t->supplied.end())
      throw Error(Code::kInvalidArg, "tool_results[" + std::to_string(i) + "]: tool call '" +
                                         req_.tool_results[i].tool_call_id +
                                         "' is not a call waiting for its result in the "
                                         "branch's last turn");
  check_end(t);
}

// The model must have something to answer: a branch that ends on the
// assistant's finished answer is only compiled with a new request, or as a
// continuation the host asks for.
void Compilation::check_end(const Turn *newest) const {
  if (!newest || req_.request || !req_.tool_results.empty() || req_.continuation) return;
  // Context after the answer is not a request: the model would have nothing to answer.
  auto last = std::find_if(newest->messages.rbegin(), newest->messages.rend(),
                           [](auto &m) { return m.role != std::string_view("context"); });
  if (last == newest->messages.rend() || last->role != std::string_view("assistant")) return;
  throw Error(Code::kConflict,
              "the branch ends on the assistant's finished answer (event " + last->event_id +
                  ") and the compile has no new request: give \"request\" (the next user "
                  "turn), or \"continuation\": true for the model to continue that answer");
}

Candidate Compilation::message_candidate(Message &m, size_t turn, int priority, Variant v,
                                         std::string reason) {
  bool pruned = v == kPruned;
  Candidate c;
  bool is_request = m.event_id == request_event_id_ && m.role == std::string_view("user");
  bool context = m.role == std::string_view("context");
  c.segment.id = m.segment_id;
  c.segment.kind = is_request ? "request" : context ? "context" : "message";
  c.segment.priority = priority;
  // Context sits in the user-side turn at its place, marked (History); at
  // the branch's very end it joins the latest turn's context.
  bool trailing = context && turn == 0 && trailing_context(turns_[0], m);
  c.segment.role = context && !trailing ? "user" : m.role;
  if (trailing) c.slot = kTrailingContext;
  c.segment.content = std::move(pruned            ? *m.pruned_content
                                : v == kImageless ? *m.imageless_content
                                                  : m.content);
  c.segment.tokens = pruned ? m.pruned_tokens : v == kImageless ? m.imageless_tokens : m.tokens;
  c.segment.reason = m.note.empty() ? std::move(reason) : m.note + "; " + reason;
  c.segment.sources = m.sources;
  c.segment.turn = int64_t(turn);
  c.order = (m.seq << 10) + m.sub; // a result added behind a message sorts after it
  c.redactions = std::move(pruned ? m.pruned_redactions : m.redactions);
  return c;
}

void Compilation::take_p0_messages() {
  for (size_t i = 0; i < turns_.size(); ++i) {
    Turn &t = turns_[i];
    if (t.has_head && t.messages[0].event_id == request_event_id_) {
      taken_[i][0] = true;
      p0_messages_.push_back({p0_.size(), i, 0});
      p0_.push_back(message_candidate(t.messages[0], i, 0, kWhole,
                                      "the current request: the last user prompt"));
    }
    for (const Unit &u : t.units) {
      if (!u.pending) continue;
      for (size_t k = u.first; k <= u.last; ++k) {
        taken_[i][k] = true;
        p0_messages_.push_back({p0_.size(), i, k});
        p0_.push_back(message_candidate(t.messages[k], i, 0, kWhole,
                                        "a tool call of the last turn and its results"));
      }
    }
  }
  // The request is the last user prompt, but it is before the cut.
  if (!request_event_id_.empty() && std::none_of(p0_.begin(), p0_.end(), [&](const Candidate &c) {
        return c.segment.id == "msg:" + request_event_id_;
      })) {
    element g = state_["goal"]["request"];
    p0_.push_back(text_candidate(kStateRequest, "request", "request", 0, "user",
                                 std::string(string_field(g, "text")),
                                 "the current request: the last user prompt (before the "
                                 "compaction's cut, so not in the conversation below)",
                                 {{"event", request_event_id_}}));
  }
}

// The user's goal is their own words: when the message that said it is in
// the bundle (the conversation, or the request before the cut), the goal
// segment keeps only what the user did not say there (the current task,
// acceptance criteria), or leaves.
void Compilation::drop_repeated_goal() {
  if (goal_event_id_.empty()) return;
  auto goal = std::find_if(placed_.begin(), placed_.end(),
                           [](const Candidate &c) { return c.segment.id == "goal"; });
  auto said = std::find_if(placed_.begin(), placed_.end(), [&](const Candidate &c) {
    return c.slot != kGoal && std::any_of(c.segment.sources.begin(), c.segment.sources.end(),
                                          [&](const Source &s) { return s.id == goal_event_id_; });
  });
  if (goal == placed_.end() || said == placed_.end()) return;
  used_ -= goal->segment.tokens;
  if (goal_rest_.empty()) {
    excluded_.push_back(
        {"goal", "goal", 0, goal->segment.tokens,
         "the user's goal is in the conversation as " + said->segment.id + " (not repeated)",
         goal->segment.sources});
    placed_.erase(goal);
    return;
  }
  Candidate rest = text_candidate(kGoal, "goal", "goal", 0, "context", goal_rest_,
                                  "the active goal (the user's words are in the conversation as " +
                                      said->segment.id + ")",
                                  goal_rest_sources_);
  rest.order = goal->order;
  used_ += rest.segment.tokens;
  *goal = std::move(rest);
}

int64_t Compilation::p0_tokens() const {
  int64_t need = 0;
  for (const Candidate &c : p0_) need += c.segment.tokens;
  return need;
}

// What is never dropped may still lose its images: when it does not fit,
// each never-dropped message with images (the request first, then the last
// turn's calls and results) enters with placeholders naming their artifacts
// instead, until the rest fits.
void Compilation::fit_p0_images() {
  for (auto p = p0_messages_.begin(); p != p0_messages_.end() && p0_tokens() > available_; ++p) {
    Message &m = turns_[p->turn].messages[p->message];
    if (!m.imageless_content) continue;
    Candidate &c = p0_[p->candidate];
    Candidate bare = message_candidate(
        m, p->turn, 0, kImageless,
        c.segment.reason + "; its images left out to fit, placeholders name their artifacts");
    bare.slot = c.slot;
    bare.redactions = std::move(c.redactions); // the message's, moved out with its content
    c = std::move(bare);
    leave_images(m, 0,
                 "budget: the never-dropped content did not fit with the image; a placeholder in " +
                     m.segment_id + " names its artifact");
  }
}

void Compilation::check_p0() const {
  int64_t need = p0_tokens();
  if (need > available_)
    throw Error(Code::kBudget,
                "the content that is never dropped (instructions, tools, the request, the goal, "
                "open questions and pending tool calls) needs " +
                    std::to_string(need) + " tokens, but only " + std::to_string(available_) +
                    " are available (max_tokens " + std::to_string(req_.max_tokens) +
                    " - reserved_output_tokens " + std::to_string(req_.reserved_output_tokens) +
                    ")");
}

void Compilation::take(Candidate c) {
  used_ += c.segment.tokens;
  placed_.push_back(std::move(c));
}

void Compilation::leave(const Segment &s, std::string reason) {
  excluded_.push_back({s.id, s.kind, s.priority, s.tokens, std::move(reason), s.sources});
}

void Compilation::leave_message(const Message &m, size_t, int priority, std::string reason) {
  bool is_request = m.event_id == request_event_id_ && m.role == std::string_view("user");
  const char *kind = is_request                              ? "request"
                     : m.role == std::string_view("context") ? "context"
                                                             : "message";
  excluded_.push_back({m.segment_id, kind, priority, m.tokens, std::move(reason), m.sources});
}

void Compilation::leave_images(const Message &m, int priority, const std::string &why) {
  for (const auto &[artifact, image_tokens] : m.images)
    excluded_.push_back({"image:" + artifact,
                         "image",
                         priority,
                         image_tokens,
                         why,
                         {{"event", m.event_id}, {"artifact", artifact}}});
}

void Compilation::fit_fixed(Candidate *c) {
  if (used_ + c->segment.tokens <= available_)
    take(std::move(*c));
  else
    leave(c->segment, "budget: needs " + std::to_string(c->segment.tokens) + " tokens, " +
                          std::to_string(available_ - used_) + " left");
}

// One turn, whole if it fits the budget and the tail's share, else split:
// its opening request and the newest units that fit. False when the turn
// did not enter whole: older turns then stay out, so the conversation the
// model sees has no holes.
bool Compilation::fit_turn(size_t i, int priority, bool prune) {
  Turn &t = turns_[i];
  std::vector<bool> &taken = taken_[i];
  bool no_images = false; // set when the turn does not fit with its images
  auto variant = [&](const Message &m) {
    if (prune && m.pruned_content) return kPruned;
    return no_images && m.imageless_content ? kImageless : kWhole;
  };
  auto cost = [&](size_t k) {
    const Message &m = t.messages[k];
    Variant v = variant(m);
    return taken[k]          ? 0
           : v == kPruned    ? m.pruned_tokens
           : v == kImageless ? m.imageless_tokens
                             : m.tokens;
  };
  auto take_message = [&](size_t k, const std::string &reason) {
    if (taken[k]) return;
    Message &m = t.messages[k];
    Variant v = variant(m);
    int64_t tokens = cost(k);
    std::string why = reason;
    if (v == kPruned)
      why += "; its tool output pruned to a preview (" + std::to_string(m.tokens) + " -> " +
             std::to_string(m.pruned_tokens) + " tokens)";
    if (v == kImageless || (v == kPruned && !m.images.empty())) {
      if (v == kImageless) why += "; its images left out to fit, placeholders name their artifacts";
      leave_images(m, priority,
                   std::string(v == kPruned ? "budget: its tool output was pruned to "
                                              "a preview; a placeholder in "
                                            : "budget: the image did not fit; a "
                                              "placeholder in ") +
                       m.segment_id + " names its artifact");
    }
    take(message_candidate(m, i, priority, v, why));
    tail_left_ -= tokens;
    taken[k] = true;
  };
  const char *what = priority == 1 ? "a recent turn" : "an older turn";
  int64_t limit = std::min(available_ - used_, tail_left_);
  auto turn_cost = [&] {
    int64_t n = t.has_head ? cost(0) : 0;
    for (const Unit &u : t.units)
      for (size_t k = u.first; k <= u.last; ++k) n += cost(k);
    return n;
  };
  int64_t total = turn_cost();
  bool images = std::any_of(t.messages.begin(), t.messages.end(),
                            [](const Message &m) { return m.imageless_content.has_value(); });
  if (total > limit && images) { // images go before the turn is split
    no_images = true;
    total = turn_cost();
  }
  int64_t head = t.has_head ? cost(0) : 0;
  if (total <= limit) {
    const std::string whole = std::string(what) + ", whole";
    for (size_t k = 0; k < t.messages.size(); ++k)
      if (!t.units.empty() || k == 0) take_message(k, whole);
    return true;
  }
  if (head > limit) return false;
  if (t.has_head) take_message(0, std::string("the request opening ") + what + " split to fit");
  const std::string newest_part =
      std::string(what) + ", split at a closed tool pair: its newest part";
  int64_t left = limit - head;
  for (size_t u = t.units.size(); u-- > 0;) {
    const Unit &unit = t.units[u];
    int64_t need = 0;
    for (size_t k = unit.first; k <= unit.last; ++k) need += cost(k);
    if (need > left) break;
    for (size_t k = unit.first; k <= unit.last; ++k) take_message(k, newest_part);
    left -= need;
  }
  return false;
}

// Items of a list (decisions, facts), newest first while they fit, shown
// oldest first; the rest is left out as one entry.
void Compilation::fit_listed(Slot slot, const char *id, const char *kind, const char *title,
                             element items, const char *reason) {
  simdjson::dom::array list = items.get_array();
  size_t n = list.size();
  if (n == 0) return;
  std::vector<element> all(list.begin(), list.end());
  std::string header = std::string(title) + ":\n";
  int64_t left = available_ - used_ - kFramingTokens - src_.counter.count(header);
  size_t kept = 0;
  int64_t left_out_tokens = 0;
  std::vector<std::string> lines(n);
  for (size_t k = n; k-- > 0;) {
    element item = all[k];
    std::string_view text = string_field(item, "decision");
    if (text.empty()) text = string_field(item, "content");
    lines[k] = "- " + std::string(text) + "\n";
    int64_t t = src_.counter.count(lines[k]);
    if (kept == n - 1 - k && t <= left) {
      left -= t;
      ++kept;
    } else {
      left_out_tokens += t;
    }
  }
  std::vector<Source> sources, left_out;
  std::string text = header;
  for (size_t k = 0; k < n; ++k) {
    (k >= n - kept ? sources : left_out)
        .push_back({"event", std::string(string_field(all[k], "event_id"))});
    if (k >= n - kept) text += lines[k];
  }
  if (kept > 0) {
    Candidate c = text_candidate(slot, id, kind, 2, "context", text, reason, sources);
    if (used_ + c.segment.tokens <= available_) {
      take(std::move(c));
    } else {
      left_out_tokens += c.segment.tokens;
      left_out.insert(left_out.end(), sources.begin(), sources.end());
      kept = 0;
    }
  }
  if (kept < n)
    excluded_.push_back({std::string(id) + ":older", kind, 2, left_out_tokens,
                         "budget: the " + std::to_string(n - kept) + " oldest left out", left_out});
}

// Governed memories (DESIGN §7), P2: retrieved for the request's scopes
// and agent, ranked by memory::retrieve, fitted to policy.shares.memories
// of the budget and to what is left. Each names its memory and sources.
void Compilation::fit_memories() {
  if (!req_.memory) return;
  const MemoryRequest &m = *req_.memory;
  memory::Query q;
  if (m.query) {
    q.text = *m.query;
  } else {
    element g;
    if (req_.request) q.text = *req_.request;
    if (!state_["goal"]["request"].get(g) && !g.is_null() && !req_.request)
      q.text = std::string(string_field(g, "text"));
    if (!state_["goal"]["user_goal"].get(g) && !g.is_null())
      q.text.append(" ").append(string_field(g, "text"));
  }
  for (const auto &[scope, id] : m.scopes) q.scopes.push_back({scope, id});
  q.agent = m.agent;
  q.now = m.now;
  q.limit = m.limit;
  q.allow_sensitive = req_.allow_sensitive;
  int64_t share = int64_t(std::floor(req_.memories_share * double(available_)));
  int64_t left = available_ - used_;
  // Retrieval fits the memories as the segments they become (header and
  // framing included) to the share, or to what is left when that is less.
  auto text_of = [](const memory::Retrieved &r) {
    return "Memory (" + r.kind + ", " + r.scope + (r.scope_id.empty() ? "" : " " + r.scope_id) +
           "): " + r.content;
  };
  q.cost = [&](const memory::Retrieved &r) { return text_tokens(text_of(r)); };
  q.budget = std::max<int64_t>(0, std::min(share, left));
  memories_ = memory::retrieve(src_.store, q, src_.counter);
  for (size_t i = 0; i < memories_.included.size(); ++i) {
    const memory::Retrieved &r = memories_.included[i];
    std::vector<Source> sources{{"memory", r.memory_id}};
    for (const std::string &ref : r.source_refs)
      add_source(sources, artifact::is_content_id(ref) ? "artifact" : "event", ref);
    char score[32];
    std::snprintf(score, sizeof score, "%.3f", r.score);
    Candidate c =
        text_candidate(kMemories, "memory:" + r.memory_id, "memory", 2, "context", text_of(r),
                       "a memory retrieved for this request (score " + std::string(score) + ")",
                       std::move(sources));
    c.order = int64_t(i);
    take(std::move(c));
  }
  std::string why = share <= left
                        ? "budget: past the memories' share (" + std::to_string(share) + " tokens)"
                        : "budget: the memory did not fit what was left";
  for (const memory::Excluded &x : memories_.excluded)
    excluded_.push_back(
        {"memory:" + x.memory_id, "memory", 2, x.tokens, why, {{"memory", x.memory_id}}});
}

void Compilation::fit_conversation() {
  size_t i = 0;
  bool closed = false;
  for (; !closed && i < size_t(std::max<int64_t>(req_.keep_recent_turns, 0)); ++i) {
    if (!turn(i)) break;
    closed = !fit_turn(i, 1, false);
  }
  element decisions = state_["decisions"], facts = state_["facts"];
  fit_listed(kDecisions, "decisions", "decisions", "Decisions", decisions,
             "decisions recorded on this branch, newest first while they fit");
  fit_listed(kFacts, "facts", "facts", "Facts", facts,
             "facts established on this branch, newest first while they fit");
  fit_memories();
  for (; !closed; ++i) {
    if (!turn(i)) break;
    closed = !fit_turn(i, 3, true);
  }
}

void Compilation::exclude_rest() {
  for (size_t i = 0; i < turns_.size(); ++i) {
    const std::vector<bool> &taken = taken_[i];
    bool split = std::find(taken.begin(), taken.end(), true) != taken.end();
    for (size_t k = 0; k < turns_[i].messages.size(); ++k) {
      if (taken[k]) continue;
      leave_message(turns_[i].messages[k], i, i < size_t(req_.keep_recent_turns) ? 1 : 3,
                    split ? "budget: its turn entered split, without this older part"
                          : "budget: its turn did not fit");
    }
  }
  for (const Message &m : history_->orphans())
    leave_message(m, 0, 1,
                  "its tool call is before the compaction's cut, so it would be an orphan");
  if (!turns_.empty() && history_->has_more()) {
    const Message &oldest = turns_.back().messages.front();
    excluded_.push_back({"history:before:" + oldest.event_id,
                         "message",
                         3,
                         std::nullopt,
                         "older messages, not read: the budget was full before them",
                         {{"event", oldest.event_id}}});
  }
}

int64_t Compilation::stable_prefix(const std::vector<Segment *> &ordered) {
  std::optional<std::string> prev = src_.builds.latest_payload(path_);
  if (!prev) return 0;
  simdjson::dom::parser parser;
  element doc = json::parse_payload(parser, *prev, "");
  simdjson::dom::array segs;
  if (doc["segments"].get(segs)) return 0;
  int64_t stable = 0;
  size_t k = 0;
  for (element s : segs) {
    if (k == ordered.size()) break;
    if (string_field(s, "id") != ordered[k]->id || string_field(s, "hash") != ordered[k]->hash)
      break;
    stable += ordered[k++]->tokens;
  }
  return stable;
}

Compiled Compilation::write() {
  // Sorted by address: a candidate is too large to move around cheaply.
  std::vector<Candidate *> sorted;
  sorted.reserve(placed_.size());
  for (Candidate &c : placed_) sorted.push_back(&c);
  std::stable_sort(sorted.begin(), sorted.end(), [](const Candidate *a, const Candidate *b) {
    return a->slot != b->slot ? a->slot < b->slot : a->order < b->order;
  });
  std::vector<Segment *> ordered;
  ordered.reserve(sorted.size());
  // The bundle hash covers "id\nhash\n" per segment, gathered and hashed
  // in one call: a digest update per piece cost more than the hashing.
  std::string hashed;
  hashed.reserve(sorted.size() * 128);
  for (Candidate *c : sorted) {
    seal(c->segment);
    ordered.push_back(&c->segment);
    hashed.append(c->segment.id).append(1, '\n').append(c->segment.hash).append(1, '\n');
  }
  std::string hash = util::to_hex("sha256:", util::sha256(hashed));
  json::JsonWriter w;
  size_t content_bytes = 0;
  for (const Segment *seg : ordered) content_bytes += seg->content.size() + 256;
  w.reserve(content_bytes + 256 * excluded_.size() + 1024);
  w.begin_object()
      .field("format", "canonical")
      .field("session_id", req_.session_id)
      .field("branch_id", branch_.id)
      .field("leaf_event_id", leaf_id_)
      .field("token_counter", src_.counter.name())
      .key("budget")
      .begin_object()
      .field("max_tokens", req_.max_tokens)
      .field("reserved_output_tokens", req_.reserved_output_tokens)
      .field("available", available_);
  if (calibration_) {
    w.key("calibration")
        .begin_object()
        .field("model", *req_.model)
        .field("samples", calibration_->samples)
        .key("factor");
    project::Stats::write_ratio(w, calibration_->reported, calibration_->estimated);
    w.end_object();
  }
  w.field("used", used_).field("free", available_ - used_).end_object();
  std::vector<std::pair<std::string_view, int64_t>> by_kind;
  for (const Segment *s : ordered) {
    auto it =
        std::find_if(by_kind.begin(), by_kind.end(), [&](auto &k) { return k.first == s->kind; });
    if (it == by_kind.end())
      by_kind.emplace_back(s->kind, s->tokens);
    else
      it->second += s->tokens;
  }
  w.key("tokens_by_kind").begin_object();
  for (auto &[kind, tokens] : by_kind) w.field(kind, tokens);
  w.end_object().field("stable_prefix_tokens", stable_prefix(ordered));
  w.key("segments").begin_array();
  for (const Segment *s : ordered) write_segment(w, *s);
  w.end_array().key("excluded").begin_array();
  for (const Excluded &x : excluded_) write_excluded(w, x);
  w.end_array().key("redactions").begin_array();
  for (const Candidate *c : sorted)
    for (const RedactionNote &n : c->redactions)
      w.begin_object()
          .field("segment_id", n.segment_id)
          .field("rule", n.rule)
          .field("count", n.count)
          .end_object();
  w.end_array().field("hash", hash).end_object();

  std::string record = req_.record ? record_payload(hash, ordered) : std::string();
  return {w.take(),          branch_.id,           leaf_id_,
          std::move(record), std::move(memories_), req_.memory ? req_.memory->now : 0};
}

// The ContextBuilt payload, only written when the compile is recorded.
std::string Compilation::record_payload(const std::string &hash,
                                        const std::vector<Segment *> &ordered) const {
  json::JsonWriter record;
  record.begin_object()
      .field("bundle_hash", hash)
      .field("used_tokens", used_)
      .field("max_tokens", req_.max_tokens)
      .key("segments")
      .begin_array();
  for (const Segment *s : ordered)
    record.begin_object()
        .field("id", s->id)
        .field("hash", s->hash)
        .field("tokens", s->tokens)
        .end_object();
  record.end_array().field("excluded", int64_t(excluded_.size())).end_object();
  return record.take();
}

Compiled Compilation::run() {
  resolve_target();
  collect_fixed();
  HistoryOptions options;
  options.from_seq = compaction_ ? compaction_->first_kept_seq : 1;
  options.allow_sensitive = req_.allow_sensitive;
  options.prune_min_tokens = req_.prune_min_tokens;
  options.prune_preview_bytes = req_.prune_preview_bytes;
  options.drop_interrupted = req_.drop_interrupted;
  options.supplied = &req_.tool_results;
  options.artifacts = src_.artifacts;
  options.image_tokens = image_rule(req_.format);
  history_ = std::make_unique<History>(src_.store, src_.counter, redactor_, path_, options);
  read_newest_turn();
  take_p0_messages();
  fit_p0_images();
  check_p0();
  for (Candidate &c : p0_) take(std::move(c));
  for (Candidate &c : p1_) fit_fixed(&c);
  fit_conversation();
  exclude_rest();
  drop_repeated_goal();
  return write();
}

} // namespace

namespace {

// A field of a summary item: a string as is, anything else as JSON.
std::string item_text(element item) {
  std::string_view s;
  if (!item.get(s)) return std::string(s);
  return json::canonical(item);
}

// One item of a known list: its main text and what qualifies it.
std::string summary_item(std::string_view section, element item) {
  if (!item.is_object()) return item_text(item);
  auto str = [&](const char *k) { return string_field(item, k); };
  std::string text;
  if (section == "decisions") {
    text = str("decision");
    if (!str("rationale").empty()) text.append(" (because: ").append(str("rationale")).append(")");
  } else if (section == "facts") {
    text = str("content");
    element c;
    if (!item["confidence"].get(c))
      text.append(" (confidence ").append(json::canonical(c)).append(")");
  } else if (section == "tool_results") {
    text = str("name").empty() ? std::string(str("summary"))
                               : std::string(str("name")) + ": " + std::string(str("summary"));
    if (!str("artifact_id").empty())
      text.append(" [artifact ").append(str("artifact_id")).append("]");
  } else if (section == "errors") {
    text = str("name").empty() ? std::string(str("error"))
                               : std::string(str("name")) + ": " + std::string(str("error"));
    bool resolved = false;
    if (!item["resolved"].get(resolved)) text.append(resolved ? " (resolved)" : " (unresolved)");
  } else {
    return json::canonical(item);
  }
  return text;
}

void bullets(std::string &text, std::string_view title, simdjson::simdjson_result<element> list,
             std::string_view section) {
  simdjson::dom::array items;
  if (list.get(items) || items.size() == 0) return;
  text.append(title).append(":\n");
  for (element item : items) text.append("- ").append(summary_item(section, item)).append("\n");
}

void generic_field(std::string &text, std::string_view key, element value) {
  text.append(key).append(":");
  if (value.is_array()) {
    text.append("\n");
    for (element item : value.get_array()) text.append("- ").append(item_text(item)).append("\n");
  } else {
    text.append(" ").append(item_text(value)).append("\n");
  }
}

// The sections of a structured summary that render with titles; a field
// of another shape, or another field, renders generically.
bool structured_field(std::string &text, std::string_view key, element value) {
  simdjson::dom::object o;
  bool is_object = !value.get(o);
  if (key == "goal" && is_object) {
    std::string_view s;
    if (!value["user_goal"].get(s) && !s.empty()) text.append("Goal: ").append(s).append("\n");
    if (!value["current_task"].get(s) && !s.empty())
      text.append("Current task: ").append(s).append("\n");
    bullets(text, "Acceptance criteria", value["acceptance_criteria"], "");
  } else if (key == "constraints" && is_object) {
    bullets(text, "Hard constraints", value["hard"], "");
    bullets(text, "Soft constraints", value["soft"], "");
    bullets(text, "Preferences", value["preferences"], "");
  } else if (key == "progress" && is_object) {
    bullets(text, "Done", value["done"], "");
    bullets(text, "In progress", value["in_progress"], "");
    bullets(text, "Blocked", value["blocked"], "");
  } else if (key == "split_turn" && is_object) {
    text.append("The request being worked on when the conversation was cut: ")
        .append(string_field(value, "request"))
        .append("\n");
  } else if (key == "files" && is_object) {
    for (auto [title, k] : {std::pair{"Files modified", "modified"}, {"Files read", "read"}}) {
      simdjson::dom::array list;
      if (value[k].get(list) || list.size() == 0) continue;
      text.append(title).append(":\n");
      for (element f : list) {
        text.append("- ").append(f.is_object() ? string_field(f, "path") : item_text(f));
        if (f.is_object() && !string_field(f, "change_summary").empty())
          text.append(": ").append(string_field(f, "change_summary"));
        text.append("\n");
      }
    }
  } else if (key == "provenance" && is_object) {
    element range;
    if (!value["range"].get(range) && range.is_object()) {
      int64_t from = 0, to = 0, events = 0;
      if (range["from_seq"].get(from)) from = 0;
      if (range["to_seq"].get(to)) to = 0;
      if (range["events"].get(events)) events = 0;
      text.append("(This summarizes events #")
          .append(std::to_string(from))
          .append(" to #")
          .append(std::to_string(to))
          .append(", ")
          .append(std::to_string(events))
          .append(" events.)\n");
    }
  } else {
    static const std::pair<const char *, const char *> kLists[] = {
        {"decisions", "Decisions"},
        {"facts", "Facts"},
        {"tool_results", "Important tool results"},
        {"errors", "Errors and retries"},
        {"open_questions", "Open questions"},
        {"next_steps", "Next steps"},
        {"risks", "Risks"}};
    for (auto [k, title] : kLists)
      if (key == k && value.is_array()) {
        bullets(text, title, simdjson::simdjson_result<element>(element(value)), key);
        return true;
      }
    return false;
  }
  return true;
}

} // namespace

std::string summary_text(element summary) {
  std::string_view plain;
  if (!summary.get(plain)) return std::string(plain);
  std::string text;
  simdjson::dom::object o;
  if (summary.get(o)) return json::canonical(summary);
  for (auto [key, value] : o)
    if (!structured_field(text, key, value)) generic_field(text, key, value);
  return text;
}

Compiled compile(Sources &sources, const Request &request) {
  store::Store::ReadTransaction snapshot(sources.store);
  return Compilation(sources, request).run();
}

} // namespace ctxdb::compile
