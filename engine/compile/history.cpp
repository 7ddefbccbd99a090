#include "compile/history.hpp"

#include "artifact/preview.hpp"
#include "log/event.hpp"
#include "project/messages.hpp"
#include "project/payload_cache.hpp"
#include "json/parse.hpp"

#include <algorithm>
#include <climits>
#include <unordered_map>
#include <unordered_set>

namespace ctxdb::compile {

namespace {

// Newest first: a compile reads the recent end of a long path and stops,
// so the cursors step only as far as the compile reads.
//
// A session's events are usually stored together, in append order: then
// a message's event is read by stepping back through the events table
// (kEventsByPos), beside the messages of the same range, instead of two
// b-tree seeks per message (kJoined). When other sessions' events are
// interleaved with the range, the join is used, so the step never walks
// more than twice the range.
constexpr char kMessages[] =
    "SELECT seq,role,tokens,token_counter FROM messages "
    "WHERE session_no=?1 AND seq BETWEEN ?2 AND ?3 AND role NOT IN ('summary','instructions') "
    "ORDER BY seq DESC";
constexpr char kPosRange[] =
    "SELECT (SELECT pos FROM events WHERE session_no=?1 AND seq BETWEEN ?2 AND ?3 "
    "ORDER BY seq LIMIT 1),"
    "(SELECT pos FROM events WHERE session_no=?1 AND seq BETWEEN ?2 AND ?3 "
    "ORDER BY seq DESC LIMIT 1)";
// "+session_no": a filter, so the scan follows pos, not the session index.
constexpr char kEventsByPos[] = "SELECT seq,id,type,payload,visibility FROM events "
                                "WHERE pos BETWEEN ?1 AND ?2 AND +session_no=?3 ORDER BY pos DESC";
constexpr char kJoined[] =
    "SELECT m.seq,m.role,m.tokens,m.token_counter,e.id,e.type,e.payload,e.visibility "
    "FROM messages m JOIN events e ON e.session_no=m.session_no AND e.seq=m.seq "
    "WHERE m.session_no=?1 AND m.seq BETWEEN ?2 AND ?3 AND m.role NOT IN "
    "('summary','instructions') "
    "ORDER BY m.seq DESC";

// A text column of the current row, in place ("" for NULL).
std::string_view text_column(SQLite::Statement &q, int i) {
  SQLite::Column c = q.getColumn(i);
  const char *text = c.getText();
  return {text, size_t(c.getBytes())};
}

constexpr std::string_view kWithheld = "[withheld: sensitive]";
constexpr std::string_view kContextClose = "\n</context>";

// The opening tag of a context message, its source as an attribute (the
// characters that would end it escaped).
std::string context_tag(std::string_view source) {
  if (source.empty()) return "<context>\n";
  std::string tag = "<context source=\"";
  for (char c : source) {
    if (c == '"')
      tag += "&quot;";
    else if (c == '&')
      tag += "&amp;";
    else if (c == '<')
      tag += "&lt;";
    else if (c == '>')
      tag += "&gt;";
    else
      tag += c;
  }
  return tag + "\">\n";
}

std::vector<RedactionNote> notes(const std::string &segment_id,
                                 const std::vector<policy::RedactionHit> &hits) {
  std::vector<RedactionNote> out;
  for (const policy::RedactionHit &h : hits) {
    auto same = std::find_if(out.begin(), out.end(), [&](auto &n) { return n.rule == h.rule; });
    if (same != out.end())
      same->count += h.count;
    else
      out.push_back({segment_id, h.rule, h.count});
  }
  return out;
}

// What Messages::count_tokens counts, from rendered blocks: texts, errors,
// and each call's name and args.
int64_t count_blocks(const token::Counter &counter, simdjson::dom::parser &parser,
                     std::string_view content) {
  int64_t n = 0;
  for (simdjson::dom::element b : json::parse(parser, content, "content").get_array()) {
    std::string_view type = project::string_field(b, "type");
    n += counter.count(project::string_field(b, "text")) +
         counter.count(project::string_field(b, "error"));
    if (type == "tool_result") continue;
    n += counter.count(project::string_field(b, "name"));
    simdjson::dom::element args;
    if (b["args"].get(args)) continue;
    n += counter.count(args.is_string() ? std::string(args.get_string().value())
                                        : json::canonical(args));
  }
  return n;
}

std::string withheld_content(std::string_view role, simdjson::dom::element payload) {
  json::JsonWriter w;
  w.begin_array();
  if (role == "tool") {
    w.begin_object()
        .field("type", "tool_result")
        .field("tool_call_id", project::string_field(payload, "tool_call_id"))
        .field("text", kWithheld)
        .end_object();
  } else if (role == "assistant") {
    w.begin_object().field("type", "text").field("text", kWithheld).end_object();
    for (simdjson::dom::element b : payload["content"].get_array()) {
      if (project::string_field(b, "type") != "tool_call") continue;
      w.begin_object()
          .field("type", "tool_call")
          .field("id", project::string_field(b, "id"))
          .field("name", project::string_field(b, "name"))
          .key("args")
          .begin_object()
          .end_object()
          .end_object();
    }
  } else {
    w.begin_object().field("type", "text").field("text", kWithheld).end_object();
  }
  w.end_array();
  return w.take();
}

} // namespace

History::History(store::Store &store, const token::Counter &counter,
                 const policy::Redactor &redactor, project::BranchPath path,
                 const HistoryOptions &options)
    : store_(store), counter_(counter), redactor_(redactor), path_(std::move(path)),
      options_(options), segment_(path_.segments.size()) {}

bool History::has_more() { return on_row(); }

// True when the cursor is on a row not yet returned: steps it, and moves
// it to the next older segment of the path when one is exhausted.
bool History::on_row() {
  while (!unread_) {
    if (cursor_ && (*cursor_)->executeStep()) {
      // A message whose event is not there is skipped, as the join would.
      unread_ = !events_ || step_events_to((*cursor_)->getColumn(0).getInt64());
      continue;
    }
    // The statements are cached ones: release them before taking them again.
    cursor_.reset();
    events_.reset();
    if (!open_older_segment()) return false;
  }
  return true;
}

// Steps the events cursor back to seq; false when the session has no
// event there.
bool History::step_events_to(int64_t seq) {
  while (event_seq_ > seq)
    event_seq_ = (*events_)->executeStep() ? (*events_)->getColumn(0).getInt64() : INT64_MIN;
  return event_seq_ == seq;
}

// Opens the cursors on the next older path segment with candidates (those
// at or after the compaction's cut); false when none is left.
bool History::open_older_segment() {
  while (segment_ > 0) {
    const log::Segment &s = path_.segments[--segment_];
    int64_t first = std::max(s.first_seq, options_.from_seq);
    if (s.last_seq < first) continue;
    std::optional<std::pair<int64_t, int64_t>> pos = pos_range(first, s.last_seq);
    if (!pos) continue; // no event at all in the range
    // pos follows seq within a session (both are append order); the first
    // test only guards the walk against a file where it would not.
    int64_t window = pos->second - pos->first;
    bool together = window >= 0 && window < 2 * (s.last_seq - first + 1);
    // Stmt cannot move; it is built in place from the prvalue.
    cursor_.reset(new store::Store::Stmt(store_.statement(together ? kMessages : kJoined)));
    SQLite::Statement &q = **cursor_;
    q.bind(1, path_.session_no);
    q.bind(2, first);
    q.bind(3, s.last_seq);
    if (together) {
      events_.reset(new store::Store::Stmt(store_.statement(kEventsByPos)));
      (*events_)->bind(1, pos->first);
      (*events_)->bind(2, pos->second);
      (*events_)->bind(3, path_.session_no);
      event_seq_ = INT64_MAX;
    }
    return true;
  }
  return false;
}

// The pos of the session's first and last events in [first, last].
std::optional<std::pair<int64_t, int64_t>> History::pos_range(int64_t first, int64_t last) {
  auto q = store_.statement(kPosRange);
  q->bind(1, path_.session_no);
  q->bind(2, first);
  q->bind(3, last);
  if (!q->executeStep() || q->getColumn(0).isNull()) return std::nullopt;
  return std::pair{q->getColumn(0).getInt64(), q->getColumn(1).getInt64()};
}

History::Row History::row() {
  SQLite::Statement &q = **cursor_;
  unread_ = false;
  Row r;
  r.seq = q.getColumn(0).getInt64();
  std::string_view role = text_column(q, 1);
  r.role = role == "user"        ? "user"
           : role == "assistant" ? "assistant"
           : role == "context"   ? "context"
                                 : "tool";
  r.tokens = q.getColumn(2).getInt64();
  r.same_counter = text_column(q, 3) == counter_.name();
  // The event's columns: after the message's in the join, else the
  // events cursor's (after its seq).
  SQLite::Statement &e = events_ ? **events_ : q;
  int at = events_ ? 1 : 4;
  r.event_id = text_column(e, at);
  r.type = text_column(e, at + 1);
  r.payload = text_column(e, at + 2);
  r.visibility = text_column(e, at + 3);
  return r;
}

Message History::render(const Row &row) {
  Message m;
  m.seq = row.seq;
  m.event_id = row.event_id;
  m.role = row.role;
  m.segment_id = "msg:" + m.event_id;
  m.cancelled = row.type == "ToolCallCancelled";
  auto segment_id = [&] { return m.segment_id; };
  bool sensitive = !options_.allow_sensitive && log::is_sensitive(parser_, row.visibility);
  // The payload must outlive the visibility parse above: parse it last.
  simdjson::dom::element payload = json::parse_payload(parser_, row.payload, row.event_id);
  simdjson::dom::array content;
  if (!payload["content"].get(content))
    for (simdjson::dom::element b : content)
      if (project::string_field(b, "type") == "tool_call") {
        m.calls.emplace_back(project::string_field(b, "id"));
        m.call_names.emplace_back(project::string_field(b, "name"));
      }
  m.answers = project::string_field(payload, "tool_call_id");
  m.artifact_id = project::string_field(payload, "artifact_id");
  m.sources.push_back({"event", m.event_id});
  if (!m.artifact_id.empty()) m.sources.push_back({"artifact", m.artifact_id});
  int64_t tokens =
      row.same_counter ? row.tokens : project::Messages::count_tokens(counter_, row.type, payload);
  bool recount = false;
  if (sensitive) {
    m.content = withheld_content(m.role, payload);
    m.redactions.push_back({segment_id(), "sensitive_event", 1});
    recount = true;
  } else {
    filter_hits_.clear();
    policy::RedactingFilter filter(redactor_, filter_buffer_, filter_hits_);
    // The blocks are about the payload's size: one allocation.
    json::JsonWriter w(row.payload.size() + 64);
    w.set_string_filter(&filter);
    project::Messages::write_blocks(w, row.type, payload);
    m.content = w.take();
    if (!filter_hits_.empty()) m.redactions = notes(segment_id(), filter_hits_);
    recount = !m.redactions.empty();
  }
  if (m.role == std::string_view("context")) tokens += mark_context(m);
  if (m.role == std::string_view("tool") && !sensitive && tokens > options_.prune_min_tokens)
    add_pruned(m, payload);
  if (recount) tokens = count_blocks(counter_, count_parser_, m.content);
  m.tokens = tokens + kFramingTokens;
  if (!sensitive && options_.artifacts && row.payload.find(R"("type":"image")") != row.payload.npos)
    add_image_sizes(m);
  return m;
}

// A context message enters as the user-side text "<context source=…>\n…\n
// </context>" (its images after it): marked, so the model never reads it
// as the user's words. The tokens the marker adds.
int64_t History::mark_context(Message &m) {
  simdjson::dom::element blocks = json::parse(count_parser_, m.content, "content");
  json::JsonWriter w(m.content.size() + 64);
  int64_t added = 0;
  w.begin_array();
  for (simdjson::dom::element b : blocks.get_array()) {
    if (project::string_field(b, "type") != "context") {
      w.element(b);
      continue;
    }
    std::string open = context_tag(project::string_field(b, "source"));
    added += counter_.count(open) + counter_.count(kContextClose);
    std::string text =
        open + std::string(project::string_field(b, "text")) + std::string(kContextClose);
    w.begin_object().field("type", "text").field("text", text).end_object();
  }
  m.content = w.end_array().take();
  return added;
}

// Images enter as refs (no pixels) with their width and height, read from
// their artifact's first bytes, and cost what the provider's rule says. The
// content with placeholders instead is kept beside, for a tight budget.
void History::add_image_sizes(Message &m) {
  simdjson::dom::element blocks = json::parse(count_parser_, m.content, "content");
  json::JsonWriter w(m.content.size() + 64), bare(m.content.size() + 64);
  int64_t tokens = 0;
  std::string placeholders; // their texts, counted once
  std::vector<std::string> texts;
  auto image = [&](simdjson::dom::element b) {
    int64_t before = tokens;
    write_image(w, b, tokens);
    std::string_view id = project::string_field(b, "artifact_id");
    m.images.emplace_back(id, tokens - before);
    std::string text =
        "[image omitted to fit the context: " + std::string(project::string_field(b, "mime_type")) +
        ", artifact " + std::string(id) + "]";
    placeholders += text;
    texts.push_back(text);
    bare.begin_object().field("type", "text").field("text", text).end_object();
  };
  w.begin_array();
  bare.begin_array();
  for (simdjson::dom::element b : blocks.get_array()) {
    std::string_view type = project::string_field(b, "type");
    simdjson::dom::array inner;
    if (type == "image") {
      image(b);
    } else if (type == "tool_result" && !b["content"].get(inner)) {
      w.begin_object();
      bare.begin_object();
      for (auto [key, value] : b.get_object()) {
        if (key == "content") continue;
        w.key(key).element(value);
        bare.key(key).element(value);
      }
      w.key("content").begin_array();
      bare.key("content").begin_array();
      for (simdjson::dom::element img : inner) image(img);
      w.end_array().end_object();
      bare.end_array().end_object();
    } else {
      w.element(b);
      bare.element(b);
    }
  }
  w.end_array();
  bare.end_array();
  m.content = w.take();
  m.imageless_content = bare.take();
  m.imageless_tokens = m.tokens + counter_.count(placeholders);
  m.image_tokens = tokens;
  m.tokens += tokens;
  if (m.pruned_content) add_pruned_placeholders(m, texts, placeholders);
}

// A pruned tool output keeps its images' placeholders, so a preview never
// drops an image without naming its artifact.
void History::add_pruned_placeholders(Message &m, const std::vector<std::string> &texts,
                                      const std::string &placeholders) {
  simdjson::dom::parser parser;
  simdjson::dom::element blocks = json::parse(parser, *m.pruned_content, "pruned content");
  json::JsonWriter w(m.pruned_content->size() + placeholders.size() + 64);
  w.begin_array();
  for (simdjson::dom::element b : blocks.get_array()) {
    w.begin_object();
    for (auto [key, value] : b.get_object()) w.key(key).element(value);
    w.key("content").begin_array();
    for (const std::string &t : texts)
      w.begin_object().field("type", "text").field("text", t).end_object();
    w.end_array().end_object();
  }
  m.pruned_content = w.end_array().take();
  m.pruned_tokens += counter_.count(placeholders);
}

void History::write_image(json::JsonWriter &w, simdjson::dom::element block, int64_t &tokens) {
  std::string_view id = project::string_field(block, "artifact_id");
  std::optional<artifact::ImageSize> size;
  if (!id.empty()) try {
      size = artifact::image_size(options_.artifacts->read_range(id, 0, artifact::kImageHeadBytes));
    } catch (const Error &) {
      // Not stored (an import without its artifacts): counted as the most.
    }
  // The most any of the three rules gives, for an image whose size is unknown.
  constexpr int64_t kUnknownImageTokens = 1600;
  tokens += size ? options_.image_tokens(*size) : kUnknownImageTokens;
  w.begin_object();
  for (auto [key, value] : block.get_object())
    if (key != "width" && key != "height") w.key(key).element(value);
  if (size) w.field("width", size->width).field("height", size->height);
  w.end_object();
}

// An old tool output enters as a preview and a ref to the whole, this
// bundle only: nothing is written.
void History::add_pruned(Message &m, simdjson::dom::element payload) {
  std::string_view output = project::string_field(payload, "output");
  artifact::PreviewSpec spec;
  spec.mode = artifact::PreviewMode::kHeadTail;
  spec.max_bytes = options_.prune_preview_bytes;
  artifact::Preview p = artifact::preview_text(output, spec);
  if (p.omitted_bytes == 0) return; // already short in bytes: nothing to gain
  std::string where = m.artifact_id.empty() ? "event " + m.event_id : "artifact " + m.artifact_id;
  std::string text = p.text + "\n[output pruned to a preview: " + std::to_string(output.size()) +
                     " bytes in full, in " + where + "]";
  std::vector<policy::RedactionHit> hits;
  redactor_.redact(text, hits);
  m.pruned_redactions = notes("msg:" + m.event_id, hits);
  json::JsonWriter w;
  w.begin_array().begin_object().field("type", "tool_result");
  w.field("tool_call_id", m.answers);
  std::string_view name = project::string_field(payload, "name");
  if (!name.empty()) w.field("name", name);
  bool failed = false;
  if (payload["is_error"].get(failed)) failed = false;
  w.field("status", failed ? "error" : "success").field("text", text);
  if (!m.artifact_id.empty()) w.field("artifact_id", m.artifact_id);
  w.key("pruned").begin_object().field("bytes", int64_t(output.size())).end_object();
  w.end_object().end_array();
  m.pruned_content = w.take();
  m.pruned_tokens = counter_.count(text) + kFramingTokens;
}

std::optional<Turn> History::next_turn() {
  Turn t;
  t.messages.reserve(8); // a typical turn: prompt, calls, results, answer
  // Results read whose call is not yet, distinct: a handful at most, so a
  // vector beats a hash set.
  std::vector<std::string> &unanswered = unanswered_;
  unanswered.clear();
  while (on_row()) {
    Message m = render(row());
    if (!m.answers.empty() && m.role == std::string_view("tool") &&
        std::find(unanswered.begin(), unanswered.end(), m.answers) == unanswered.end())
      unanswered.push_back(m.answers);
    for (const std::string &c : m.calls) std::erase(unanswered, c);
    bool head = m.role == std::string_view("user") && unanswered.empty();
    t.messages.push_back(std::move(m));
    if (head) {
      t.has_head = true;
      break;
    }
  }
  if (t.messages.empty()) return std::nullopt;
  std::reverse(t.messages.begin(), t.messages.end()); // read newest first, kept oldest first
  set_orphans_aside(t);
  if (t.messages.empty()) return std::nullopt; // only orphans: the cut is reached
  close_calls(t);
  split_units(t);
  return t;
}

// A turn holds every call its results answer, unless the reading reached
// the cut first: a result whose call is not in the turn is an orphan.
void History::set_orphans_aside(Turn &t) {
  std::unordered_set<std::string_view> calls;
  for (const Message &m : t.messages)
    for (const std::string &c : m.calls) calls.insert(c);
  auto orphan = [&](const Message &m) {
    return m.role == std::string_view("tool") && !calls.count(m.answers);
  };
  if (std::none_of(t.messages.begin(), t.messages.end(), orphan)) return;
  std::vector<Message> kept;
  for (Message &m : t.messages) (orphan(m) ? orphans_ : kept).push_back(std::move(m));
  t.messages = std::move(kept);
}

// See the header: every call of the turn leaves it answered, dropped, or
// listed as unanswered. Walked newest first, so what is inserted after a
// message never moves a message still to visit.
void History::close_calls(Turn &t) {
  bool newest = std::exchange(newest_, false);
  std::unordered_set<std::string> answered;
  std::vector<std::string> drop;
  for (const Message &m : t.messages)
    if (m.role == std::string_view("tool")) {
      answered.insert(m.answers);
      if (m.cancelled && options_.drop_interrupted) drop.push_back(m.answers);
    }
  // Older turns always have a user prompt after them (the next turn's).
  bool moved_on = !newest;
  for (size_t j = t.messages.size(); j-- > 0;) {
    // Context is neither side speaking: the conversation has not moved on.
    if (t.messages[j].role == std::string_view("tool") ||
        t.messages[j].role == std::string_view("context"))
      continue;
    size_t at = j + 1; // after the call's results, which adapters keep beside it
    while (at < t.messages.size() && t.messages[at].role == std::string_view("tool")) ++at;
    std::vector<Message> added;
    const Message &m = t.messages[j];
    for (size_t c = 0; c < m.calls.size(); ++c) {
      const std::string &id = m.calls[c], &name = m.call_names[c];
      if (answered.count(id)) continue;
      if (moved_on && options_.drop_interrupted) {
        drop.push_back(id);
      } else if (moved_on) {
        added.push_back(synthetic_result(t.messages[at - 1], id, name, m));
      } else {
        const std::vector<ToolResultInput> *given = options_.supplied;
        auto in = given ? std::find_if(given->begin(), given->end(),
                                       [&](auto &r) { return r.tool_call_id == id; })
                        : std::vector<ToolResultInput>::const_iterator();
        if (given && in != given->end()) {
          size_t i = size_t(in - given->begin());
          t.supplied.push_back(i);
          added.push_back(supplied_result(t.messages[at - 1], i, name));
          added.back().sources.push_back({"event", m.event_id});
        } else {
          t.unanswered.push_back({id, name, m.event_id});
        }
      }
    }
    for (size_t k = 0; k < added.size(); ++k) added[k].sub = int64_t(k) + 1;
    t.messages.insert(t.messages.begin() + std::ptrdiff_t(at),
                      std::make_move_iterator(added.begin()), std::make_move_iterator(added.end()));
    moved_on = true; // a user prompt or an assistant message: what is before it was followed
  }
  if (!drop.empty()) drop_calls(t, drop);
}

// drop_interrupted: each call block named leaves its assistant message (a
// message left with no block leaves), and so does a result answering it.
void History::drop_calls(Turn &t, const std::vector<std::string> &ids) {
  auto named = [&](std::string_view id) {
    return std::find(ids.begin(), ids.end(), id) != ids.end();
  };
  std::vector<Message> kept;
  kept.reserve(t.messages.size());
  for (Message &m : t.messages) {
    if (m.role == std::string_view("tool") && named(m.answers)) continue;
    bool touched = false;
    for (size_t c = 0; c < m.calls.size(); ++c)
      if (named(m.calls[c])) {
        t.dropped.push_back({m.calls[c], m.call_names[c], m.event_id});
        touched = true;
      }
    if (touched) {
      simdjson::dom::element blocks = json::parse(count_parser_, m.content, "content");
      json::JsonWriter w(m.content.size());
      w.begin_array();
      size_t left = 0;
      for (simdjson::dom::element b : blocks.get_array()) {
        if (project::string_field(b, "type") == "tool_call" &&
            named(project::string_field(b, "id")))
          continue;
        w.element(b);
        ++left;
      }
      w.end_array();
      if (left == 0) continue;
      m.content = w.take();
      m.tokens = count_blocks(counter_, count_parser_, m.content) + kFramingTokens;
      for (size_t c = m.calls.size(); c-- > 0;)
        if (named(m.calls[c])) {
          m.calls.erase(m.calls.begin() + std::ptrdiff_t(c));
          m.call_names.erase(m.call_names.begin() + std::ptrdiff_t(c));
        }
    }
    kept.push_back(std::move(m));
  }
  t.messages = std::move(kept);
  if (t.has_head && (t.messages.empty() || t.messages[0].role != std::string_view("user")))
    t.has_head = false;
}

// A cancelled result for an abandoned call, placed after `after`.
Message History::synthetic_result(const Message &after, const std::string &call_id,
                                  const std::string &name, const Message &call) {
  Message r;
  r.seq = after.seq;
  r.event_id = call.event_id;
  r.role = "tool";
  r.answers = call_id;
  r.synthetic = true;
  r.segment_id = "cancelled:" + call_id;
  std::string text =
      project::Messages::cancelled_text("the conversation moved on before it returned");
  json::JsonWriter w;
  w.begin_array().begin_object().field("type", "tool_result").field("tool_call_id", call_id);
  if (!name.empty()) w.field("name", name);
  w.field("status", "cancelled").field("text", text).key("synthetic").boolean(true);
  w.end_object().end_array();
  r.content = w.take();
  r.tokens = counter_.count(text) + kFramingTokens;
  r.sources = {{"event", call.event_id}};
  r.note = "a synthetic cancelled result: the call '" + call_id + "'" +
           (name.empty() ? "" : " (" + name + ")") + " of " + call.event_id +
           " got no result and the conversation moved on";
  return r;
}

// The request's tool_results[i], placed after `after`, redacted like the log.
Message History::supplied_result(const Message &after, size_t i, const std::string &name) {
  const ToolResultInput &in = (*options_.supplied)[i];
  Message r;
  r.seq = after.seq;
  r.role = "tool";
  r.answers = in.tool_call_id;
  r.supplied = true;
  r.segment_id = "result:" + in.tool_call_id;
  r.event_id = after.event_id;
  std::vector<policy::RedactionHit> hits;
  std::string text = in.output.value_or(""), error = in.error.value_or("");
  redactor_.redact(text, hits);
  redactor_.redact(error, hits);
  r.redactions = notes(r.segment_id, hits);
  json::JsonWriter w;
  w.begin_array()
      .begin_object()
      .field("type", "tool_result")
      .field("tool_call_id", in.tool_call_id);
  std::string_view tool = in.name ? std::string_view(*in.name) : std::string_view(name);
  if (!tool.empty()) w.field("name", tool);
  w.field("status", in.is_error || in.error ? "error" : "success");
  if (in.output) w.field("text", text);
  if (in.error) w.field("error", error);
  w.end_object().end_array();
  r.content = w.take();
  r.tokens = counter_.count(text) + counter_.count(error) + kFramingTokens;
  r.sources = {{"request", "tool_results[" + std::to_string(i) + "]"}};
  r.note = "a result given with the compile (tool_results[" + std::to_string(i) + "])";
  return r;
}

// Units: each message from the first after the head, extended to the last
// result answering any call inside it.
void History::split_units(Turn &t) {
  // Keyed by views into t.messages, which stays put meanwhile.
  std::unordered_map<std::string_view, size_t> result_at; // call id -> the result's index
  for (size_t i = 0; i < t.messages.size(); ++i)
    if (t.messages[i].role == std::string_view("tool")) result_at[t.messages[i].answers] = i;
  std::unordered_set<std::string_view> calls_seen;
  for (size_t i = t.has_head ? 1 : 0; i < t.messages.size();) {
    Unit u{i, i};
    for (size_t j = i; j <= u.last; ++j) {
      const Message &m = t.messages[j];
      for (const std::string &c : m.calls) {
        calls_seen.insert(c);
        auto r = result_at.find(c);
        if (r == result_at.end() || r->second < j)
          u.pending = true;
        else
          u.last = std::max(u.last, r->second);
      }
      if (m.supplied) u.pending = true; // its result is not in the log yet
    }
    t.units.push_back(u);
    i = u.last + 1;
  }
}

} // namespace ctxdb::compile
