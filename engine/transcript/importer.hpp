// importer.hpp — other agents' session files (Claude Code, Codex, Pi)
// imported into the log: the files of a path found, each read by its
// format's reader (transcript.hpp) and appended in one transaction, and
// what each file has given kept by the import_sources projection
// (project/import_sources.hpp), so that a later pass appends only what
// the file gained.
//
// Per file, a pass:
//   1. reads the file whole (the readers take its bytes);
//   2. looks up what earlier passes imported from it: the greatest line,
//      the bytes read (end_offset) and their SHA-256. A file shorter than
//      that, or whose first end_offset bytes hash otherwise, changed in its
//      middle: reported "changed", nothing merged. A file of exactly those
//      bytes is "unchanged" and not parsed;
//   3. parses it with resume_after_line = that line, drops the drafts that
//      end at or before it, and in one write transaction creates the
//      sessions that are missing and appends the rest, the last one
//      carrying the pass's end_offset and prefix_sha256. A failure rolls
//      the file back and is reported; the next file goes on.
//
// Memory: one file at a time. Its bytes are released once hashed, before
// the drafts are appended, and each draft once placed; what the file's
// transaction writes is held by the projections until it commits, as for
// any append. So a pass holds what one file needs (about four times its
// size, bench/transcript_import.cpp), whatever the size of the tree: it
// is bounded by the largest file, not by the tree.
#pragma once

#include "log/event_log.hpp"
#include "project/import_sources.hpp"
#include "transcript/transcript.hpp"

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace ctxdb::transcript {

struct ImportOptions {
  Format format = Format::kPi;
  std::string path; // a session file, or a folder as the agent keeps it
  bool final = true;
};

// transcript_import_options.schema.json; a bad format is kInvalidArg.
ImportOptions parse_import_options(std::string_view json);

// The session files of `path` for the format, sorted by path: the file
// itself, or those of the folder tree the agent keeps (see importer.cpp).
// A path that does not exist is kNotFound.
std::vector<std::string> session_files(Format format, const std::string &path);

struct FileReport {
  std::string file;
  std::string session_id; // the file's own session ("" when never read)
  std::string status;     // "imported" | "unchanged" | "failed" | "changed"
  int64_t events = 0;     // events appended by this pass
  int64_t lines = 0;      // lines read past those imported before
  std::map<std::string, int64_t> unknown;
  std::string error;            // failed / changed: why
  std::string active_branch_id; // the source's active leaf's branch, when not main
};

struct ImportReport {
  Format format = Format::kPi;
  std::vector<FileReport> sessions;
  // transcript_import_result.schema.json
  std::string to_json() const;
  int64_t count(std::string_view status) const;
};

// What one process has seen of the files it imported: a file whose size
// and modification time are those of a pass that read it to its end is not
// read again, so a --follow over a large folder reads only what changed.
struct FileStamp {
  int64_t size = 0;
  int64_t mtime_ns = 0;
  int64_t end_offset = 0;
};
using SeenFiles = std::map<std::string, FileStamp, std::less<>>;

class Importer {
public:
  Importer(log::EventLog &log, project::ImportSources &sources, SeenFiles &seen)
      : log_(log), sources_(sources), seen_(seen) {}

  ImportReport run(const ImportOptions &options);
  FileReport import_file(Format format, const std::string &file, bool final);

private:
  // One pass over a file: read, checked against what was imported, parsed
  // and appended; fills the report (an error is thrown).
  void pass(Format format, const std::string &file, bool final,
            const std::optional<project::ImportSource> &before, FileReport &report);
  // Appends the drafts of a pass in one transaction, the last placement
  // carrying the pass's end; fills report.events and
  // report.active_branch_id.
  void append(Format format, Parsed &parsed, std::vector<Draft> &drafts, int64_t end_offset,
              const std::string &prefix_sha256, FileReport &report);

  log::EventLog &log_;
  project::ImportSources &sources_;
  SeenFiles &seen_;
};

} // namespace ctxdb::transcript
