// artifact_store.hpp — large outputs kept whole in the database file:
// content-addressed, deduplicated, chunked, compressed, checked on read.
//
// The tables are schema/sql/005_artifacts.sql. An artifact's id is "art_"
// + the hex SHA-256 of its bytes, so putting the same bytes twice stores
// them once and only adds the second put's reference. Content is cut into
// chunks of Options::chunk_size raw bytes, each its own zstd frame (or raw
// when that would not shrink it), so reads and searches decode only the
// chunks they need, and every decoded chunk is checked against its SHA-256.
//
// Previews (preview.hpp) and search (search.hpp) read through this class.
#pragma once

#include "artifact/artifact.hpp"
#include "artifact/chunk_codec.hpp"
#include "store/store.hpp"

#include <functional>
#include <memory>
#include <optional>

namespace ctxdb::artifact {

struct Options {
  size_t chunk_size = 256 * 1024;
  int level = 3; // zstd level
};

// Where an artifact's chunks are: what reads need before decoding any.
struct Layout {
  int64_t no = 0;
  Info info; // without refs
  struct Chunk {
    int64_t offset = 0; // of its first raw byte in the content
    int64_t raw_size = 0;
    int64_t newlines = 0;
  };
  std::vector<Chunk> chunks;
  int64_t newlines = 0; // in the whole content
};

class ArtifactStore {
public:
  explicit ArtifactStore(store::Store &store, Options options = {});
  ~ArtifactStore();
  ArtifactStore(const ArtifactStore &) = delete;
  ArtifactStore &operator=(const ArtifactStore &) = delete;

  const Options &options() const { return options_; }

  // A streaming put: feed pieces with write(), then finish() for the id.
  // Chunks are compressed and inserted as they fill, so content larger
  // than memory needs only one chunk of it at a time.
  //
  // Everything it writes is inside one transaction: its own BEGIN
  // IMMEDIATE when the connection has none open (holding the write lock
  // until finish), otherwise a SAVEPOINT in the caller's transaction (a
  // spill at append). Destroying a Writer before finish(), or finish()
  // throwing, rolls all of it back: no chunk, no artifact, no reference.
  // One Writer at a time per store (kMisuse otherwise).
  class Writer {
  public:
    ~Writer();
    Writer(Writer &&) noexcept;
    Writer(const Writer &) = delete;
    Writer &operator=(const Writer &) = delete;
    Writer &operator=(Writer &&) = delete;

    void write(std::string_view piece);
    // Stores the artifact (or, when the bytes are stored already, drops
    // the chunks just written and adds only the reference); returns its id.
    // With `stored`, also reads the artifact as stored (info()) before the
    // commit: a read after it that failed would report a stored artifact
    // as not stored.
    std::string finish(Info *stored = nullptr);

  private:
    friend class ArtifactStore;
    struct State;
    explicit Writer(std::unique_ptr<State> state);
    std::unique_ptr<State> s_;
  };

  Writer writer(const Meta &meta);
  // A put of bytes already in memory; hashes them first, so a duplicate
  // costs one SHA-256 pass and no compression (from 1 MiB on, the hash
  // runs on a second thread while the first chunks compress, and a
  // duplicate stops the compression once it is known).
  // `stored` as for Writer::finish.
  std::string put(std::string_view bytes, const Meta &meta, Info *stored = nullptr);

  // kNotFound for an id that is not stored; kInvalidArg for one that
  // cannot be an artifact id.
  Info info(std::string_view id);
  Layout layout(std::string_view id);

  // Reads check every chunk they decode (kCorrupt on a mismatch).
  std::string read(std::string_view id);
  // offset beyond the end is kInvalidArg; a length running past the end
  // is clamped to it (like pread), so (0, INT64_MAX) reads everything.
  std::string read_range(std::string_view id, int64_t offset, int64_t length);
  // read_range into memory that alloc(size) returns: each chunk decodes
  // straight into it (no zero-fill, no copy) but the partly read first
  // and last. Returns the size.
  size_t read_range_into(std::string_view id, int64_t offset, int64_t length,
                         const std::function<char *(size_t)> &alloc);
  // Lines first .. first+count-1, 1-based, each with its '\n'. first may
  // be line_count+1 (an empty result, as offset == size is for bytes);
  // beyond that is kInvalidArg; count is clamped to the last line.
  std::string read_lines(std::string_view id, int64_t first, int64_t count);

  // The streaming reader: calls fn with consecutive pieces (at most one
  // chunk each) of the range [offset, offset+length), checked chunk by
  // chunk before fn sees them; fn returns false to stop early.
  void scan(const Layout &layout, int64_t offset, int64_t length,
            const std::function<bool(std::string_view)> &fn);
  // Decodes chunk i of the artifact onto the end of out.
  void load_chunk(const Layout &layout, size_t i, std::string &out);
  // Decodes chunk i into dst, which has room for its raw_size bytes.
  void decode_chunk(const Layout &layout, size_t i, char *dst);
  // Chunk i as stored (a zstd frame or the raw bytes), undecoded and
  // unchecked: what the export stream carries (transfer.hpp).
  struct StoredChunk {
    Codec codec = Codec::kRaw;
    std::string data;
  };
  StoredChunk stored_chunk(const Layout &layout, size_t i);
  // Adds a reference from event_id to the stored artifact id (kNotFound
  // when it is not stored).
  void add_reference(std::string_view id, std::string_view event_id, std::string_view role);

  // The offset where line `line` (1-based) starts; line_count+1 gives the
  // end of the content.
  int64_t line_offset(const Layout &layout, int64_t line);

  // Every artifact (or those an event of session_id refers to), oldest
  // first, with its references.
  std::vector<Info> list(const std::optional<std::string> &session_id = std::nullopt);

private:
  // Content at least this large is hashed on a second thread during put.
  static constexpr size_t kHashAsideBytes = 1 << 20;
  // Reads of this many chunks or more check hashes on a second thread
  // (starting it costs about as much as hashing one frame).
  static constexpr size_t kHashAsideChunks = 4;
  ChunkDecoder::HashAside hash_aside(size_t chunks);
  std::string put_hashing_aside(std::string_view bytes, const Meta &meta, Info *stored);
  std::vector<Ref> refs(int64_t no);
  void add_ref(int64_t no, const Meta &meta);

  store::Store &store_;
  Options options_;
  ChunkEncoder encoder_;
  ChunkDecoder decoder_;
  bool writing_ = false;
};

} // namespace ctxdb::artifact
