// transfer.hpp — artifacts in the export stream (ctxdb_export, ctxdb_import).
//
// An export is NDJSON: the stored events, then, for each artifact they
// refer to, one "artifact" record and its chunks as "artifact_chunk"
// records (schema/json/export_artifact*.schema.json, format 1). A chunk
// record carries the chunk as stored (a zstd frame, base64) with the
// SHA-256 of those bytes, so an export decodes nothing and a line stays
// bounded by the chunk size. An import checks every chunk's hash, decodes
// it, and stores the content through a Writer, whose SHA-256 of the whole
// must be the artifact's id: any mismatch is kCorrupt, and the import's
// transaction (events included) rolls back.
#pragma once

#include "artifact/artifact_store.hpp"

#include <simdjson.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ctxdb::artifact {

// The record format this library writes and reads.
inline constexpr int64_t kRecordFormat = 1;

// The records of a list of artifacts, a page at a time.
class Exporter {
public:
  // infos: the artifacts, each with the references to export.
  Exporter(ArtifactStore &store, std::vector<Info> infos);

  // Appends up to max_lines records to out (at least one while any are
  // left); false once every record was given.
  bool next(std::vector<std::string> &out, size_t max_lines);

private:
  ArtifactStore &store_;
  std::vector<Info> infos_;
  size_t artifact_ = 0;
  std::optional<Layout> layout_; // of infos_[artifact_], once its header is out
  size_t chunk_ = 0;
};

// Takes the artifact records of an import, in the import's transaction.
class Importer {
public:
  explicit Importer(ArtifactStore &store);
  ~Importer();
  Importer(const Importer &) = delete;
  Importer &operator=(const Importer &) = delete;

  // Stores what an artifact record says; false for a line that is not
  // one (an event). Throws kCorrupt for a hash that does not match or an
  // artifact cut short, kSchema for a newer format, kInvalidArg for a
  // record that breaks its schema.
  bool take(std::string_view line);
  // After the last line: kCorrupt when an artifact is cut short.
  void finish();

private:
  struct Open; // the artifact whose chunks are arriving
  void open_artifact(simdjson::dom::element rec);
  void add_chunk(simdjson::dom::element rec);
  void close_artifact();

  ArtifactStore &store_;
  simdjson::dom::parser parser_;
  ChunkDecoder decoder_;
  std::unique_ptr<Open> open_;
};

} // namespace ctxdb::artifact
