#include "transcript/importer.hpp"

#include "transcript/claude_code.hpp"
#include "transcript/codex.hpp"

#include "store/store.hpp"
#include "util/sha256.hpp"
#include "json/json_writer.hpp"
#include "json/parse.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <set>

namespace ctxdb::transcript {

namespace fs = std::filesystem;

std::optional<Format> format_named(std::string_view name) {
  if (name == "claude-code") return Format::kClaudeCode;
  if (name == "codex") return Format::kCodex;
  if (name == "pi") return Format::kPi;
  return std::nullopt;
}

std::string_view format_name(Format f) {
  switch (f) {
  case Format::kClaudeCode: return "claude-code";
  case Format::kCodex: return "codex";
  case Format::kPi: return "pi";
  }
  return "?";
}

ImportOptions parse_import_options(std::string_view json) {
  simdjson::dom::parser parser;
  simdjson::dom::element o = json::parse(parser, json, "transcript import options");
  // The format first, with the names it may have: the schema's enum would
  // say only that it is not one of them.
  std::string_view name;
  if (o.is_object() && !o["format"].get(name) && !format_named(name))
    throw Error(Code::kInvalidArg, "transcript import options: unknown format '" +
                                       std::string(name) + "' (claude-code, codex or pi)");
  store::embedded_schema("json/transcript_import_options.schema.json")
      .validate(o, "transcript import options");
  ImportOptions options;
  options.format = *format_named(o["format"].get_string().value());
  options.path = std::string(o["path"].get_string().value());
  if (o["final"].get(options.final)) options.final = true; // absent: the files are complete
  return options;
}

namespace {

// --- the files of a tree ----------------------------------------------------

bool ends_with_jsonl(const fs::path &p) { return p.extension() == ".jsonl"; }

// Whether a .jsonl file of an agent's folder is a session: the Claude Code
// and Codex readers say which of their files are (claude_code.hpp,
// codex.hpp); Pi keeps every session in sessions/<encoded cwd>/<ts>_<id>.jsonl.
bool is_session_file(Format format, const fs::path &p) {
  if (!ends_with_jsonl(p)) return false;
  switch (format) {
  case Format::kClaudeCode:
    return claude_code_file(p.string()).kind != ClaudeCodeFile::kNotASession;
  case Format::kCodex: return is_codex_rollout(p.string());
  case Format::kPi: return true;
  }
  return false;
}

// The folder of an agent's home that holds its sessions: walking
// ~/.claude reads projects/ only (not its history.jsonl of prompts), and
// ~/.codex or ~/.pi/agent their sessions/.
fs::path sessions_root(Format format, const fs::path &dir) {
  fs::path sub = dir / (format == Format::kClaudeCode ? "projects" : "sessions");
  std::error_code ec;
  return fs::is_directory(sub, ec) ? sub : dir;
}

} // namespace

std::vector<std::string> session_files(Format format, const std::string &path) {
  std::error_code ec;
  fs::file_status st = fs::status(path, ec);
  if (!fs::exists(st))
    throw Error(Code::kNotFound, "transcript import: path '" + path + "' does not exist");
  fs::path given = fs::canonical(path, ec);
  if (ec) throw Error(Code::kIo, "transcript import: '" + path + "': " + ec.message());
  if (fs::is_regular_file(st)) return {given.string()};
  if (!fs::is_directory(st))
    throw Error(Code::kInvalidArg,
                "transcript import: '" + path + "' is neither a file nor a folder");
  std::vector<std::string> files;
  fs::recursive_directory_iterator it(sessions_root(format, given),
                                      fs::directory_options::skip_permission_denied, ec);
  if (ec) throw Error(Code::kIo, "transcript import: cannot list '" + path + "': " + ec.message());
  for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec)
      throw Error(Code::kIo, "transcript import: cannot list '" + path + "': " + ec.message());
    if (it->is_regular_file(ec) && is_session_file(format, it->path()))
      files.push_back(it->path().string());
  }
  // Path order: stable across runs, and a Claude Code session's file
  // (<session>.jsonl: '.' sorts before '/') before its subagents' files.
  std::sort(files.begin(), files.end());
  return files;
}

namespace {

// --- one file ----------------------------------------------------------------

// The file's bytes as they are now (a writer may append meanwhile: what it
// appends after the size is read waits for the next pass).
std::string read_file(const std::string &file) {
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  auto fail = [&](const char *what) {
    int err = errno;
    if (fd >= 0) ::close(fd);
    return Error(Code::kIo, file + ": cannot " + what + ": " + std::strerror(err));
  };
  if (fd < 0) throw fail("open");
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw fail("stat");
  std::string bytes(size_t(st.st_size), '\0');
  size_t got = 0;
  while (got < bytes.size()) {
    ssize_t n = ::read(fd, bytes.data() + got, bytes.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw fail("read");
    if (n == 0) break; // truncated meanwhile: the prefix check will say so
    got += size_t(n);
  }
  ::close(fd);
  bytes.resize(got);
  return bytes;
}

Parsed parse(Format format, std::string_view bytes, const ParseOptions &options) {
  switch (format) {
  case Format::kClaudeCode: return parse_claude_code(bytes, options);
  case Format::kCodex: return parse_codex(bytes, options);
  case Format::kPi: return parse_pi(bytes, options);
  }
  throw Error(Code::kInternal, "transcript import: no reader for the format");
}

// An event or session_create JSON with end_offset and prefix_sha256 added
// to its payload.provenance: what the import_sources projection reads the
// end of a pass from.
// A payload without one (a session's creation may have none) gets one
// naming the file.
struct PassEnd {
  std::string_view format;
  const std::string &file;
  int64_t end_offset;
  const std::string &prefix_sha256;
};

void write_provenance(json::JsonWriter &w, const simdjson::dom::object *provenance,
                      const PassEnd &end) {
  w.key("provenance").begin_object();
  if (!provenance) w.field("format", end.format).field("file", end.file);
  if (provenance)
    for (auto [k, v] : *provenance)
      if (k != "end_offset" && k != "prefix_sha256") w.key(k).element(v);
  w.field("end_offset", end.end_offset).field("prefix_sha256", end.prefix_sha256).end_object();
}

std::string with_pass_end(const std::string &json_text, const PassEnd &end,
                          const std::string &where) {
  simdjson::dom::parser parser;
  simdjson::dom::object event, payload, provenance;
  if (json::parse(parser, json_text, where).get(event) || event["payload"].get(payload))
    throw Error(Code::kInternal, where + ": the reader's event has no payload object");
  bool has_provenance = !payload["provenance"].get(provenance);
  json::JsonWriter w(json_text.size() + 128);
  w.begin_object();
  for (auto [key, value] : event) {
    if (key != "payload") {
      w.key(key).element(value);
      continue;
    }
    w.key("payload").begin_object();
    for (auto [pkey, pvalue] : payload) {
      if (pkey != "provenance")
        w.key(pkey).element(pvalue);
      else if (has_provenance)
        write_provenance(w, &provenance, end);
    }
    if (!has_provenance) write_provenance(w, nullptr, end);
    w.end_object();
  }
  w.end_object();
  return w.take();
}

// What a pass places, in order: a session's creation right before its
// first event (a subagent's parent session, and the event that spawned
// it, are placed before it), then the sessions the file holds that have
// no event yet.
struct Placement {
  const std::string *session_id;
  std::string *json;
  bool create;
  int64_t line; // the source line errors name
};

} // namespace

FileReport Importer::import_file(Format format, const std::string &file, bool final) {
  FileReport report;
  report.file = file;
  std::optional<project::ImportSource> before = sources_.get(file);
  if (before) report.session_id = before->session_id;
  try {
    struct stat st {};
    if (::stat(file.c_str(), &st) != 0)
      throw Error(Code::kIo, file + ": cannot stat: " + std::strerror(errno));
    FileStamp stamp{int64_t(st.st_size),
                    int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec, 0};
    if (auto seen = seen_.find(file);
        before && seen != seen_.end() && seen->second.size == stamp.size &&
        seen->second.mtime_ns == stamp.mtime_ns && seen->second.end_offset == before->end_offset &&
        before->end_offset == stamp.size) {
      report.status = "unchanged"; // as the pass that read it to its end left it
      return report;
    }
    pass(format, file, final, before, report);
    if (std::optional<project::ImportSource> after = sources_.get(file);
        after && after->end_offset == stamp.size && report.status != "changed") {
      stamp.end_offset = after->end_offset;
      seen_[file] = stamp;
    }
  } catch (const Error &e) {
    report.status = "failed";
    report.error = e.what();
  } catch (const SQLite::Exception &e) {
    report.status = "failed";
    report.error = file + ": " + store::to_error(e).what();
  } catch (const std::bad_alloc &) {
    report.status = "failed";
    report.error = file + ": out of memory";
  }
  return report;
}

void Importer::pass(Format format, const std::string &file, bool final,
                    const std::optional<project::ImportSource> &before, FileReport &report) {
  std::string bytes = read_file(file);
  if (before && before->end_offset > 0) {
    auto end = size_t(before->end_offset);
    if (bytes.size() < end || util::to_hex(util::sha256(std::string_view(bytes).substr(0, end))) !=
                                  before->prefix_sha256) {
      report.status = "changed";
      report.error = file + ": the file changed within the " + std::to_string(end) +
                     " bytes imported before (up to line " + std::to_string(before->last_line) +
                     "); it is not merged";
      return;
    }
    if (bytes.size() == end) {
      report.status = "unchanged";
      return;
    }
  }
  ParseOptions options{file, before ? before->last_line : 0, final};
  Parsed parsed = parse(format, bytes, options);
  if (!parsed.sessions.empty()) report.session_id = parsed.sessions.front().id;
  report.unknown = parsed.unknown;
  report.lines = std::max<int64_t>(0, parsed.lines_consumed - options.resume_after_line);
  std::vector<Draft> drafts;
  for (Draft &d : parsed.events)
    if (std::max(d.first_line, d.last_line) > options.resume_after_line)
      drafts.push_back(std::move(d));
  parsed.events.clear();
  std::string prefix =
      util::to_hex(util::sha256(std::string_view(bytes).substr(0, size_t(parsed.bytes_consumed))));
  int64_t end_offset = parsed.bytes_consumed;
  std::string().swap(bytes); // the drafts hold what is appended
  append(format, parsed, drafts, end_offset, prefix, report);
  report.status = report.events > 0 ? "imported" : "unchanged";
}

void Importer::append(Format format, Parsed &parsed, std::vector<Draft> &drafts, int64_t end_offset,
                      const std::string &prefix_sha256, FileReport &report) {
  std::map<std::string_view, DraftSession *> sessions;
  for (DraftSession &s : parsed.sessions) sessions.emplace(s.id, &s);
  std::vector<Placement> plan;
  std::set<std::string_view> placed;
  auto create = [&](DraftSession &s, int64_t line) {
    if (placed.insert(s.id).second && !log_.session_exists(s.id))
      plan.push_back({&s.id, &s.create_json, true, line});
  };
  for (Draft &d : drafts) {
    if (auto it = sessions.find(d.session_id); it != sessions.end())
      create(*it->second, d.first_line);
    plan.push_back({&d.session_id, &d.event_json, false, d.first_line});
  }
  for (DraftSession &s : parsed.sessions) create(s, 1);
  if (plan.empty()) return;
  Placement &last = plan.back();
  *last.json = with_pass_end(*last.json,
                             PassEnd{format_name(format), report.file, end_offset, prefix_sha256},
                             report.file + ":" + std::to_string(last.line));

  // The source's active leaf is the entry of its last line: the file's
  // own session's draft that ends last.
  const Draft *leaf = nullptr;
  for (const Draft &d : drafts)
    if (d.session_id == report.session_id && (!leaf || d.last_line >= leaf->last_line)) leaf = &d;
  std::string leaf_branch;
  log_.write_batch([&](log::EventLog::Batch &batch) {
    for (Placement &p : plan) {
      try {
        const log::Event &e =
            p.create ? batch.create_session(*p.json) : batch.append(*p.session_id, *p.json);
        if (leaf && p.json == &leaf->event_json) leaf_branch = e.branch_id;
      } catch (const Error &e) {
        throw Error(e.code(), report.file + ":" + std::to_string(p.line) + ": " + e.what());
      } catch (const SQLite::Exception &e) {
        Error err = store::to_error(e);
        throw Error(err.code(), report.file + ":" + std::to_string(p.line) + ": " + err.what());
      }
      std::string().swap(*p.json); // placed: the log holds it now
    }
  });
  report.events = int64_t(plan.size());
  if (!leaf_branch.empty()) {
    std::string main = log_.tree().main_branch(log_.session_no(report.session_id)).id;
    if (leaf_branch != main) report.active_branch_id = leaf_branch;
  }
}

ImportReport Importer::run(const ImportOptions &options) {
  ImportReport report;
  report.format = options.format;
  for (const std::string &file : session_files(options.format, options.path))
    report.sessions.push_back(import_file(options.format, file, options.final));
  return report;
}

int64_t ImportReport::count(std::string_view status) const {
  return std::count_if(sessions.begin(), sessions.end(),
                       [&](const FileReport &f) { return f.status == status; });
}

std::string ImportReport::to_json() const {
  json::JsonWriter w;
  w.begin_object().field("format", format_name(format)).key("sessions").begin_array();
  for (const FileReport &f : sessions) {
    w.begin_object()
        .field("file", f.file)
        .field("session_id", f.session_id)
        .field("status", f.status)
        .field("events", f.events)
        .field("lines", f.lines)
        .key("unknown")
        .begin_object();
    for (const auto &[type, n] : f.unknown) w.field(type, n);
    w.end_object();
    if (!f.error.empty()) w.field("error", f.error);
    if (!f.active_branch_id.empty()) w.field("active_branch_id", f.active_branch_id);
    w.end_object();
  }
  w.end_array();
  for (const char *status : {"imported", "unchanged", "changed", "failed"})
    w.field(status, count(status));
  w.end_object();
  return w.take();
}

} // namespace ctxdb::transcript
