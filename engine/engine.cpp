#include "engine.hpp"

#include "artifact/preview.hpp"
#include "artifact/search.hpp"
#include "artifact/verify.hpp"
#include "compile/adapters.hpp"
#include "log/anchor.hpp"
#include "memory/retrieve.hpp"
#include "policy/redactor.hpp"
#include "project/rebuild.hpp"
#include "provider/response.hpp"
#include "store/fts_merge.hpp"
#include "token/bpe.hpp"
#include "util/ids.hpp"
#include "util/sha256.hpp"
#include "json/json_writer.hpp"
#include "json/parse.hpp"

#include <algorithm>

namespace ctxdb {

Engine::Engine(const std::string &path, std::string_view config_json)
    : store_(path, store::parse_config(config_json)), log_(store_), sessions_(store_),
      state_(store_, log_, payloads_), stats_(store_, payloads_),
      messages_(store_, payloads_, *counter_), tool_calls_(store_, log_.tree(), payloads_),
      files_(store_, payloads_), compactions_(store_, log_.tree(), payloads_),
      context_builds_(store_, payloads_), import_sources_(store_, payloads_),
      search_(store_, log_.tree()), memories_(store_, payloads_), purger_(store_, payloads_),
      artifacts_(store_),
      spiller_(artifacts_, log::SpillConfig::parse(config_json),
               [this](std::string_view call_id, const log::SpillPlace &at) {
                 return tool_calls_.call_name(at.session_no, call_id, at.branch_no, at.parent_seq);
               }),
      projections_{&sessions_,       &state_,  &stats_,       &messages_,
                   &tool_calls_,     &files_,  &compactions_, &context_builds_,
                   &import_sources_, &search_, &memories_} {
  // The purger first: a purge's secure delete must be on before any
  // projection deletes what it removes (memory/purger.hpp).
  log_.add_observer(&purger_);
  for (project::Projection *p : projections_) log_.add_observer(p);
  log_.set_spiller(&spiller_);
  tokenizer_data_dir_ = token::config_data_dir(config_json);
  // An exact encoding named in the config counts from the first append on;
  // its rank file is checked now, so a missing one fails the open.
  if (std::string name = token::config_counter(config_json); !name.empty()) {
    configured_counter_ = &token::counter_named(name, tokenizer_data_dir_);
    counter_ = configured_counter_;
    messages_.set_counter(*counter_);
  }
}

std::string Engine::session_create(std::string_view json) {
  log::Event started = log_.create_session(json);
  return session_get(started.session_id);
}

std::string Engine::session_get(std::string_view id) {
  if (auto s = sessions_.get_json(id)) return *s;
  throw Error(Code::kNotFound, "session '" + std::string(id) + "' not found");
}

std::string Engine::session_list() { return sessions_.list_json(); }

std::string Engine::append(std::string_view session_id, std::string_view json) {
  return log::to_json(log_.append(session_id, json));
}

std::string Engine::append_batch(std::string_view session_id, std::string_view ndjson) {
  log::BatchResult r = log_.append_batch(session_id, ndjson);
  json::JsonWriter w;
  w.begin_object()
      .field("count", r.count)
      .field("first_seq", r.first_seq)
      .field("last_seq", r.last_seq)
      .field("last_id", r.last_id)
      .end_object();
  return w.take();
}

std::string Engine::record_response(std::string_view session_id, std::string_view options_json,
                                    std::string_view response) {
  simdjson::dom::parser parser;
  simdjson::dom::element o = json::parse(parser, options_json, "record options");
  store::embedded_schema("json/response_record_options.schema.json").validate(o, "");
  bool stream = false;
  if (o["stream"].get(stream)) stream = false; // absent: a complete response
  provider::Recorded r =
      provider::read_response(o["format"].get_string().value(), stream, response);
  int64_t latency = -1;
  if (o["latency_ms"].get(latency)) latency = -1;
  if (latency >= 0) {
    r.payload.pop_back(); // the payload object's '}'
    r.payload += ",\"latency_ms\":" + std::to_string(latency) + "}";
  }
  json::JsonWriter w(r.payload.size() + 256);
  w.begin_object()
      .field("type", "AssistantMessageCreated")
      .field("actor", o["actor"].is_string() ? o["actor"].get_string().value() : "assistant")
      .field("id", provider::event_id(session_id, r.response_id));
  for (const char *key : {"branch_id", "parent_id", "run_id"})
    if (std::string_view v; !o[key].get(v)) w.field(key, v);
  if (int64_t ts; !o["ts"].get(ts)) w.field("ts", ts);
  w.raw_field("payload", r.payload).end_object();
  return append(session_id, w.str());
}

std::string Engine::import(std::string_view ndjson) {
  artifact::Importer artifacts(artifacts_);
  log::ImportExtras extras{[&](std::string_view line) { return artifacts.take(line); },
                           [&] { artifacts.finish(); }};
  log::ImportResult r = log_.import(ndjson, &extras);
  json::JsonWriter w;
  w.begin_object().field("imported", r.imported).field("skipped", r.skipped).end_object();
  return w.take();
}

std::string Engine::transcript_import(std::string_view options_json) {
  transcript::ImportOptions options = transcript::parse_import_options(options_json);
  store_.require_writable();
  transcript::Importer importer(log_, import_sources_, seen_transcripts_);
  return importer.run(options).to_json();
}

namespace {

// The artifacts an export of one session (or of all) carries: those its
// events refer to, each with those references only (every artifact, with
// every reference, for all).
std::vector<artifact::Info> exported_artifacts(artifact::ArtifactStore &store,
                                               const std::optional<std::string> &session_id) {
  std::vector<artifact::Info> infos = store.list(session_id);
  if (session_id)
    for (artifact::Info &a : infos)
      std::erase_if(a.refs, [&](const artifact::Ref &r) { return r.session_id != *session_id; });
  return infos;
}

} // namespace

std::vector<std::string> Engine::export_page(ExportState &s, int64_t limit) {
  // An artifact page holds a few chunk records (each up to a base64 chunk).
  constexpr size_t kArtifactLines = 8;
  std::vector<std::string> rows;
  if (!s.events_done) {
    std::optional<std::string_view> sid;
    if (s.session_id) sid = *s.session_id;
    rows = events_page(sid, s.cursor, -1, limit);
    s.events_done = int64_t(rows.size()) < limit;
    if (!rows.empty()) return rows;
  }
  if (!s.artifacts)
    s.artifacts = std::make_unique<artifact::Exporter>(
        artifacts_, exported_artifacts(artifacts_, s.session_id));
  s.artifacts->next(rows, kArtifactLines);
  return rows;
}

bool Engine::session_exists(std::string_view id) { return log_.session_exists(id); }

std::string Engine::event_get(std::string_view id) {
  if (auto e = log_.find(id)) {
    log_.locate(*e);
    return log::to_json(*e);
  }
  throw Error(Code::kNotFound, "event '" + std::string(id) + "' not found");
}

namespace {

void write_chain_report(json::JsonWriter &w, const log::VerifyReport &r) {
  w.field("sessions", r.sessions).field("events", r.events);
  if (!r.ok) {
    w.key("first_broken")
        .begin_object()
        .field("session_id", r.session_id)
        .field("seq", r.seq)
        .field("event_id", r.event_id)
        .field("problem", r.problem)
        .end_object();
  }
  if (!r.purged.empty()) {
    w.key("purged").begin_array();
    for (const log::PurgedPayload &p : r.purged)
      w.begin_object()
          .field("session_id", p.session_id)
          .field("seq", p.seq)
          .field("event_id", p.event_id)
          .field("purged_by", p.purged_by)
          .end_object();
    w.end_array();
  }
}

void write_artifact_report(json::JsonWriter &w, const artifact::VerifyReport &r) {
  w.key("artifacts")
      .begin_object()
      .key("ok")
      .boolean(r.ok)
      .field("mode", artifact::mode_name(r.mode))
      .field("artifacts", r.artifacts)
      .field("chunks", r.chunks)
      .field("bytes", r.bytes);
  if (!r.ok) {
    w.key("first_broken").begin_object().field("artifact_id", r.artifact_id);
    if (r.chunk >= 0) w.field("chunk", r.chunk);
    w.field("problem", r.problem).end_object();
  }
  w.end_object();
}

} // namespace

std::string Engine::verify(std::optional<std::string_view> session_id) {
  return verify_report(
      session_id, session_id ? artifact::VerifyMode::kNone : artifact::VerifyMode::kQuick, nullptr);
}

std::string Engine::verify_with(std::string_view options_json) {
  if (options_json.empty()) return verify(std::nullopt);
  simdjson::dom::parser parser;
  simdjson::dom::element doc = json::parse(parser, options_json, "verify options");
  store::embedded_schema("json/verify_options.schema.json").validate(doc, "");
  std::optional<std::string_view> session_id;
  std::string_view v;
  if (!doc["session_id"].get(v)) session_id = v;
  artifact::VerifyMode mode =
      session_id ? artifact::VerifyMode::kNone : artifact::VerifyMode::kQuick;
  if (!doc["artifacts"].get(v)) mode = artifact::parse_mode(v);
  simdjson::dom::element anchor;
  bool has_anchor = !doc["anchor"].get(anchor);
  return verify_report(session_id, mode, has_anchor ? &anchor : nullptr);
}

std::string Engine::verify_report(std::optional<std::string_view> session_id,
                                  artifact::VerifyMode artifacts,
                                  const simdjson::dom::element *anchor) {
  // The anchor's own errors (a malformed one) come before any work.
  std::optional<log::AnchorCheck> a;
  if (anchor) a = log::check_anchor(store_, *anchor);
  log::VerifyReport chain = log_.verify(session_id);
  artifact::VerifyReport art = artifact::verify_artifacts(store_, artifacts);
  json::JsonWriter w;
  w.begin_object().key("ok").boolean(chain.ok && art.ok && (!a || a->ok));
  write_chain_report(w, chain);
  if (artifacts != artifact::VerifyMode::kNone) write_artifact_report(w, art);
  if (a) {
    w.key("anchor").begin_object().key("ok").boolean(a->ok).field("events", a->events);
    if (!a->ok) w.field("problem", a->problem);
    w.end_object();
  }
  w.end_object();
  return w.take();
}

std::string Engine::anchor(std::string_view options_json) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc = json::parse(
      parser, options_json.empty() ? std::string_view("{}") : options_json, "anchor options");
  store::embedded_schema("json/anchor_options.schema.json").validate(doc, "");
  return log::anchor_json(store_, doc);
}

std::string Engine::optimize(std::string_view options_json) {
  if (!options_json.empty()) {
    simdjson::dom::parser parser;
    simdjson::dom::element doc = json::parse(parser, options_json, "optimize options");
    store::embedded_schema("json/optimize_options.schema.json").validate(doc, "");
  }
  // The session-search index first takes in the events it has not
  // indexed yet (search_index.hpp), so that what is merged is all of it.
  search_.catch_up();
  store::Store::WriteTransaction tx(store_);
  json::JsonWriter w;
  w.begin_object().key("indexes").begin_array();
  for (const char *table : {"memory_fts", "search_words", "search_grams"}) {
    size_t before = store::fts_shape(store_, table).segment_pages.size();
    if (before > 1) store::fts_merge(store_, table);
    store::FtsShape after = store::fts_shape(store_, table);
    w.begin_object()
        .field("index", table)
        .field("segments_before", int64_t(before))
        .field("segments_after", int64_t(after.segment_pages.size()))
        .field("pages", after.pages())
        .end_object();
  }
  tx.commit();
  w.end_array().end_object();
  return w.take();
}

std::string Engine::rebuild(std::string_view options_json) {
  project::RebuildOptions options;
  if (!options_json.empty()) {
    simdjson::dom::parser parser;
    simdjson::dom::element doc = json::parse(parser, options_json, "rebuild options");
    store::embedded_schema("json/rebuild_options.schema.json").validate(doc, "");
    if (doc["check"].get(options.check)) options.check = false; // absent: no check
    if (doc["search"].get(options.log_indexes)) options.log_indexes = false;
  }
  // The artifacts are source data, not replayed, but what the projections
  // say of them (sizes, previews, spilled outputs) is only as good as
  // their bytes: a check covers them too, before the replay's work.
  artifact::VerifyReport art = artifact::verify_artifacts(
      store_, options.check ? artifact::VerifyMode::kQuick : artifact::VerifyMode::kNone);
  if (!art.ok) throw Error(Code::kCheckFailed, "rebuild --check: " + art.problem);
  project::RebuildReport r = project::rebuild(store_, log_, projections_, options);
  json::JsonWriter w;
  w.begin_object().field("events", r.events).key("identical").boolean(r.identical);
  if (options.check) write_artifact_report(w, art);
  w.key("tables").begin_array();
  for (const auto &t : r.tables)
    w.begin_object()
        .field("table", t.table)
        .field("rows", t.rows)
        .field("before", t.before)
        .field("after", t.after)
        .end_object();
  w.end_array().key("kept").begin_array();
  for (const std::string &t : r.kept) w.value(t);
  w.end_array().end_object();
  return w.take();
}

namespace {

void write_branch(json::JsonWriter &w, const log::Branch &b, std::string_view session_id) {
  w.begin_object().field("id", b.id).field("session_id", session_id).field("kind", b.kind);
  if (b.name) w.field("name", *b.name);
  if (b.parent_no) {
    w.field("parent_branch_id", b.parent_id)
        .field("fork_event_id", b.fork_event_id)
        .field("fork_seq", b.fork_seq);
  }
  w.field("first_seq", b.first_seq)
      .field("leaf_event_id", b.leaf_event_id)
      .field("leaf_seq", b.leaf_seq)
      .field("event_count", b.event_count)
      .end_object();
}

// A string field of a validated object, or nullopt.
std::optional<std::string_view> get_string(simdjson::dom::element o, const char *key) {
  std::string_view v;
  if (o[key].get(v)) return std::nullopt;
  return v;
}

} // namespace

int64_t Engine::session_no(std::string_view session_id) {
  int64_t no = log_.session_no(session_id);
  if (no == 0) throw Error(Code::kNotFound, "session '" + std::string(session_id) + "' not found");
  return no;
}

log::Branch Engine::resolve_branch(int64_t session_no, std::optional<std::string_view> branch) {
  return branch ? log_.tree().find_branch(session_no, *branch)
                : log_.tree().main_branch(session_no);
}

std::vector<std::string> Engine::to_json_rows(std::vector<log::Event> &events) {
  log_.locate(events);
  std::vector<std::string> rows;
  rows.reserve(events.size());
  for (const auto &e : events) rows.push_back(log::to_json(e));
  return rows;
}

std::string Engine::branch_fork(std::string_view session_id, std::string_view spec_json) {
  simdjson::dom::parser parser;
  simdjson::dom::element spec = json::parse(parser, spec_json, "fork");
  store::embedded_schema("json/branch_fork.schema.json").validate(spec, "");
  // The fork is a BranchCreated event like any other: build its envelope.
  json::JsonWriter ev;
  ev.begin_object()
      .field("type", "BranchCreated")
      .field("actor", get_string(spec, "actor").value_or("host"));
  if (auto id = get_string(spec, "id")) ev.field("id", *id);
  // As given: the append checks it (a ts past int64 is an error, not dropped).
  if (simdjson::dom::element ts; !spec["ts"].get(ts)) ev.key("ts").element(ts);
  ev.key("payload")
      .begin_object()
      .field("fork_event_id", *get_string(spec, "event_id"))
      .field("kind", get_string(spec, "kind").value_or("fork"));
  if (auto name = get_string(spec, "name")) ev.field("name", *name);
  ev.end_object().end_object();
  log::Event e = log_.append(session_id, ev.take());
  json::JsonWriter w;
  write_branch(w, log_.tree().branch(e.branch_no), session_id);
  return w.take();
}

std::string Engine::branch_list(std::string_view session_id) {
  int64_t no = session_no(session_id);
  json::JsonWriter w;
  w.begin_array();
  for (const log::Branch &b : log_.tree().branches(no)) write_branch(w, b, session_id);
  w.end_array();
  return w.take();
}

std::string Engine::event_children(std::string_view event_id) {
  store::Store::ReadTransaction snapshot(store_);
  std::optional<log::Event> e = log_.find(event_id);
  if (!e) throw Error(Code::kNotFound, "event '" + std::string(event_id) + "' not found");
  log_.locate(*e);
  log::Tree &tree = log_.tree();
  std::vector<log::Event> children;
  // The next event on its own branch: the first path seq after it.
  for (const log::Segment &s : tree.path(e->branch_no)) {
    if (s.last_seq <= e->seq) continue;
    std::vector<log::Event> next =
        log_.read_session(e->session_id, std::max(s.first_seq, e->seq + 1), s.last_seq, 1);
    children.insert(children.end(), next.begin(), next.end());
    break;
  }
  for (const log::Branch &b : tree.forks_at(e->session_no, e->seq))
    if (auto first = log_.find(b.id)) children.push_back(std::move(*first));
  json::JsonWriter w;
  w.begin_object().field("event_id", e->id).key("events").begin_array();
  for (const std::string &row : to_json_rows(children)) w.raw(row);
  w.end_array().key("sessions").begin_array();
  for (const std::string &s : sessions_.spawned_by(e->id)) w.raw(s);
  w.end_array().end_object();
  return w.take();
}

int64_t Engine::path_branch(std::string_view session_id, std::optional<std::string_view> branch) {
  store::Store::ReadTransaction snapshot(store_);
  return resolve_branch(session_no(session_id), branch).no;
}

std::vector<std::string> Engine::path_page(std::string_view session_id, int64_t branch_no,
                                           int64_t &cursor, int64_t limit) {
  store::Store::ReadTransaction snapshot(store_);
  std::vector<log::Event> events;
  for (const log::Segment &s : log_.tree().path(branch_no)) {
    if (s.last_seq <= cursor) continue;
    int64_t want = limit - int64_t(events.size());
    if (want <= 0) break;
    std::vector<log::Event> part =
        log_.read_session(session_id, std::max(s.first_seq, cursor + 1), s.last_seq, want);
    events.insert(events.end(), std::make_move_iterator(part.begin()),
                  std::make_move_iterator(part.end()));
  }
  if (!events.empty()) cursor = events.back().seq;
  return to_json_rows(events);
}

std::vector<std::string> Engine::events_page(std::optional<std::string_view> session_id,
                                             int64_t &cursor, int64_t to_seq, int64_t limit) {
  std::vector<log::Event> events = session_id
                                       ? log_.read_session(*session_id, cursor + 1, to_seq, limit)
                                       : log_.read_all(cursor, limit);
  if (!events.empty()) cursor = session_id ? events.back().seq : events.back().pos;
  return to_json_rows(events);
}

template <class View>
std::string Engine::branch_view(View &view, std::string_view session_id,
                                std::optional<std::string_view> branch) {
  store::Store::ReadTransaction snapshot(store_); // the path and its rows agree
  int64_t no = session_no(session_id);
  return view.path_json(project::path_of(log_.tree(), no, resolve_branch(no, branch)));
}

std::string Engine::messages(std::string_view session_id, std::optional<std::string_view> branch) {
  return branch_view(messages_, session_id, branch);
}

std::string Engine::tool_calls(std::string_view session_id,
                               std::optional<std::string_view> branch) {
  return branch_view(tool_calls_, session_id, branch);
}

std::string Engine::files(std::string_view session_id, std::optional<std::string_view> branch) {
  return branch_view(files_, session_id, branch);
}

namespace {

std::string state_document(std::string_view session_id, std::string_view branch_id, int64_t seq,
                           std::string_view event_id, std::string_view state_json) {
  json::JsonWriter w;
  w.begin_object()
      .field("session_id", session_id)
      .field("branch_id", branch_id)
      .field("seq", seq)
      .field("event_id", event_id)
      .raw_field("state", state_json)
      .end_object();
  return w.take();
}

} // namespace

std::string Engine::state(std::string_view session_id, std::optional<std::string_view> branch,
                          std::optional<std::string_view> at_event_id) {
  if (branch && at_event_id)
    throw Error(Code::kInvalidArg, "state: give a branch or an event to travel to (at), not both");
  store::Store::ReadTransaction snapshot(store_); // one consistent view for every read below
  std::string sid(session_id);
  int64_t no = session_no(session_id);
  if (at_event_id) {
    std::optional<log::Event> e = log_.find(*at_event_id);
    if (!e) throw Error(Code::kNotFound, "event '" + std::string(*at_event_id) + "' not found");
    if (e->session_no != no)
      throw Error(Code::kInvalidArg, "event '" + e->id + "' belongs to session '" + e->session_id +
                                         "', not '" + sid + "'");
    log_.locate(*e);
    project::AgentState s = state_.at(sid, e->branch_no, e->seq);
    return state_document(sid, e->branch_id, e->seq, e->id, project::to_json(s));
  }
  log::Branch b = resolve_branch(no, branch);
  project::State::Current c = state_.current(sid, b);
  return state_document(sid, b.id, c.seq, c.event_id, c.state_json);
}

std::string Engine::state_query(std::string_view session_id, std::string_view query_json) {
  if (query_json.empty()) return state(session_id, std::nullopt, std::nullopt);
  simdjson::dom::parser parser;
  simdjson::dom::element query = json::parse(parser, query_json, "state query");
  store::embedded_schema("json/state_query.schema.json").validate(query, "");
  return state(session_id, get_string(query, "branch_id"), get_string(query, "at"));
}

std::string Engine::stats(std::optional<std::string_view> session_id) {
  store::Store::ReadTransaction snapshot(store_);
  if (!session_id) return stats_.get_json(std::nullopt, {});
  return stats_.get_json(session_no(*session_id), *session_id);
}

namespace {

void write_artifact(json::JsonWriter &w, const artifact::Info &a) {
  w.begin_object()
      .field("id", a.id)
      .field("raw_size", a.raw_size)
      .field("stored_size", a.stored_size)
      .field("chunk_size", a.chunk_size)
      .field("chunk_count", a.chunk_count)
      .field("line_count", a.line_count)
      .field("kind", artifact::kind_name(a.kind));
  w.key("mime");
  a.mime.empty() ? w.null() : w.value(a.mime);
  w.key("name");
  a.name.empty() ? w.null() : w.value(a.name);
  w.field("created_ts", a.created_ts).key("refs").begin_array();
  for (const artifact::Ref &r : a.refs) {
    w.begin_object().field("event_id", r.event_id).field("role", r.role).key("session_id");
    r.session_id.empty() ? w.null() : w.value(r.session_id);
    w.end_object();
  }
  w.end_array().end_object();
}

// A JSON options object checked against its embedded schema; empty text
// is {}.
simdjson::dom::element options_doc(simdjson::dom::parser &parser, std::string_view text,
                                   const char *what, const char *schema) {
  simdjson::dom::element doc = json::parse(parser, text.empty() ? "{}" : text, what);
  store::embedded_schema(schema).validate(doc, "");
  return doc;
}

int64_t get_int(simdjson::dom::element o, const char *key, int64_t fallback) {
  int64_t v;
  return o[key].get(v) ? fallback : v;
}

} // namespace

namespace {

// artifact_meta.schema.json text (empty is {}) as the store's Meta.
artifact::Meta parse_artifact_meta(std::string_view meta_json) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc =
      options_doc(parser, meta_json, "artifact meta", "json/artifact_meta.schema.json");
  artifact::Meta meta;
  if (auto kind = get_string(doc, "kind")) meta.kind = artifact::parse_kind(*kind);
  meta.mime = get_string(doc, "mime").value_or("");
  meta.name = get_string(doc, "name").value_or("");
  meta.event_id = get_string(doc, "event_id").value_or("");
  if (auto role = get_string(doc, "role")) meta.role = *role;
  return meta;
}

} // namespace

// The answer is read inside the put's transaction (Writer::finish's
// `stored`): a read failing after the commit would fail a put that stored.
std::string Engine::artifact_put(std::string_view bytes, std::string_view meta_json) {
  artifact::Info stored;
  artifacts_.put(bytes, parse_artifact_meta(meta_json), &stored);
  json::JsonWriter w;
  write_artifact(w, stored);
  return w.take();
}

artifact::ArtifactStore::Writer Engine::artifact_writer(std::string_view meta_json) {
  return artifacts_.writer(parse_artifact_meta(meta_json));
}

std::string Engine::artifact_finish(artifact::ArtifactStore::Writer &writer) {
  artifact::Info stored;
  writer.finish(&stored);
  json::JsonWriter w;
  write_artifact(w, stored);
  return w.take();
}

std::string Engine::artifact_info(std::string_view id) {
  json::JsonWriter w;
  write_artifact(w, artifacts_.info(id));
  return w.take();
}

std::string Engine::artifact_list(std::optional<std::string_view> session_id) {
  store::Store::ReadTransaction snapshot(store_);
  std::optional<std::string> sid;
  if (session_id) {
    session_no(*session_id); // kNotFound for an unknown session
    sid = std::string(*session_id);
  }
  json::JsonWriter w;
  w.begin_array();
  for (const artifact::Info &a : artifacts_.list(sid)) write_artifact(w, a);
  w.end_array();
  return w.take();
}

std::string Engine::artifact_read(std::string_view id, int64_t offset, int64_t length) {
  if (length < -1) throw Error(Code::kInvalidArg, "length must be >= 0 (or -1: to the end)");
  return artifacts_.read_range(id, offset, length == -1 ? INT64_MAX : length);
}

size_t Engine::artifact_read_into(std::string_view id, int64_t offset, int64_t length,
                                  const std::function<char *(size_t)> &alloc) {
  if (length < -1) throw Error(Code::kInvalidArg, "length must be >= 0 (or -1: to the end)");
  return artifacts_.read_range_into(id, offset, length == -1 ? INT64_MAX : length, alloc);
}

std::string Engine::artifact_lines(std::string_view id, int64_t first, int64_t count) {
  if (count < -1) throw Error(Code::kInvalidArg, "count must be >= 0 (or -1: to the end)");
  return artifacts_.read_lines(id, first, count == -1 ? INT64_MAX : count);
}

std::string Engine::artifact_preview(std::string_view id, std::string_view spec_json) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc =
      options_doc(parser, spec_json, "preview spec", "json/artifact_preview_spec.schema.json");
  artifact::PreviewSpec spec;
  std::string_view mode = get_string(doc, "mode").value_or("head_tail");
  spec.mode = mode == "head"   ? artifact::PreviewMode::kHead
              : mode == "tail" ? artifact::PreviewMode::kTail
                               : artifact::PreviewMode::kHeadTail;
  spec.max_lines = get_int(doc, "lines", -1);
  spec.max_bytes = get_int(doc, "bytes", -1);
  artifact::Preview p = artifact::preview(artifacts_, id, spec);
  json::JsonWriter w;
  w.begin_object()
      .field("id", id)
      .field("text", p.text)
      .field("omitted_lines", p.omitted_lines)
      .field("omitted_bytes", p.omitted_bytes)
      .end_object();
  return w.take();
}

std::string Engine::artifact_search(std::string_view id, std::string_view pattern,
                                    std::string_view options_json) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc = options_doc(parser, options_json, "search options",
                                           "json/artifact_search_options.schema.json");
  artifact::SearchOptions o;
  o.before = get_int(doc, "before", 0);
  o.after = get_int(doc, "after", 0);
  o.max_matches = get_int(doc, "max_matches", o.max_matches);
  bool ignore_case = false;
  if (!doc["ignore_case"].get(ignore_case)) o.ignore_case = ignore_case;
  artifact::SearchResult r = artifact::search(artifacts_, id, pattern, o);
  // The lines shown pass through the compiler's built-in redaction, as
  // session search's snippets do; offsets and lengths are the stored bytes'.
  policy::Redactor redactor({}, true);
  std::string buffer;
  std::vector<policy::RedactionHit> redactions;
  policy::RedactingFilter redacting(redactor, buffer, redactions);
  json::JsonWriter w;
  w.begin_object().field("id", id).set_string_filter(&redacting).key("matches").begin_array();
  for (const artifact::Match &m : r.matches) {
    w.begin_object()
        .field("line", m.line)
        .field("offset", m.offset)
        .field("column", m.column)
        .field("length", m.length)
        .field("text", m.text);
    for (auto [key, lines] : {std::pair{"before", &m.before}, std::pair{"after", &m.after}}) {
      w.key(key).begin_array();
      for (const artifact::ContextLine &c : *lines)
        w.begin_object().field("line", c.line).field("text", c.text).end_object();
      w.end_array();
    }
    w.end_object();
  }
  w.end_array().key("truncated").boolean(r.truncated).end_object();
  return w.take();
}

} // namespace ctxdb

namespace ctxdb {

namespace {

// The adapters read images' bytes through this (compile/artifact_reader.hpp).
class StoreArtifactReader final : public compile::ArtifactReader {
public:
  explicit StoreArtifactReader(artifact::ArtifactStore &store) : store_(store) {}
  std::string read(std::string_view artifact_id) const override { return store_.read(artifact_id); }

private:
  artifact::ArtifactStore &store_;
};

} // namespace

std::string Engine::compile(std::string_view request_json) {
  compile::Request request = compile::parse_request(request_json);
  if (request.record && request.leaf_event_id)
    throw Error(Code::kInvalidArg, "record appends at a branch's leaf; leaf_event_id compiles "
                                   "the past and cannot be recorded");
  const token::Counter &counter =
      request.token_counter ? token::counter_named(*request.token_counter, tokenizer_data_dir_)
                            : *counter_;
  compile::Sources sources{store_, log_, state_, compactions_, context_builds_, counter};
  sources.artifacts = &artifacts_; // images: their sizes, from their first bytes
  compile::Compiled c = compile::compile(sources, request);
  if (request.record) {
    json::JsonWriter w;
    w.begin_object()
        .field("type", "ContextBuilt")
        .field("actor", "ctxdb")
        .field("parent_id", c.leaf_event_id)
        .field("branch_id", c.branch_id)
        .raw_field("payload", c.record_payload)
        .end_object();
    log_.append(request.session_id, w.str());
  }
  // The memories the bundle holds count as used (memory_usage, which
  // rebuild leaves alone); a read-only handle only reads.
  if (!c.memories.included.empty() && !store_.config().read_only)
    memory::record_usage(store_, c.memories, c.memories_now);
  if (request.format == "canonical") return std::move(c.bundle);
  StoreArtifactReader reader(artifacts_);
  return compile::convert_bundle(c.bundle, request.format, &reader);
}

std::string Engine::bundle_convert(std::string_view bundle_json, std::string_view format) {
  StoreArtifactReader reader(artifacts_);
  return compile::convert_bundle(bundle_json, format, &reader);
}

void Engine::set_token_counter(std::unique_ptr<const token::Counter> counter) {
  const token::Counter &active = counter ? *counter : *configured_counter_;
  messages_.set_counter(active);
  counter_ = &active;
  host_counter_ = std::move(counter); // the previous one is no longer referenced
}

} // namespace ctxdb

// ---- Search ------------------------------------------------------------------

namespace ctxdb {

std::string Engine::search(std::string_view query, std::string_view options_json) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc =
      options_doc(parser, options_json, "search options", "json/search_options.schema.json");
  search_.catch_up(); // when it cannot, the search reads the events above the mark itself
  store::Store::ReadTransaction snapshot(store_); // the branch's path and the hits agree
  project::SearchFilters f;
  f.limit = get_int(doc, "limit", f.limit);
  if (int64_t v; !doc["since"].get(v)) f.since = v;
  if (int64_t v; !doc["until"].get(v)) f.until = v;
  if (bool v; !doc["allow_sensitive"].get(v)) f.allow_sensitive = v;
  // Snippets show no secret a compiled bundle would not.
  policy::Redactor redactor({}, true);
  std::vector<policy::RedactionHit> redactions;
  f.redact = [&](std::string &text) { return redactor.redact(text, redactions); };
  std::optional<std::string_view> session = get_string(doc, "session_id");
  std::optional<std::string_view> branch = get_string(doc, "branch_id");
  if (session) f.session_no = session_no(*session);
  if (branch) {
    if (!f.session_no) { // a branch is named by the id of the event that opened it
      std::optional<log::Event> opened = log_.find(*branch);
      if (!opened)
        throw Error(Code::kNotFound, "branch '" + std::string(*branch) +
                                         "' not found (a branch name needs session_id)");
      f.session_no = opened->session_no;
    }
    log::Branch b = resolve_branch(*f.session_no, branch);
    f.path = log_.tree().path(b.no);
  }
  std::optional<std::string_view> role = get_string(doc, "role"), type = get_string(doc, "type");
  if (role) f.types = project::SearchIndex::types_of_role(*role);
  if (type) {
    bool in_role = !role || std::find(f.types.begin(), f.types.end(), *type) != f.types.end();
    f.types = {in_role ? std::string(*type) : std::string()}; // "": no event has it
  }
  return search_.search(query, f);
}

} // namespace ctxdb

// --- Memory ------------------------------------------------------------------

namespace ctxdb {

namespace {

constexpr char kRefExists[] = "SELECT 1 FROM events WHERE id=?1 UNION ALL "
                              "SELECT 1 FROM artifacts WHERE id=?1 LIMIT 1";
constexpr char kSessionOf[] = "SELECT session_id FROM chains WHERE session_no=?";

// Memory calls append at the leaf of a session's main branch.
std::string envelope(std::string_view type, simdjson::dom::element spec, std::string payload) {
  json::JsonWriter w;
  w.begin_object().field("type", type).field("actor", get_string(spec, "actor").value_or("host"));
  if (int64_t ts; !spec["ts"].get(ts)) w.field("ts", ts);
  w.raw_field("payload", payload).end_object();
  return w.take();
}

} // namespace

void Engine::check_source_refs(simdjson::dom::element spec) {
  simdjson::dom::array refs;
  if (spec["source_refs"].get(refs)) return;
  for (simdjson::dom::element ref : refs) {
    auto q = store_.statement(kRefExists);
    store::bind_text(*q, 1, ref.get_string().value());
    if (!q->executeStep())
      throw Error(Code::kNotFound, "source_refs: '" + std::string(ref.get_string().value()) +
                                       "' names no event, message or artifact");
  }
}

std::string Engine::memory_session(simdjson::dom::element spec, const memory::Trail &trail) {
  if (auto session = get_string(spec, "session_id")) return std::string(*session);
  auto q = store_.statement(kSessionOf);
  q->bind(1, trail.last_session_no);
  return q->executeStep() ? q->getColumn(0).getString() : std::string();
}

std::string Engine::memory_written_event(simdjson::dom::element spec, std::string &memory_id) {
  memory_id = std::string(get_string(spec, "memory_id").value_or(""));
  if (memory_id.empty()) memory_id = util::new_id("mem_");
  check_source_refs(spec);
  json::JsonWriter p;
  p.begin_object().field("memory_id", memory_id);
  for (auto [key, value] : spec.get_object())
    if (key != "memory_id" && key != "actor" && key != "ts") p.key(key).element(value);
  p.end_object();
  return envelope("MemoryWritten", spec, p.take());
}

std::string Engine::memory_write(std::string_view session_id, std::string_view json) {
  simdjson::dom::parser parser;
  simdjson::dom::element spec = json::parse(parser, json, "memory");
  store::embedded_schema("json/memory_write.schema.json").validate(spec, "");
  std::string memory_id;
  std::string event = memory_written_event(spec, memory_id);
  std::string memory;
  log_.append(session_id, event, [&] { memory = memory_get(memory_id); });
  return memory;
}

std::string Engine::memory_promote(std::string_view session_id, std::string_view candidates_json) {
  session_no(session_id); // kNotFound for an unknown session, candidates or not
  simdjson::dom::parser parser;
  simdjson::dom::element doc = json::parse(parser, candidates_json, "memory candidates");
  simdjson::dom::array candidates;
  if (doc.get(candidates))
    throw Error(Code::kInvalidArg, "memory candidates: expected a JSON array of memories");
  const json::Schema &schema = store::embedded_schema("json/memory_write.schema.json");
  std::string ndjson;
  std::vector<std::string> ids;
  size_t i = 0;
  for (simdjson::dom::element c : candidates) {
    std::string at = "[" + std::to_string(i++) + "]";
    schema.validate(c, at);
    try {
      ndjson += memory_written_event(c, ids.emplace_back()) + "\n";
    } catch (const Error &e) {
      throw Error(e.code(), at + ": " + e.what());
    }
  }
  json::JsonWriter w;
  w.begin_array();
  if (!ids.empty())
    log_.append_batch(session_id, ndjson, [&] {
      for (const std::string &id : ids) w.raw(memory_get(id));
    });
  w.end_array();
  return w.take();
}

std::string Engine::memory_update(std::string_view memory_id, std::string_view json) {
  simdjson::dom::parser parser;
  simdjson::dom::element spec = json::parse(parser, json, "memory update");
  store::embedded_schema("json/memory_update.schema.json").validate(spec, "");
  std::optional<memory::Trail> trail = memories_.trail(memory_id);
  if (!trail) throw Error(Code::kNotFound, "memory '" + std::string(memory_id) + "' not found");
  // A purge leaves no event to append after (a tombstone's is refused by
  // the projection, naming its event).
  if (trail->forgotten_mode == "purge")
    throw Error(Code::kConflict, "memory '" + std::string(memory_id) +
                                     "' was forgotten (purge): it cannot be updated");
  std::string session = memory_session(spec, *trail);
  check_source_refs(spec);
  json::JsonWriter p;
  p.begin_object().field("memory_id", memory_id);
  for (auto [key, value] : spec.get_object())
    if (key != "session_id" && key != "actor" && key != "ts") p.key(key).element(value);
  p.end_object();
  std::string memory;
  log_.append(session, envelope("MemoryUpdated", spec, p.take()),
              [&] { memory = memory_get(memory_id); });
  return memory;
}

std::string Engine::memory_forget(std::string_view memory_id, std::string_view options_json) {
  simdjson::dom::parser parser;
  simdjson::dom::element spec =
      options_doc(parser, options_json, "forget options", "json/memory_forget.schema.json");
  std::string mode(get_string(spec, "mode").value_or("tombstone"));
  std::optional<memory::Trail> trail = memories_.trail(memory_id);
  if (!trail) throw Error(Code::kNotFound, "memory '" + std::string(memory_id) + "' not found");
  if (trail->forgotten_mode == "purge" || trail->forgotten_mode == mode)
    throw Error(Code::kConflict, "memory '" + std::string(memory_id) + "' was forgotten (" +
                                     trail->forgotten_mode + ") already");
  std::string session = memory_session(spec, *trail);
  std::string event_id;
  if (mode == "purge") {
    event_id = append_purges(memory_id, spec, session, trail->event_ids);
    // The WAL may still hold page images from before the purge; a
    // truncating checkpoint copies the purged pages into the file and
    // empties it. A reader holding an old snapshot keeps it from
    // completing: then the WAL is reset by a later checkpoint (at the
    // latest, the last close). The purge is committed either way: that is
    // not its failure.
    store_.truncate_wal();
  } else {
    json::JsonWriter p;
    p.begin_object().field("memory_id", memory_id).field("mode", mode);
    if (auto reason = get_string(spec, "reason")) p.field("reason", *reason);
    p.end_object();
    event_id = log_.append(session, envelope("MemoryDeleted", spec, p.take())).id;
  }
  json::JsonWriter w;
  w.begin_object()
      .field("memory_id", memory_id)
      .field("mode", mode)
      .field("event_id", event_id)
      .key("purged_event_ids")
      .begin_array();
  if (mode == "purge")
    for (const std::string &id : trail->event_ids) w.value(id);
  w.end_array().end_object();
  return w.take();
}

std::string Engine::append_purges(std::string_view memory_id, simdjson::dom::element spec,
                                  const std::string &session,
                                  const std::vector<std::string> &trail) {
  // A purge proves only payloads of its own chain (memory/purger.hpp):
  // the memory's events by session, the forget's session first.
  std::vector<std::pair<std::string, std::vector<log::Event>>> chains{{session, {}}};
  for (const std::string &id : trail) {
    std::optional<log::Event> e = log_.find(id);
    if (!e)
      throw Error(Code::kCorrupt, "memory '" + std::string(memory_id) + "': its event '" + id +
                                      "' is missing from the log");
    auto chain = std::find_if(chains.begin(), chains.end(),
                              [&](const auto &c) { return c.first == e->session_id; });
    if (chain == chains.end()) chain = chains.insert(chains.end(), {e->session_id, {}});
    chain->second.push_back(std::move(*e));
  }
  std::string first_id;
  log_.write_batch([&](log::EventLog::Batch &batch) {
    for (const auto &[chain_session, events] : chains) {
      bool first = first_id.empty();
      json::JsonWriter p;
      p.begin_object().field("memory_id", memory_id).field("mode", "purge");
      // The first lists the whole trail and ends the memory; each lists
      // and proves its own chain's events.
      p.key("purged_event_ids").begin_array();
      if (first)
        for (const std::string &id : trail) p.value(id);
      else
        for (const log::Event &e : events) p.value(e.id);
      p.end_array().key("purged").begin_array();
      for (const log::Event &e : events)
        p.begin_object()
            .field("event_id", e.id)
            .field("payload_hash", util::to_hex(e.payload_hash))
            .end_object();
      p.end_array();
      if (auto reason = get_string(spec, "reason")) p.field("reason", *reason);
      p.end_object();
      const log::Event &placed =
          batch.append(chain_session, envelope("MemoryDeleted", spec, p.take()));
      if (first) first_id = placed.id;
    }
  });
  return first_id;
}

std::string Engine::memory_get(std::string_view memory_id) { return memories_.get_json(memory_id); }

std::string Engine::memory_list(std::string_view query_json) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc =
      options_doc(parser, query_json, "memory list query", "json/memory_list_query.schema.json");
  memory::ListQuery q;
  auto opt = [&](const char *key) -> std::optional<std::string> {
    if (auto v = get_string(doc, key)) return std::string(*v);
    return std::nullopt;
  };
  q.scope = opt("scope");
  q.scope_id = opt("scope_id");
  q.kind = opt("kind");
  bool all = false;
  if (!doc["all_versions"].get(all)) q.all_versions = all;
  if (int64_t t; !doc["as_of"].get(t)) q.as_of = t;
  q.limit = get_int(doc, "limit", q.limit);
  return memories_.list_json(q);
}

std::string Engine::memory_retrieve(std::string_view query_json) {
  memory::Query q = memory::parse_query(query_json);
  const token::Counter &counter = *counter_; // the budget counts as a compile's does
  memory::Retrieval r;
  {
    store::Store::ReadTransaction snapshot(store_);
    r = memory::retrieve(store_, q, counter);
  }
  if (q.record_usage && !store_.config().read_only) memory::record_usage(store_, r, q.now);
  // What retrieval returns goes to a prompt: no secret a compiled bundle
  // would not show.
  policy::Redactor redactor({}, true);
  std::vector<policy::RedactionHit> redactions;
  for (memory::Retrieved &m : r.included) redactor.redact(m.content, redactions);
  return memory::to_json(r, q, counter.name());
}

} // namespace ctxdb

// ---- Compaction -------------------------------------------------------------

namespace ctxdb {

// Compaction counts with the handle's counter, as appends and compiles do:
// should_compact reads the counts appends stored, and a plan's budget must
// mean what a compile's means.
compile::Sources Engine::compile_sources() {
  compile::Sources s{store_, log_, state_, compactions_, context_builds_, *counter_};
  s.artifacts = &artifacts_; // images: their sizes, as a compile reads them
  return s;
}

std::string Engine::compact_should(std::string_view session_id, std::string_view policy_json) {
  compact::Policy policy = compact::parse_policy(policy_json);
  compile::Sources src = compile_sources();
  return compact::should_compact(src, std::string(session_id), policy);
}

std::string Engine::compact_plan(std::string_view session_id, std::string_view policy_json) {
  compact::Policy policy = compact::parse_policy(policy_json);
  compile::Sources src = compile_sources();
  return compact::to_json(compact::plan(src, std::string(session_id), policy));
}

std::string Engine::compact_commit(std::string_view session_id, std::string_view plan_json,
                                   std::string_view summary_json) {
  compile::Sources src = compile_sources();
  return compact::commit(src, std::string(session_id), plan_json, summary_json);
}

std::string Engine::compact(std::string_view session_id, std::string_view policy_json,
                            const compact::Summarizer *host) {
  compact::Policy policy = compact::parse_policy(policy_json);
  compile::Sources src = compile_sources();
  return compact::compact(src, std::string(session_id), policy, host);
}

std::string Engine::branch_summarize(std::string_view session_id, std::string_view from_leaf,
                                     std::string_view to_event) {
  compile::Sources src = compile_sources();
  return compact::summarize_branch(src, std::string(session_id), std::string(from_leaf),
                                   std::string(to_event));
}

std::string Engine::compactions(std::string_view session_id,
                                std::optional<std::string_view> branch) {
  compile::Sources src = compile_sources();
  std::optional<std::string> b;
  if (branch) b = std::string(*branch);
  return compact::list(src, std::string(session_id), b);
}

} // namespace ctxdb
