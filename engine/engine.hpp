// engine.hpp — one open database: the store, the event log and the
// projections it feeds, behind calls that take and return JSON text.
//
// This is what capi/ wraps. It is not thread-safe; the C handle serializes
// calls on it.
#pragma once

#include "artifact/artifact_store.hpp"
#include "artifact/transfer.hpp"
#include "artifact/verify.hpp"
#include "compact/compactor.hpp"
#include "compile/compiler.hpp"
#include "log/event_log.hpp"
#include "log/spill.hpp"
#include "memory/memories.hpp"
#include "memory/purger.hpp"
#include "project/compactions.hpp"
#include "project/context_builds.hpp"
#include "project/files.hpp"
#include "project/import_sources.hpp"
#include "project/messages.hpp"
#include "project/payload_cache.hpp"
#include "project/search_index.hpp"
#include "project/sessions.hpp"
#include "project/state.hpp"
#include "project/stats.hpp"
#include "project/tool_calls.hpp"
#include "store/store.hpp"
#include "transcript/importer.hpp"

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ctxdb {

class Engine {
public:
  Engine(const std::string &path, std::string_view config_json);

  std::string session_create(std::string_view json);
  std::string session_get(std::string_view id);
  std::string session_list();
  bool session_exists(std::string_view id);

  std::string append(std::string_view session_id, std::string_view json);
  std::string append_batch(std::string_view session_id, std::string_view ndjson);
  // A provider's response (engine/provider/) appended as the
  // AssistantMessageCreated it means, in one transaction
  // (options: response_record_options.schema.json); returns the stored
  // event. The event id comes from the response's id, so a retry returns
  // the stored event, and other content under that id is kConflict.
  std::string record_response(std::string_view session_id, std::string_view options_json,
                              std::string_view response);
  // Imports the export stream: events, and the artifact records after
  // them (artifact/transfer.hpp), in one transaction.
  std::string import(std::string_view ndjson);
  // Another agent's session files (Claude Code, Codex, Pi;
  // engine/transcript/importer.hpp): options
  // transcript_import_options.schema.json, report
  // transcript_import_result.schema.json. One transaction per file; a
  // file that fails is reported and rolled back, the others go on. A
  // missing path is kNotFound, a read-only handle kReadOnly.
  std::string transcript_import(std::string_view options_json);
  // The export stream a page at a time (ctxdb_export): the events of one
  // session (or of all), then the records of the artifacts they refer to
  // (every artifact for all). A page may hold fewer than limit rows; an
  // empty one is the end.
  struct ExportState {
    std::optional<std::string> session_id;
    int64_t cursor = 0; // the last seq (one session) or pos (all) given
    bool events_done = false;
    std::unique_ptr<artifact::Exporter> artifacts; // once the events are out
  };
  std::vector<std::string> export_page(ExportState &state, int64_t limit);
  std::string event_get(std::string_view id);
  // The verify report (verify_report.schema.json): one session's chain,
  // or every chain and the artifacts (quick).
  std::string verify(std::optional<std::string_view> session_id);
  // The same with options (verify_options.schema.json): which artifact
  // check, and an anchor the file must still extend.
  std::string verify_with(std::string_view options_json);
  // A digest of the whole history to keep outside the file (log/anchor.hpp;
  // options anchor_options.schema.json, result anchor.schema.json).
  std::string anchor(std::string_view options_json);
  // Replays the log into every derived table (options: rebuild_options.schema.json).
  std::string rebuild(std::string_view options_json);
  // Merges each full-text index (memories, session search) into one
  // segment (store/fts_merge.hpp; options: optimize_options.schema.json,
  // report: optimize_report.schema.json).
  std::string optimize(std::string_view options_json);

  // The session tree (DESIGN §3). A branch is named by id, or by name
  // when the name is unique in its session; "main" or none is main.
  std::string branch_fork(std::string_view session_id, std::string_view spec_json);
  std::string branch_list(std::string_view session_id);
  std::string event_children(std::string_view event_id);
  // The number of the branch a path read names: resolved once, by the
  // read's first page, so that later pages follow that branch whatever
  // forks take its name meanwhile.
  int64_t path_branch(std::string_view session_id, std::optional<std::string_view> branch);
  // One page of that branch's path root→leaf (stored-event JSON rows)
  // after seq `cursor`, which is advanced past the page.
  std::vector<std::string> path_page(std::string_view session_id, int64_t branch_no,
                                     int64_t &cursor, int64_t limit);
  std::vector<std::string> path_page(std::string_view session_id,
                                     std::optional<std::string_view> branch, int64_t &cursor,
                                     int64_t limit) {
    return path_page(session_id, path_branch(session_id, branch), cursor, limit);
  }

  // One page of stored-event JSON rows for a streaming iterator. `cursor`
  // is the seq (one session) or pos (all events) of the last row returned,
  // and is advanced past this page.
  std::vector<std::string> events_page(std::optional<std::string_view> session_id, int64_t &cursor,
                                       int64_t to_seq, int64_t limit);

  // Views of one branch of a session: `branch` is a branch id or a name
  // unique in the session, the main branch when nullopt. Each is a JSON
  // array over the branch's path root→leaf (schema/json/<name>.schema.json).
  // The messages: role, typed blocks, token count.
  std::string messages(std::string_view session_id, std::optional<std::string_view> branch);
  // The tool calls, each with its status and result as seen from the branch.
  std::string tool_calls(std::string_view session_id, std::optional<std::string_view> branch);
  // Per file: last read, last write and the change summaries.
  std::string files(std::string_view session_id, std::optional<std::string_view> branch);

  // The agent state (state.schema.json) of a session's branch, or right
  // after the event `at_event_id` on that event's branch. Giving both is
  // kInvalidArg; an unknown session, branch or event is kNotFound, an event
  // of another session kInvalidArg.
  std::string state(std::string_view session_id, std::optional<std::string_view> branch,
                    std::optional<std::string_view> at_event_id);
  // state() for a query (state_query.schema.json): {"branch_id"?, "at"?};
  // empty text is {}, main's current state.
  std::string state_query(std::string_view session_id, std::string_view query_json);
  // One session's stats (stats.schema.json), or every session's totals.
  std::string stats(std::optional<std::string_view> session_id);

  // The artifact store (engine/artifact/). put stores bytes with their
  // meta (artifact_meta.schema.json; empty text is {}) and returns the
  // artifact (artifact.schema.json), as info does. An id that cannot be an
  // artifact's is kInvalidArg, one not stored kNotFound.
  std::string artifact_put(std::string_view bytes, std::string_view meta_json);
  // A streaming put with the same meta: write() pieces, then
  // artifact_finish(). Holds the write transaction until it finishes or is
  // destroyed (a rollback).
  artifact::ArtifactStore::Writer artifact_writer(std::string_view meta_json);
  // Finishes such a put: the artifact as artifact_info gives it, read
  // before the put commits (so an error means nothing was stored).
  std::string artifact_finish(artifact::ArtifactStore::Writer &writer);
  std::string artifact_info(std::string_view id);
  // Every artifact, or those an event of the session refers to, oldest
  // first: a JSON array of artifact.schema.json objects.
  std::string artifact_list(std::optional<std::string_view> session_id);
  // The bytes [offset, offset+length); length -1 is to the end.
  std::string artifact_read(std::string_view id, int64_t offset, int64_t length);
  // artifact_read into memory alloc(size) returns (the C ABI's malloc'd
  // buffer): decoded straight into it. Returns the size.
  size_t artifact_read_into(std::string_view id, int64_t offset, int64_t length,
                            const std::function<char *(size_t)> &alloc);
  // Lines first .. first+count-1 (1-based) as text; count -1 is to the end.
  std::string artifact_lines(std::string_view id, int64_t first, int64_t count);
  // spec (artifact_preview_spec.schema.json) -> artifact_preview.schema.json.
  std::string artifact_preview(std::string_view id, std::string_view spec_json);
  // options (artifact_search_options.schema.json) -> artifact_search.schema.json.
  std::string artifact_search(std::string_view id, std::string_view pattern,
                              std::string_view options_json);

  // The context compiler (DESIGN §5): a compile request
  // (compile_request.schema.json) -> a bundle in the request's format
  // (bundle.schema.json when canonical). With "record", a ContextBuilt
  // event is appended at the branch's leaf (kConflict when another writer
  // moved the leaf meanwhile: compile again).
  std::string compile(std::string_view request_json);
  // A canonical bundle in another format (compile/adapters.hpp).
  std::string bundle_convert(std::string_view bundle_json, std::string_view format);

  // The token counter behind the counts the messages projection caches at
  // append and those a compile makes (rows counted by another counter are
  // recounted at compile). nullptr restores the config's token_counter (the
  // built-in estimator when it names none). A
  // count() that throws fails the call that needed the count, which then
  // changes nothing.
  void set_token_counter(std::unique_ptr<const token::Counter> counter);
  const token::Counter &token_counter() const { return *counter_; }
  // Search of sessions (project/search_index.hpp): the hits for `query`
  // (search_result.schema.json) under the filters of options
  // (search_options.schema.json; empty text is {}). An empty query is
  // kInvalidArg, an unknown session or branch kNotFound.
  std::string search(std::string_view query, std::string_view options_json);
  // --- Memory (DESIGN §7; engine/memory/) ---------------------------------
  // Writes, updates and deletions are Memory* events; each returns the
  // memory (memory.schema.json) as it is after the call.
  // write: memory_write.schema.json, appended to the session's main branch.
  // Each source ref must name an event or an artifact of this database.
  std::string memory_write(std::string_view session_id, std::string_view json);
  // update: memory_update.schema.json -> the new version.
  std::string memory_update(std::string_view memory_id, std::string_view json);
  // forget: memory_forget.schema.json (mode tombstone or purge) ->
  // memory_forget_result.schema.json.
  std::string memory_forget(std::string_view memory_id, std::string_view options_json);
  std::string memory_get(std::string_view memory_id);
  // memory_list_query.schema.json -> a JSON array of memories.
  std::string memory_list(std::string_view query_json);
  // memory_query.schema.json -> memory_retrieval.schema.json; records the
  // included memories' usage unless the query says not to or the handle is
  // read-only. (The compiler calls memory::retrieve() itself.)
  std::string memory_retrieve(std::string_view query_json);
  // A JSON array of memory_write objects (a compaction plan's memory
  // candidates, accepted) written in one transaction -> the memories.
  std::string memory_promote(std::string_view session_id, std::string_view candidates_json);
  // --- Tokenizer (token/bpe.hpp) ---
  // The config's "tokenizer_data_dir" ("" when unset): where the exact
  // encodings' rank files are; CTXDB_TOKENIZER_DATA when unset.
  const std::string &tokenizer_data_dir() const { return tokenizer_data_dir_; }
  // ---- Compaction (DESIGN §6; engine/compact/) ----------------------------
  // policy_json is compaction_policy.schema.json (empty text is {}).
  // Whether to compact (compaction_advice.schema.json); reads cached counts.
  std::string compact_should(std::string_view session_id, std::string_view policy_json);
  // The plan (compaction_plan.schema.json): the cut, the range, the
  // previous summary, the obligations, memory candidates, the transcript.
  std::string compact_plan(std::string_view session_id, std::string_view policy_json);
  // Checks a host's summary for a plan it made and commits it
  // (compaction_result.schema.json), or records a CompactionFailed and
  // throws kCheckFailed naming the failed checks.
  std::string compact_commit(std::string_view session_id, std::string_view plan_json,
                             std::string_view summary_json);
  // plan → summarize (host, or the built-in extractive summarizer when
  // null) → check → commit.
  std::string compact(std::string_view session_id, std::string_view policy_json,
                      const compact::Summarizer *host);
  // A summary of the path abandoned at from_leaf, appended at to_event
  // (branch_summary.schema.json).
  std::string branch_summarize(std::string_view session_id, std::string_view from_leaf,
                               std::string_view to_event);
  // The compactions on a branch's path (compactions.schema.json).
  std::string compactions(std::string_view session_id, std::optional<std::string_view> branch);

private:
  // The MemoryWritten event of a memory_write object, its memory id set.
  std::string memory_written_event(simdjson::dom::element spec, std::string &memory_id);
  // kNotFound unless every source ref names an event or an artifact.
  void check_source_refs(simdjson::dom::element spec);
  // The session a memory call appends to: the spec's, else the one of the
  // memory's last event.
  std::string memory_session(simdjson::dom::element spec, const memory::Trail &trail);
  // Appends the purge of a memory's events (its trail), one MemoryDeleted
  // per chain holding them, in one transaction; returns the first's id.
  std::string append_purges(std::string_view memory_id, simdjson::dom::element spec,
                            const std::string &session, const std::vector<std::string> &trail);

private:
  std::string verify_report(std::optional<std::string_view> session_id,
                            artifact::VerifyMode artifacts, const simdjson::dom::element *anchor);
  compile::Sources compile_sources();
  template <class View>
  std::string branch_view(View &view, std::string_view session_id,
                          std::optional<std::string_view> branch);
  // The session's chain number, or kNotFound.
  int64_t session_no(std::string_view session_id);
  log::Branch resolve_branch(int64_t session_no, std::optional<std::string_view> branch);
  std::vector<std::string> to_json_rows(std::vector<log::Event> &events);

  store::Store store_;
  std::unique_ptr<const token::Counter> host_counter_;        // set_token_counter's, if any
  const token::Counter *counter_ = &token::default_counter(); // the active one
  // The config's token_counter (the estimator when it names none): what
  // set_token_counter(nullptr) restores.
  const token::Counter *configured_counter_ = &token::default_counter();
  log::EventLog log_;
  project::PayloadCache payloads_; // shared, so each payload is parsed once
  project::Sessions sessions_;
  project::State state_;
  project::Stats stats_;
  project::Messages messages_;
  project::ToolCalls tool_calls_;
  project::Files files_;
  project::Compactions compactions_;
  project::ContextBuilds context_builds_;
  project::ImportSources import_sources_;
  project::SearchIndex search_;
  memory::Memories memories_;
  memory::Purger purger_; // an observer of the log, not a projection
  artifact::ArtifactStore artifacts_;
  log::Spiller spiller_; // config "spill"; the log calls it at append
  // Every projection, in the order the log feeds them.
  std::vector<project::Projection *> projections_;
  std::string tokenizer_data_dir_; // config "tokenizer_data_dir"
  // The files transcript_import read to their end, by size and mtime: a
  // --follow's passes read only the files that changed.
  transcript::SeenFiles seen_transcripts_;
};

} // namespace ctxdb
