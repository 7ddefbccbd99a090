#define PCRE2_CODE_UNIT_WIDTH 8
#include "policy/redactor.hpp"

#include "error.hpp"

#include <pcre2.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <new>
#include <string_view>
#include <tuple>

namespace ctxdb::policy {

namespace {

// --- the built-in detectors ------------------------------------------------

// Where a detector's match can start, as 4-byte grams the prefilter looks
// for. `wild` (0..3, or -1) is a position of `gram` that stands for each
// byte of `chars` in turn; `offset` is from the gram to the match's start
// (the attempt is anchored there). Every place a detector can match must
// be covered, or the prefilter would hide it.
struct AnchorSpec {
  AnchorSpec(std::string_view g, int off = 0) : gram(g), offset(off) {}
  AnchorSpec(std::string_view g, int w, std::string_view c, int off = 0)
      : gram(g), wild(w), chars(c), offset(off) {}
  std::string_view gram;
  int wild = -1;
  std::string_view chars;
  int offset = 0;
};

// A quick necessary condition for a match at pos, checked before PCRE2 is
// called: in agent text most anchors are ordinary words ("tokens",
// "https://"), and a regex call costs more than scanning a few bytes.
using Precheck = bool (*)(std::string_view s, size_t pos);

bool is_key_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '-';
}

// key["']?]?[ \t]*[:=]: the key's letters, then the separator. Every key
// the patterns take ends in d, t, y or n (password, secret, api_key,
// token, …), which turns away "tokens", "max_tokens" and the like.
bool key_then_separator(std::string_view s, size_t pos) {
  size_t i = pos;
  while (i < s.size() && is_key_char(s[i])) ++i;
  if (i == pos || !std::strchr("dDtTyYnN", s[i - 1])) return false;
  if (i < s.size() && (s[i] == '"' || s[i] == '\'')) ++i;
  if (i < s.size() && s[i] == ']') ++i;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  if (i + 1 < s.size() && s[i] == '=' && s[i + 1] == '=') return false; // a comparison
  return i < s.size() && (s[i] == ':' || s[i] == '=');
}

// "bearer", blanks, then at least 16 characters a token is made of.
bool bearer_then_token(std::string_view s, size_t pos) {
  size_t i = pos + 6;
  if (i >= s.size() || (s[i] != ' ' && s[i] != '\t')) return false;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  size_t start = i;
  while (i < s.size() && i - start < 16 &&
         (std::isalnum(uint8_t(s[i])) || std::strchr("._~+/-", s[i])))
    ++i;
  return i - start == 16;
}

// ://…@ before the authority ends: there is userinfo.
bool url_with_userinfo(std::string_view s, size_t pos) {
  for (size_t i = pos + 3; i < s.size(); ++i) {
    char c = s[i];
    if (c == '@') return true;
    if (c == '/' || c == '?' || c == '#' || c == '"' || c == '\'' || c == '<' || c == '>' ||
        c == ' ' || c == '\t' || c == '\r' || c == '\n')
      return false;
  }
  return false;
}

struct Builtin {
  const char *name;
  std::string pattern;
  std::vector<AnchorSpec> anchors;
  Precheck precheck = nullptr;
};

constexpr std::string_view kB64url =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-";
constexpr std::string_view kAlnum = "abcdefghijklmnopqrstuvwxyz0123456789";
// The furthest an anchor's gram lies after the match start it stands for.
constexpr int kMaxBack = 5;

// Boundaries: a token must not continue a longer run of its own alphabet,
// so "xAKIA…" or a key inside a longer base64 string is not taken.
#define NOT_AFTER_B64 "(?<![A-Za-z0-9_-])"
#define NOT_BEFORE_B64 "(?![A-Za-z0-9_-])"
// A bare value (after `password=` or `Bearer `) must hold a digit and a
// letter: that keeps identifiers, types and words ("lexer.next",
// "string", "required") out, which are what follow those keys in code
// and prose.
#define BARE_CHAR "[^\\s\"'`,;&(){}\\[\\]<>]"
#define KEY_SEP "[\"']?\\]?[ \\t]*(?:=>|:=|[:=](?![=>:]))[ \\t]*"

// Order matters on ties (two detectors reporting the same start): the
// specific ones first, so `GITHUB_TOKEN=ghp_…` counts as github_token.
const std::vector<Builtin> &builtins() {
  static const std::vector<Builtin> table = {
      // The whole PEM block; a block cut short (a truncated log) is taken
      // through its last base64 or header line.
      {"private_key",
       "-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
       "(?:[A-Za-z0-9+/=\\s:,.\\\\-]*?-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
       "|(?:(?:\\r?\\n|\\\\n)(?:[A-Za-z0-9+/=]{16,}+|[A-Za-z-]++:[^\\r\\n\\\\]*+))*+)",
       {{"-BEG", -4}}},
      {"aws_access_key_id",
       "(?<![A-Za-z0-9])(?:AKIA|ASIA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|ABIA|ACCA)[A-Z0-9]{16}"
       "(?![A-Za-z0-9])",
       {{"AKIA"},
        {"ASIA"},
        {"AGPA"},
        {"AIDA"},
        {"AROA"},
        {"AIPA"},
        {"ANPA"},
        {"ANVA"},
        {"ABIA"},
        {"ACCA"}}},
      // The value only: the key name stays, so a reader sees what it was.
      {"aws_secret_access_key",
       "(?i:(?:aws_?)?secret_?access_?key)" KEY_SEP "[\"']?\\K[A-Za-z0-9/+]{40}"
       "(?![A-Za-z0-9/+=])",
       {{"aws_"}, {"awss"}, {"secr"}},
       key_then_separator},
      {"github_token",
       "(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,255}|github_pat_[A-Za-z0-9_]{22,255})"
       "(?![A-Za-z0-9_])",
       {{"ghp_"}, {"gho_"}, {"ghu_"}, {"ghs_"}, {"ghr_"}, {"b_pa", -5}}},
      {"openai_api_key",
       NOT_AFTER_B64 "sk-(?!ant-)(?=[A-Za-z_-]*+[0-9])[A-Za-z0-9_-]{20,}+",
       {{"sk-?", 3, kB64url}}},
      {"anthropic_api_key", NOT_AFTER_B64 "sk-ant-[A-Za-z0-9_-]{20,}+", {{"sk-a"}}},
      {"slack_token",
       NOT_AFTER_B64 "xox[abprs]-[0-9]+-[A-Za-z0-9-]{8,}+",
       {{"xoxa"}, {"xoxb"}, {"xoxp"}, {"xoxr"}, {"xoxs"}}},
      {"google_api_key", NOT_AFTER_B64 "AIza[0-9A-Za-z_-]{35}" NOT_BEFORE_B64, {{"AIza"}}},
      // Header and payload are JSON objects, so both start "eyJ" ('{"').
      {"jwt",
       NOT_AFTER_B64 "eyJ[A-Za-z0-9_-]{5,}+\\.eyJ[A-Za-z0-9_-]{5,}+\\.[A-Za-z0-9_-]*+",
       {{"eyJ?", 3, kB64url}}},
      {"bearer_token",
       "(?<![A-Za-z0-9_])(?i:bearer)[ \\t]+\\K(?=[A-Za-z._~+/-]*+[0-9])"
       "[A-Za-z0-9._~+/-]{16,}+=*+",
       {{"bear"}},
       bearer_then_token},
      // scheme://user:PASSWORD@host: the last '@' ends the password, as
      // URL parsers read it.
      {"url_password",
       "(?<=[A-Za-z0-9])://[^\\s:/?#@\"'<>]*+:\\K[^\\s/?#\"'<>]+(?=@[^\\s/?#@\"'<>]++)",
       {{"?://", 0, kAlnum, 1}},
       url_with_userinfo},
      // key = value, key: value, "key": "value", key := value, key => value.
      {"password_assignment",
       "(?i:password|passwd|pwd|secret|api[_-]?key|token)(?:[_-]?(?i:key|token))?" KEY_SEP
       "(?:\"\\K(?:[^\"\\\\\\r\\n]++|\\\\.)++(?=\")"
       "|'\\K(?:[^'\\\\\\r\\n]++|\\\\.)++(?=')"
       "|\\K(?=" BARE_CHAR "*?[0-9])(?=" BARE_CHAR "*?[A-Za-z])"
       "[^\\s\"'`,;&(){}\\[\\]<>/~$%*]" BARE_CHAR "{5,}+(?![(\\[]))",
       {{"sswo", -2},
        {"sswd", -2},
        {"pwd?", 3, " \t\"':=_-kt"},
        {"secr"},
        {"api_"},
        {"api-"},
        {"apik"},
        {"toke"}},
       key_then_separator},
  };
  return table;
}

#undef NOT_AFTER_B64
#undef NOT_BEFORE_B64
#undef BARE_CHAR
#undef KEY_SEP

// --- the prefilter -----------------------------------------------------------

// Four bytes at p, ASCII letters folded to lower case (other bytes change
// too, which only adds false candidates, never loses one).
inline uint32_t gram_at(const char *p) {
  uint32_t g;
  std::memcpy(&g, p, 4);
  return g | 0x20202020u;
}

inline uint32_t gram_hash(uint32_t g) { return (g * 0x9E3779B1u) >> 16; }

struct GramEntry {
  uint32_t gram;
  int rule; // index into builtins()
  int offset;
};

// A bit per gram hash, for the scan; and the grams themselves grouped by
// hash (entries[first[h] .. first[h + 1])), so a position whose bit is set
// finds its detectors without a search.
struct Prefilter {
  std::array<uint64_t, 1024> bits{};
  std::vector<GramEntry> entries;
  std::vector<uint16_t> first;

  Prefilter() {
    const auto &table = builtins();
    for (int r = 0; r < int(table.size()); ++r)
      for (const AnchorSpec &a : table[r].anchors) add(a, r);
    auto key = [](const GramEntry &e) {
      return std::make_tuple(gram_hash(e.gram), e.gram, e.rule, e.offset);
    };
    std::sort(entries.begin(), entries.end(),
              [&](const GramEntry &x, const GramEntry &y) { return key(x) < key(y); });
    // Folding makes "sk-A" and "sk-a" one gram: try each attempt once.
    entries.erase(
        std::unique(entries.begin(), entries.end(),
                    [&](const GramEntry &x, const GramEntry &y) { return key(x) == key(y); }),
        entries.end());
    first.assign(65537, 0);
    for (const GramEntry &e : entries) ++first[gram_hash(e.gram) + 1];
    for (size_t h = 1; h < first.size(); ++h) first[h] += first[h - 1];
  }

  void add(const AnchorSpec &a, int rule) {
    if (a.wild < 0) return add_gram(a.gram, rule, a.offset);
    for (char c : a.chars) {
      std::string g(a.gram);
      g[a.wild] = c;
      add_gram(g, rule, a.offset);
    }
  }

  void add_gram(std::string_view g, int rule, int offset) {
    uint32_t v = gram_at(g.data());
    uint32_t h = gram_hash(v);
    bits[h >> 6] |= uint64_t{1} << (h & 63);
    entries.push_back({v, rule, offset});
  }

  bool maybe(uint32_t g) const {
    uint32_t h = gram_hash(g);
    return bits[h >> 6] >> (h & 63) & 1;
  }

  // The first position at or after i whose gram may be an anchor, or npos.
  size_t next(std::string_view s, size_t i) const {
    for (; i + 4 <= s.size(); ++i)
      if (maybe(gram_at(s.data() + i))) return i;
    return std::string_view::npos;
  }
};

const Prefilter &prefilter() {
  static const Prefilter p;
  return p;
}

// --- PCRE2 ownership ---------------------------------------------------------

struct CodeFree {
  void operator()(pcre2_code *p) const { pcre2_code_free(p); }
};
struct MatchDataFree {
  void operator()(pcre2_match_data *p) const { pcre2_match_data_free(p); }
};
struct MatchContextFree {
  void operator()(pcre2_match_context *p) const { pcre2_match_context_free(p); }
};
struct JitStackFree {
  void operator()(pcre2_jit_stack *p) const { pcre2_jit_stack_free(p); }
};
using CodePtr = std::unique_ptr<pcre2_code, CodeFree>;

std::string pcre2_message(int err) {
  PCRE2_UCHAR msg[256];
  pcre2_get_error_message(err, msg, sizeof msg);
  return reinterpret_cast<const char *>(msg);
}

[[noreturn]] void rule_error(const std::string &rule, const std::string &what) {
  throw Error(Code::kInvalidArg, "redaction rule '" + rule + "': " + what);
}

// MATCH_INVALID_UTF: text with a stray invalid byte is still redacted
// (the bad sequence just never matches), and no call re-validates the
// whole subject, which would make each anchored attempt O(text).
CodePtr compile(const RedactionRule &r, uint32_t extra) {
  int err = 0;
  PCRE2_SIZE at = 0;
  CodePtr code(pcre2_compile(reinterpret_cast<PCRE2_SPTR>(r.pattern.data()), r.pattern.size(),
                             PCRE2_UTF | PCRE2_MATCH_INVALID_UTF | extra, &err, &at, nullptr));
  if (!code)
    rule_error(r.name,
               "invalid pattern at offset " + std::to_string(at) + ": " + pcre2_message(err));
  uint32_t min = 0;
  pcre2_pattern_info(code.get(), PCRE2_INFO_MINLENGTH, &min);
  // An empty match would redact nothing and stall the scan.
  if (min == 0) rule_error(r.name, "pattern can match the empty string");
  return code;
}

constexpr size_t npos = std::string_view::npos;

// A match: [start, end) of the text, by rule (index in Impl::rules).
struct Found {
  size_t start = npos, end = 0;
  int rule = -1;
  bool before(const Found &o) const {
    return start < o.start || (start == o.start && rule < o.rule);
  }
};

} // namespace

// --- the redactor --------------------------------------------------------------

struct Redactor::Impl {
  struct Rule {
    std::string name, replacement;
    const pcre2_code *code = nullptr; // in `owned`, or a process-wide built-in
    bool jit = false;
  };
  std::vector<Rule> rules;    // built-ins (when on) first, then the policy's
  std::vector<CodePtr> owned; // the policy rules' compiled patterns
  int builtin_count = 0;
  std::unique_ptr<pcre2_match_data, MatchDataFree> match;
  std::unique_ptr<pcre2_match_context, MatchContextFree> context;
  std::unique_ptr<pcre2_jit_stack, JitStackFree> stack;

  void add(const RedactionRule &r, uint32_t extra);
  bool match_at(int rule, std::string_view s, size_t from, Found &f) const;
  Found next_builtin(std::string_view s, size_t from) const;
  void try_gram(std::string_view s, size_t i, size_t from, Found &best) const;
  Found next_policy(int rule, std::string_view s, size_t from) const;
  Found next(std::string_view s, size_t from, std::vector<Found> &cache) const;
  bool redact(std::string &text, std::vector<RedactionHit> &hits) const;
  static const std::vector<Rule> &compiled_builtins();
};

// The built-ins compiled and JIT-compiled once per process: a compile
// builds a Redactor per request, and compiling a dozen patterns costs more
// than redacting a whole bundle. Compiled code is read-only when matching,
// so every Redactor (each with its own match data) shares it.
const std::vector<Redactor::Impl::Rule> &Redactor::Impl::compiled_builtins() {
  static const auto *rules = [] {
    auto *v = new std::vector<Rule>;
    for (const RedactionRule &r : Redactor::builtin_rules()) {
      // Compiled anchored: they are only ever tried where the prefilter
      // saw their anchor (JIT does not take PCRE2_ANCHORED at match time).
      pcre2_code *code = compile(r, PCRE2_ANCHORED).release();
      bool jit = pcre2_jit_compile(code, PCRE2_JIT_COMPLETE) == 0;
      v->push_back({r.name, "[REDACTED:" + r.name + "]", code, jit});
    }
    return v; // never freed: shared by every Redactor until exit
  }();
  return *rules;
}

void Redactor::Impl::add(const RedactionRule &r, uint32_t extra) {
  if (r.name.empty()) throw Error(Code::kInvalidArg, "redaction rule without a name");
  for (const Rule &o : rules)
    if (o.name == r.name) rule_error(r.name, "another rule has this name");
  Rule rule;
  rule.name = r.name;
  rule.replacement = r.replacement.empty() ? "[REDACTED:" + r.name + "]" : r.replacement;
  owned.push_back(compile(r, extra));
  rule.code = owned.back().get();
  // Without JIT (an unsupported CPU) the interpreter gives the same matches.
  rule.jit = pcre2_jit_compile(owned.back().get(), PCRE2_JIT_COMPLETE) == 0;
  rules.push_back(std::move(rule));
}

// One match attempt of `rule` from `from` (anchored there for built-ins,
// compiled so); false when there is none.
bool Redactor::Impl::match_at(int rule, std::string_view s, size_t from, Found &f) const {
  const Rule &r = rules[rule];
  auto subject = reinterpret_cast<PCRE2_SPTR>(s.data());
  int rc = r.jit ? pcre2_jit_match(r.code, subject, s.size(), from, 0, match.get(), context.get())
                 : pcre2_match(r.code, subject, s.size(), from, 0, match.get(), context.get());
  if (rc == PCRE2_ERROR_NOMATCH) return false;
  // A rule that cannot finish (match or JIT stack limit) must not pass its
  // secret through silently.
  if (rc < 0) rule_error(r.name, "matching failed: " + pcre2_message(rc));
  const PCRE2_SIZE *ov = pcre2_get_ovector_pointer(match.get());
  f = {ov[0], ov[1], rule};
  return true;
}

// Tries the detectors anchored on the gram at i, keeping the best match.
void Redactor::Impl::try_gram(std::string_view s, size_t i, size_t from, Found &best) const {
  const Prefilter &pf = prefilter();
  uint32_t g = gram_at(s.data() + i), h = gram_hash(g);
  for (size_t k = pf.first[h]; k < pf.first[h + 1]; ++k) {
    const GramEntry *it = &pf.entries[k];
    if (it->gram != g) continue;
    if (it->offset < 0 && i < size_t(-it->offset)) continue;
    size_t pos = i + it->offset;
    // A match starts at or after its attempt, so a later attempt cannot win.
    if (pos < from || pos > best.start || (pos == best.start && it->rule > best.rule)) continue;
    if ((uint8_t(s[pos]) & 0xC0) == 0x80) continue; // inside a UTF-8 character
    Precheck pre = builtins()[it->rule].precheck;
    if (pre && !pre(s, pos)) continue;
    Found f;
    if (match_at(it->rule, s, pos, f) && f.end > f.start && f.before(best)) best = f;
  }
}

// The best built-in match attempted at or after `from`. Once one is found,
// anchors up to its start (plus the longest gram offset) can still beat it.
Found Redactor::Impl::next_builtin(std::string_view s, size_t from) const {
  const Prefilter &pf = prefilter();
  Found best;
  // An anchor's gram may start a byte before its match (url_password).
  for (size_t i = pf.next(s, from ? from - 1 : 0); i != npos; i = pf.next(s, i + 1)) {
    if (best.rule >= 0 && i > best.start + kMaxBack) break;
    try_gram(s, i, from, best);
  }
  return best;
}

// The policy rule's first non-empty match at or after `from`.
Found Redactor::Impl::next_policy(int rule, std::string_view s, size_t from) const {
  Found f;
  while (from <= s.size() && match_at(rule, s, from, f)) {
    if (f.end > f.start) return f;
    // Empty (the pattern used \K or a lookaround): go on from the next
    // character.
    from = f.end + 1;
    while (from < s.size() && (uint8_t(s[from]) & 0xC0) == 0x80) ++from;
  }
  return {};
}

// The leftmost match at or after `from` over every rule. cache[0] is the
// built-ins' next match, cache[1 + k] the k-th policy rule's; each is
// recomputed only once the scan has passed its start.
Found Redactor::Impl::next(std::string_view s, size_t from, std::vector<Found> &cache) const {
  Found best;
  for (size_t k = 0; k < cache.size(); ++k) {
    Found &c = cache[k];
    if (c.rule == -2) continue; // nothing more for this one
    if (c.rule < 0 || c.start < from) {
      c = k == 0 ? next_builtin(s, from) : next_policy(builtin_count + int(k) - 1, s, from);
      if (c.rule < 0) {
        c.rule = -2;
        continue;
      }
    }
    if (c.before(best)) best = c;
  }
  return best;
}

bool Redactor::Impl::redact(std::string &text, std::vector<RedactionHit> &hits) const {
  std::string_view s = text;
  // Most strings hold no anchor at all: answer them without allocating.
  bool only_builtins = size_t(builtin_count) == rules.size();
  if (only_builtins && (builtin_count == 0 || prefilter().next(s, 0) == npos)) return false;
  std::vector<Found> cache(1 + rules.size() - builtin_count);
  if (builtin_count == 0) cache[0].rule = -2;
  std::vector<int64_t> counts(rules.size());
  std::string out;
  size_t cursor = 0;
  bool changed = false;
  for (Found m = next(s, 0, cache); m.rule >= 0; m = next(s, cursor, cache)) {
    const std::string &with = rules[m.rule].replacement;
    if (out.empty()) out.reserve(s.size() + 64);
    out.append(s.substr(cursor, m.start - cursor)).append(with);
    changed |= s.substr(m.start, m.end - m.start) != with;
    ++counts[m.rule];
    cursor = m.end;
  }
  for (size_t r = 0; r < rules.size(); ++r) {
    if (!counts[r]) continue;
    auto it = std::find_if(hits.begin(), hits.end(),
                           [&](const RedactionHit &h) { return h.rule == rules[r].name; });
    if (it != hits.end())
      it->count += counts[r];
    else
      hits.push_back({rules[r].name, counts[r]});
  }
  if (!changed) return false;
  out.append(s.substr(cursor));
  text = std::move(out);
  return true;
}

Redactor::Redactor(std::vector<RedactionRule> rules, bool builtin) : impl_(new Impl) {
  if (builtin) {
    impl_->rules = Impl::compiled_builtins();
    impl_->builtin_count = int(impl_->rules.size());
  }
  for (const RedactionRule &r : rules) impl_->add(r, 0);
  impl_->match.reset(pcre2_match_data_create(1, nullptr));
  impl_->context.reset(pcre2_match_context_create(nullptr));
  impl_->stack.reset(pcre2_jit_stack_create(32 * 1024, 1024 * 1024, nullptr));
  if (!impl_->match || !impl_->context || !impl_->stack) throw std::bad_alloc();
  pcre2_jit_stack_assign(impl_->context.get(), nullptr, impl_->stack.get());
}

Redactor::~Redactor() = default;
Redactor::Redactor(Redactor &&) noexcept = default;
Redactor &Redactor::operator=(Redactor &&) noexcept = default;

bool Redactor::may_match(std::string_view text) const {
  const Impl &i = *impl_;
  if (size_t(i.builtin_count) != i.rules.size()) return true;
  return i.builtin_count > 0 && prefilter().next(text, 0) != npos;
}

bool Redactor::redact(std::string &text, std::vector<RedactionHit> &hits) const {
  return impl_->redact(text, hits);
}

const std::vector<RedactionRule> &Redactor::builtin_rules() {
  static const std::vector<RedactionRule> rules = [] {
    std::vector<RedactionRule> v;
    for (const Builtin &b : builtins()) v.push_back({b.name, b.pattern, {}});
    return v;
  }();
  return rules;
}

} // namespace ctxdb::policy
