#include "log/read_ahead.hpp"

#include <SQLiteCpp/SQLiteCpp.h>
#include <sqlite3.h>

namespace ctxdb::log {

ReadAhead::ReadAhead(const store::Store &store, const char *last_pos_sql, const char *select,
                     Decode decode) {
  for (Batch &b : batches_) free_.push_back(&b);
  thread_ = std::thread(&ReadAhead::run, this, std::cref(store), last_pos_sql, select, decode);
}

ReadAhead::~ReadAhead() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

int64_t ReadAhead::last_pos() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return opened_ || done_; });
  // Only a failure to open is this call's: one further on (a damaged row)
  // may already have happened when a fast reader is waited for late, and
  // is next()'s to raise, after the rows before it.
  if (!opened_) rethrow_error();
  return last_pos_;
}

std::span<Event> ReadAhead::next() {
  std::unique_lock lock(mutex_);
  if (consuming_) {
    free_.push_back(consuming_);
    consuming_ = nullptr;
    changed_.notify_all();
  }
  changed_.wait(lock, [&] { return !full_.empty() || done_; });
  if (full_.empty()) { // done_: the end, or the reader's error
    rethrow_error();
    return {};
  }
  consuming_ = full_.front();
  full_.pop_front();
  return {consuming_->events.data(), consuming_->size};
}

void ReadAhead::rethrow_error() {
  if (error_) std::rethrow_exception(error_);
}

ReadAhead::Batch *ReadAhead::take_free() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return !free_.empty() || stopping_; });
  if (stopping_) return nullptr;
  Batch *b = free_.back();
  free_.pop_back();
  return b;
}

void ReadAhead::parse_payloads(Batch &b) {
  size_t bytes = 2 + b.size;
  for (size_t i = 0; i < b.size; ++i) bytes += b.events[i].payload.size();
  b.payloads.reserve(bytes + simdjson::SIMDJSON_PADDING); // parsed in place, not copied
  b.payloads.assign(1, '[');
  for (size_t i = 0; i < b.size; ++i) {
    if (i) b.payloads += ',';
    b.payloads += b.events[i].payload;
  }
  b.payloads += ']';
  simdjson::dom::array all;
  // A payload that is not JSON (a damaged file) fails the whole batch: its
  // events are then parsed one by one where they are used, which reports
  // the one at fault.
  if (b.parser.parse(b.payloads).get(all) || all.size() != b.size) {
    for (size_t i = 0; i < b.size; ++i) b.events[i].parsed_payload.reset();
    return;
  }
  size_t i = 0;
  for (simdjson::dom::element p : all) b.events[i++].parsed_payload = p;
}

void ReadAhead::run(const store::Store &store, const char *last_pos_sql, const char *select,
                    Decode decode) {
  try {
    SQLite::Database reader = store.open_reader();
    reader.exec("BEGIN"); // one snapshot for both statements; closing ends it
    int64_t last = reader.execAndGet(last_pos_sql).getInt64();
    {
      std::lock_guard lock(mutex_);
      last_pos_ = last;
      opened_ = true;
    }
    changed_.notify_all();
    sqlite3 *db = reader.getHandle();
    sqlite3_stmt *raw = nullptr;
    if (int rc = sqlite3_prepare_v2(db, select, -1, &raw, nullptr); rc != SQLITE_OK)
      throw SQLite::Exception(db, rc);
    std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt *)> q(raw, sqlite3_finalize);
    int rc = SQLITE_ROW;
    while (rc == SQLITE_ROW) {
      Batch *b = take_free();
      if (!b) return; // the caller stopped reading
      b->size = 0;
      size_t bytes = 0;
      // A row that fails ends the scan after the rows before it, as a
      // scan on the caller's connection would.
      std::exception_ptr failed;
      try {
        while (b->size < kBatch && bytes < kBatchBytes && (rc = sqlite3_step(raw)) == SQLITE_ROW) {
          decode(raw, b->events[b->size]);
          bytes += b->events[b->size++].payload.size();
        }
        if (rc != SQLITE_ROW && rc != SQLITE_DONE) throw SQLite::Exception(db, rc);
      } catch (...) {
        failed = std::current_exception();
      }
      parse_payloads(*b);
      {
        std::lock_guard lock(mutex_);
        if (b->size)
          full_.push_back(b);
        else
          free_.push_back(b);
      }
      changed_.notify_all();
      if (failed) std::rethrow_exception(failed);
    }
    std::lock_guard lock(mutex_);
    done_ = true;
  } catch (...) {
    std::lock_guard lock(mutex_);
    error_ = std::current_exception();
    done_ = true;
  }
  changed_.notify_all();
}

} // namespace ctxdb::log
