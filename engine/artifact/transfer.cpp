#include "artifact/transfer.hpp"

#include "error.hpp"
#include "util/base64.hpp"
#include "util/sha256.hpp"
#include "json/json_writer.hpp"
#include "json/parse.hpp"

namespace ctxdb::artifact {

namespace {

constexpr std::string_view kRecordPrefix = "{\"ctxdb_record\":";

std::string header_record(const Info &a) {
  json::JsonWriter w;
  w.begin_object()
      .field("ctxdb_record", "artifact")
      .field("format", kRecordFormat)
      .field("id", a.id)
      .field("raw_size", a.raw_size)
      .field("chunk_count", a.chunk_count)
      .field("line_count", a.line_count)
      .field("kind", kind_name(a.kind));
  w.key("mime");
  a.mime.empty() ? w.null() : w.value(a.mime);
  w.key("name");
  a.name.empty() ? w.null() : w.value(a.name);
  w.field("created_ts", a.created_ts).key("refs").begin_array();
  for (const Ref &r : a.refs)
    w.begin_object().field("event_id", r.event_id).field("role", r.role).end_object();
  w.end_array().end_object();
  return w.take();
}

std::string chunk_record(const Layout &l, size_t i, const ArtifactStore::StoredChunk &c) {
  std::string data = util::encode_base64(c.data);
  json::JsonWriter w;
  w.reserve(data.size() + 300);
  w.begin_object()
      .field("ctxdb_record", "artifact_chunk")
      .field("format", kRecordFormat)
      .field("artifact_id", l.info.id)
      .field("idx", int64_t(i))
      .field("raw_size", l.chunks[i].raw_size)
      .field("codec", codec_name(c.codec))
      .field("sha256", util::to_hex(util::sha256(c.data)))
      .field("data", data)
      .end_object();
  return w.take();
}

std::string_view get_str(simdjson::dom::element o, const char *key) {
  std::string_view v;
  return o[key].get(v) ? std::string_view() : v;
}

int64_t get_int(simdjson::dom::element o, const char *key) {
  int64_t v = 0;
  return o[key].get(v) ? 0 : v;
}

} // namespace

Exporter::Exporter(ArtifactStore &store, std::vector<Info> infos)
    : store_(store), infos_(std::move(infos)) {}

bool Exporter::next(std::vector<std::string> &out, size_t max_lines) {
  for (size_t n = 0; n < max_lines && artifact_ < infos_.size(); ++n) {
    if (!layout_) {
      layout_ = store_.layout(infos_[artifact_].id);
      chunk_ = 0;
      out.push_back(header_record(infos_[artifact_]));
    } else if (chunk_ < layout_->chunks.size()) {
      out.push_back(chunk_record(*layout_, chunk_, store_.stored_chunk(*layout_, chunk_)));
      ++chunk_;
    }
    if (chunk_ == layout_->chunks.size()) {
      layout_.reset();
      ++artifact_;
    }
  }
  return artifact_ < infos_.size();
}

struct Importer::Open {
  std::string id;
  int64_t raw_size = 0;
  int64_t chunk_count = 0;
  int64_t next_idx = 0;
  int64_t written = 0;
  std::vector<Ref> more_refs; // the first goes in with the put
  std::optional<ArtifactStore::Writer> writer;
  std::string raw; // one decoded chunk
};

Importer::Importer(ArtifactStore &store) : store_(store) {}
Importer::~Importer() = default;

bool Importer::take(std::string_view line) {
  size_t start = line.find_first_not_of(" \t");
  if (line.substr(start == std::string_view::npos ? line.size() : start)
          .starts_with(kRecordPrefix) == false) {
    if (open_) // an event between an artifact's chunks
      throw Error(Code::kCorrupt,
                  "artifact " + open_->id + " is cut short: " + std::to_string(open_->next_idx) +
                      " of " + std::to_string(open_->chunk_count) + " chunks before this line");
    return false;
  }
  simdjson::dom::element rec = json::parse(parser_, line, "export record");
  int64_t format = get_int(rec, "format");
  if (format > kRecordFormat)
    throw Error(Code::kSchema, "export record format " + std::to_string(format) +
                                   " is newer than this library's (" +
                                   std::to_string(kRecordFormat) + ")");
  std::string_view type = get_str(rec, "ctxdb_record");
  if (type == "artifact")
    open_artifact(rec);
  else if (type == "artifact_chunk")
    add_chunk(rec);
  else
    throw Error(Code::kInvalidArg, "unknown export record '" + std::string(type) +
                                       "' (this library knows artifact, artifact_chunk)");
  return true;
}

void Importer::open_artifact(simdjson::dom::element rec) {
  store::embedded_schema("json/export_artifact.schema.json").validate(rec, "");
  if (open_) finish(); // names the artifact cut short
  auto o = std::make_unique<Open>();
  o->id = get_str(rec, "id");
  o->raw_size = get_int(rec, "raw_size");
  o->chunk_count = get_int(rec, "chunk_count");
  Meta meta;
  meta.kind = parse_kind(get_str(rec, "kind"));
  meta.mime = get_str(rec, "mime");
  meta.name = get_str(rec, "name");
  meta.created_ts = get_int(rec, "created_ts");
  for (simdjson::dom::element r : rec["refs"].get_array()) {
    Ref ref{std::string(get_str(r, "event_id")), std::string(get_str(r, "role")), {}};
    if (meta.event_id.empty()) {
      meta.event_id = ref.event_id;
      meta.role = ref.role;
    } else {
      o->more_refs.push_back(std::move(ref));
    }
  }
  o->writer.emplace(store_.writer(meta));
  open_ = std::move(o);
  if (open_->chunk_count == 0) close_artifact();
}

void Importer::add_chunk(simdjson::dom::element rec) {
  store::embedded_schema("json/export_artifact_chunk.schema.json").validate(rec, "");
  std::string_view of = get_str(rec, "artifact_id");
  int64_t idx = get_int(rec, "idx");
  if (!open_ || of != open_->id || idx != open_->next_idx)
    throw Error(Code::kCorrupt, "chunk " + std::to_string(idx) + " of artifact " + std::string(of) +
                                    (open_ ? " where chunk " + std::to_string(open_->next_idx) +
                                                 " of " + open_->id + " was due"
                                           : " without its artifact record before it"));
  ChunkName name{open_->id, size_t(idx)};
  std::string what = name.str();
  std::optional<std::string> stored = util::decode_base64(get_str(rec, "data"));
  if (!stored) throw Error(Code::kCorrupt, what + ": data is not base64");
  util::Digest want{};
  util::from_hex(get_str(rec, "sha256"), want); // the schema checked its shape
  if (util::sha256(*stored) != want)
    throw Error(Code::kCorrupt, what + " does not match its SHA-256");
  size_t raw_size = size_t(get_int(rec, "raw_size"));
  open_->raw.resize(raw_size);
  Codec codec = parse_codec(get_str(rec, "codec"));
  decoder_.decode_unchecked(codec, *stored, raw_size, open_->raw.data(), name);
  open_->writer->write(open_->raw);
  open_->written += int64_t(raw_size);
  if (++open_->next_idx == open_->chunk_count) close_artifact();
}

void Importer::close_artifact() {
  std::unique_ptr<Open> o = std::move(open_);
  if (o->written != o->raw_size)
    throw Error(Code::kCorrupt, "artifact " + o->id + " holds " + std::to_string(o->written) +
                                    " bytes, not the " + std::to_string(o->raw_size) +
                                    " its record says");
  std::string id = o->writer->finish();
  if (id != o->id)
    throw Error(Code::kCorrupt, "the content of artifact " + o->id + " hashes to " + id);
  for (const Ref &r : o->more_refs) store_.add_reference(id, r.event_id, r.role);
}

void Importer::finish() {
  if (open_)
    throw Error(Code::kCorrupt, "artifact " + open_->id +
                                    " is cut short: " + std::to_string(open_->next_idx) + " of " +
                                    std::to_string(open_->chunk_count) + " chunks");
}

} // namespace ctxdb::artifact
