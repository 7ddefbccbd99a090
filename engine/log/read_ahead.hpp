// read_ahead.hpp — reading the log on a thread of its own, ahead of the
// caller that consumes it.
//
// A replay spends a quarter of its time stepping through the events table
// and copying each row into an Event (bench_rebuild under perf), time in
// which the other core is idle. A ReadAhead moves that work to a second
// connection on a thread of its own, which fills batches of events while
// the caller consumes the batch before: the two overlap.
//
// The reader parses the payloads as well (a tenth of the caller's time
// otherwise), a batch at a time, as one JSON array: each event's
// parsed_payload is its element, valid while the caller holds the batch.
//
// The second connection sees the file as last committed, not the caller's
// uncommitted writes. last_pos() says what it sees, so that a caller can
// fall back to its own connection when the two differ.
#pragma once

#include "log/event.hpp"
#include "store/store.hpp"

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

struct sqlite3_stmt;

namespace ctxdb::log {

class ReadAhead {
public:
  // Decodes the current row of a statement into an Event, reusing its strings.
  using Decode = void (*)(sqlite3_stmt *row, Event &e);

  // Opens a read-only connection to the store's file (Store::open_reader:
  // its VFS, waiting for a lock as the caller's connection does) and runs
  // `select` on it (a statement without parameters), in one read
  // snapshot. `last_pos_sql` (one integer) is run first, in the same
  // snapshot. The store must outlive the ReadAhead.
  ReadAhead(const store::Store &store, const char *last_pos_sql, const char *select, Decode decode);
  // Stops the reader (at its next batch) and waits for it.
  ~ReadAhead();
  ReadAhead(const ReadAhead &) = delete;
  ReadAhead &operator=(const ReadAhead &) = delete;

  // What last_pos_sql returned; waits for the reader to open. Rethrows the
  // reader's error if it could not open or run last_pos_sql.
  int64_t last_pos();
  // The next events in order (empty at the end), valid until the next call;
  // the caller may modify them. Rethrows an error of the reader's.
  std::span<Event> next();

  // A batch ends at kBatch events or kBatchBytes of payload, so that a
  // batch's parser (which keeps its largest capacity) stays small.
  static constexpr size_t kBatch = 256;
  static constexpr size_t kBatchBytes = 1 << 20;
  static constexpr size_t kBatches = 4; // how far the reader may run ahead, plus one

private:
  struct Batch {
    std::vector<Event> events{kBatch};
    size_t size = 0;
    std::string payloads; // "[p1,p2,...]": parsed into parser
    simdjson::dom::parser parser;
  };
  static void parse_payloads(Batch &b);
  void run(const store::Store &store, const char *last_pos_sql, const char *select, Decode decode);
  Batch *take_free();   // the reader's side: nullptr once stopping
  void rethrow_error(); // with mutex_ held

  std::vector<Batch> batches_{kBatches};
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Batch *> free_;
  std::deque<Batch *> full_;   // filled, in order
  Batch *consuming_ = nullptr; // the caller's, returned to free_ by next()
  bool opened_ = false, done_ = false, stopping_ = false;
  int64_t last_pos_ = 0;
  std::exception_ptr error_;
  std::thread thread_; // last: it starts once everything above is ready
};

} // namespace ctxdb::log
