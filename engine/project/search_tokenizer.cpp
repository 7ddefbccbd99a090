#include "project/search_tokenizer.hpp"

#include "store/fts5.hpp"
#include "util/cjk.hpp"

#include <sqlite3.h>

#include <new>
#include <string_view>

namespace ctxdb::project {

namespace {

struct Words {
  fts5_tokenizer unicode61;
  Fts5Tokenizer *inner = nullptr;
};

using TokenFn = int (*)(void *, int, const char *, int, int, int);

// unicode61's tokens of a stretch of the text, their offsets moved from
// the stretch's start to the text's.
struct Shifted {
  void *ctx;
  TokenFn token;
  int base;
  static int on_token(void *p, int flags, const char *token, int n, int start, int end) {
    auto *s = static_cast<Shifted *>(p);
    return s->token(s->ctx, flags, token, n, start + s->base, end + s->base);
  }
};

int create(void *api_ptr, const char **args, int n_args, Fts5Tokenizer **out) {
  auto *api = static_cast<fts5_api *>(api_ptr);
  void *user_data = nullptr;
  fts5_tokenizer unicode61;
  int rc = api->xFindTokenizer(api, "unicode61", &user_data, &unicode61);
  if (rc != SQLITE_OK) return rc;
  auto *w = new (std::nothrow) Words{unicode61};
  if (!w) return SQLITE_NOMEM;
  rc = unicode61.xCreate(user_data, args, n_args, &w->inner);
  if (rc != SQLITE_OK) {
    delete w;
    return rc;
  }
  *out = reinterpret_cast<Fts5Tokenizer *>(w);
  return SQLITE_OK;
}

void destroy(Fts5Tokenizer *t) {
  auto *w = reinterpret_cast<Words *>(t);
  w->unicode61.xDelete(w->inner);
  delete w;
}

// Stretches without CJK go to unicode61 whole; each CJK character is
// handed over as it is (it has no case and no diacritics to fold).
int tokenize(Fts5Tokenizer *t, void *ctx, int flags, const char *text, int n, TokenFn token) {
  auto *w = reinterpret_cast<Words *>(t);
  std::string_view s(text, size_t(n));
  auto stretch = [&](size_t from, size_t to) {
    if (to <= from) return SQLITE_OK;
    Shifted shifted{ctx, token, int(from)};
    return w->unicode61.xTokenize(w->inner, &shifted, flags, text + from, int(to - from),
                                  Shifted::on_token);
  };
  size_t start = 0;
  for (size_t i = 0; i < s.size();) {
    size_t at = i;
    if (!util::is_cjk(util::next_code_point(s, i))) continue;
    if (int rc = stretch(start, at); rc != SQLITE_OK) return rc;
    if (int rc = token(ctx, 0, text + at, int(i - at), int(at), int(i)); rc != SQLITE_OK) return rc;
    start = i;
  }
  return stretch(start, s.size());
}

} // namespace

void register_search_tokenizer(sqlite3 *db) {
  fts5_api *api = store::fts5_api_of(db);
  if (!api) return; // no FTS5: opening the search tables fails with SQLite's own error
  static fts5_tokenizer words{create, destroy, tokenize};
  api->xCreateTokenizer(api, kSearchTokenizer, api, &words, nullptr);
}

} // namespace ctxdb::project
