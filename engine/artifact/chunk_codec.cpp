#include "artifact/chunk_codec.hpp"

#include "error.hpp"

#include <zstd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <new>
#include <system_error>
#include <thread>

namespace ctxdb::artifact {

std::string_view codec_name(Codec c) { return c == Codec::kZstd ? "zstd" : "raw"; }

Codec parse_codec(std::string_view name) {
  if (name == "zstd") return Codec::kZstd;
  if (name == "raw") return Codec::kRaw;
  throw Error(Code::kCorrupt, "artifact chunk with unknown codec '" + std::string(name) + "'");
}

ChunkEncoder::ChunkEncoder(int level) : zstd_(level) {}

Codec ChunkEncoder::encode(std::string_view raw, std::string_view *frame) {
  std::string_view f = zstd_.compress(raw);
  if (f.size() >= raw.size()) return Codec::kRaw;
  *frame = f;
  return Codec::kZstd;
}

// Hashes one posted buffer at a time on its own thread. The poster never
// waits for a thread that has not started on its buffer: it takes the work
// back and hashes it itself, so on a busy machine a read runs as fast as it
// would with no second thread.
class AsideHasher {
public:
  AsideHasher() : thread_([this] { run(); }) {}
  ~AsideHasher() {
    if (posted_) result();
    state_.store(kStop);
    state_.notify_all();
    thread_.join();
  }

  // bytes must stay valid until result() returns.
  void post(std::string_view bytes) {
    bytes_ = bytes;
    posted_ = true;
    state_.store(kPosted, std::memory_order_release);
    state_.notify_all();
  }

  util::Digest result() {
    posted_ = false;
    int s = kPosted;
    if (state_.compare_exchange_strong(s, kIdle))
      return own_.update(bytes_).finish(); // not started
    while ((s = state_.load(std::memory_order_acquire)) == kTaken) state_.wait(kTaken);
    state_.store(kIdle, std::memory_order_relaxed);
    return digest_;
  }

private:
  enum : int { kIdle, kPosted, kTaken, kDone, kStop };

  void run() {
    for (;;) {
      int s = state_.load(std::memory_order_acquire);
      if (s == kStop) return;
      if (s != kPosted) {
        if (!spin_while(s)) state_.wait(s);
        continue;
      }
      if (!state_.compare_exchange_strong(s, kTaken)) continue; // taken back
      digest_ = hash_.update(bytes_).finish();
      state_.store(kDone, std::memory_order_release);
      state_.notify_all();
    }
  }

  // A read posts a frame every couple of hundred microseconds: a thread
  // still awake when it comes spares the poster a wake-up system call
  // (on a VM, waking a sleeping thread costs more than hashing a frame).
  // It yields between looks, so that on a busy machine it does not keep
  // the poster itself from running. False when the state stayed s.
  bool spin_while(int s) {
    auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(300);
    do {
      for (int i = 0; i < 64; ++i) {
        if (state_.load(std::memory_order_acquire) != s) return true;
        cpu_relax();
      }
      std::this_thread::yield();
    } while (std::chrono::steady_clock::now() < until);
    return false;
  }

  static void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
  }

  std::atomic<int> state_{kIdle};
  std::string_view bytes_;
  bool posted_ = false; // the poster's own record: a result() is owed
  util::Digest digest_{};
  util::Sha256 hash_;  // the thread's
  util::Sha256 own_;   // the poster's, for work it takes back
  std::thread thread_; // last: it starts once the members above exist
};

ChunkDecoder::ChunkDecoder() : ctx_(ZSTD_createDCtx()) {
  if (!ctx_) throw std::bad_alloc();
}

ChunkDecoder::~ChunkDecoder() { ZSTD_freeDCtx(ctx_); }

ChunkDecoder::HashAside::HashAside(ChunkDecoder &decoder, bool on) : decoder_(decoder) {
  if (!on || decoder_.aside_) return;
  try {
    decoder_.aside_ = std::make_unique<AsideHasher>();
    owner_ = true;
  } catch (const std::system_error &) {
    // No thread to be had: decode() hashes inline, as without a guard.
  }
}

ChunkDecoder::HashAside::~HashAside() {
  if (owner_) decoder_.aside_.reset();
}

std::string ChunkName::str() const {
  return "chunk " + std::to_string(idx) + " of artifact " + std::string(artifact_id);
}

void ChunkDecoder::decode(const ChunkJob &job) {
  auto mismatch = [&] {
    return Error(Code::kCorrupt, job.name.str() + " does not match its SHA-256");
  };
  if (job.hash_of == HashOf::kStored && aside_) {
    // The frame is hashed while it decodes. A frame that fails to decode is
    // reported as a hash mismatch when it is one, as hashing first would.
    aside_->post(job.stored);
    try {
      decode_unchecked(job.codec, job.stored, job.raw_size, job.dst, job.name);
    } catch (...) {
      if (aside_->result() != job.sha256) throw mismatch();
      throw;
    }
    if (aside_->result() != job.sha256) throw mismatch();
    return;
  }
  if (job.hash_of == HashOf::kStored && hash_.update(job.stored).finish() != job.sha256)
    throw mismatch();
  decode_unchecked(job.codec, job.stored, job.raw_size, job.dst, job.name);
  if (job.hash_of == HashOf::kRaw && hash_.update(job.dst, job.raw_size).finish() != job.sha256)
    throw mismatch();
}

void ChunkDecoder::decode_unchecked(Codec codec, std::string_view stored, size_t raw_size,
                                    char *dst, const ChunkName &name) {
  if (codec == Codec::kRaw) {
    if (stored.size() != raw_size)
      throw Error(Code::kCorrupt, name.str() + " holds " + std::to_string(stored.size()) +
                                      " bytes, not " + std::to_string(raw_size));
    std::memcpy(dst, stored.data(), raw_size);
    return;
  }
  size_t n = ZSTD_decompressDCtx(ctx_, dst, raw_size, stored.data(), stored.size());
  if (ZSTD_isError(n) || n != raw_size)
    throw Error(Code::kCorrupt,
                name.str() + " does not decompress to its " + std::to_string(raw_size) + " bytes" +
                    (ZSTD_isError(n) ? std::string(": ") + ZSTD_getErrorName(n) : std::string()));
}

} // namespace ctxdb::artifact
