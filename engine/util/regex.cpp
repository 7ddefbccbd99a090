#define PCRE2_CODE_UNIT_WIDTH 8
#include "util/regex.hpp"

#include "error.hpp"

#include <pcre2.h>

#include <new>
#include <string>

namespace ctxdb::util {

struct Regex::Impl {
  pcre2_code *code = nullptr;
  pcre2_match_data *match = nullptr;
  pcre2_match_context *context = nullptr;
  pcre2_jit_stack *stack = nullptr;
  ~Impl() {
    pcre2_jit_stack_free(stack);
    pcre2_match_context_free(context);
    pcre2_match_data_free(match);
    pcre2_code_free(code);
  }
};

namespace {

std::string pcre2_message(int code) {
  PCRE2_UCHAR msg[256];
  pcre2_get_error_message(code, msg, sizeof msg);
  return reinterpret_cast<const char *>(msg);
}

} // namespace

Regex::Regex(std::string_view pattern, RegexOptions options) : impl_(std::make_unique<Impl>()) {
  // MATCH_INVALID_UTF: invalid UTF-8 in the text never matches, instead
  // of failing the whole search.
  uint32_t flags =
      PCRE2_UTF | PCRE2_MATCH_INVALID_UTF | (options.ignore_case ? PCRE2_CASELESS : 0) |
      (options.multiline ? PCRE2_MULTILINE : 0) | (options.literal ? PCRE2_LITERAL : 0);
  int err = 0;
  PCRE2_SIZE at = 0;
  if (pattern.empty()) pattern = ""; // PCRE2 refuses a null pointer, even of length 0
  impl_->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(), flags,
                              &err, &at, nullptr);
  if (!impl_->code)
    throw Error(Code::kInvalidArg, "invalid regular expression '" + std::string(pattern) +
                                       "' at offset " + std::to_string(at) + ": " +
                                       pcre2_message(err));
  pcre2_jit_compile(impl_->code, PCRE2_JIT_COMPLETE); // falls back to the interpreter if absent
  impl_->match = pcre2_match_data_create(1, nullptr);
  impl_->context = pcre2_match_context_create(nullptr);
  impl_->stack = pcre2_jit_stack_create(32 * 1024, 1024 * 1024, nullptr);
  if (!impl_->match || !impl_->context || !impl_->stack) throw std::bad_alloc();
  pcre2_jit_stack_assign(impl_->context, nullptr, impl_->stack);
}

Regex::~Regex() = default;
Regex::Regex(Regex &&) noexcept = default;
Regex &Regex::operator=(Regex &&) noexcept = default;

bool Regex::find(std::string_view s, size_t from, size_t &start, size_t &end) {
  int rc = pcre2_match(impl_->code, reinterpret_cast<PCRE2_SPTR>(s.data()), s.size(), from, 0,
                       impl_->match, impl_->context);
  if (rc == PCRE2_ERROR_NOMATCH) return false;
  if (rc < 0) throw Error(Code::kInvalidArg, "regular expression failed: " + pcre2_message(rc));
  PCRE2_SIZE *ov = pcre2_get_ovector_pointer(impl_->match);
  start = ov[0];
  end = ov[1];
  return true;
}

bool Regex::contains(std::string_view s) {
  size_t start = 0, end = 0;
  return find(s, 0, start, end);
}

namespace {

std::string ascii_folded(std::string_view s) {
  std::string out(s);
  for (char &c : out)
    if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
  return out;
}

} // namespace

CaselessFinder::CaselessFinder(std::string_view needle) {
  try {
    regex_ = std::make_unique<Regex>(needle, RegexOptions{.ignore_case = true, .literal = true});
  } catch (const Error &) {
    folded_ = ascii_folded(needle); // too large for PCRE2
  }
}

bool CaselessFinder::find(std::string_view s, size_t &start, size_t &end) {
  if (regex_) return regex_->find(s, 0, start, end);
  size_t at = ascii_folded(s).find(folded_);
  if (at == std::string::npos) return false;
  start = at;
  end = at + folded_.size();
  return true;
}

} // namespace ctxdb::util
