// token_commands.cpp — `ctxdb tokens`: exact token counts of a file or of
// stdin. It needs no database: the library carries the rank files, and
// CTXDB_TOKENIZER_DATA, or the tokenizer_data_dir of a database given with
// --db (opened read-only), overrides them.
#include "command_io.hpp"
#include "commands.hpp"

#include <ctxdb/ctxdb.hpp>

#include <cstdio>
#include <optional>
#include <string>

namespace cli {

int cmd_tokens(const Args &args) {
  std::string file = args.positional.empty() ? "-" : args.positional[0];
  std::string encoding = args.value("--encoding").value_or("o200k_base");
  std::string mode = args.value("--specials").value_or("disallow");
  int specials = mode == "disallow" ? CTXDB_SPECIALS_DISALLOW
                 : mode == "allow"  ? CTXDB_SPECIALS_ALLOW
                 : mode == "text"   ? CTXDB_SPECIALS_TEXT
                                    : -1;
  if (specials < 0) throw UsageError("--specials must be disallow, allow or text");
  std::string text = read_input(file);
  std::optional<ctxdb::Database> db;
  if (args.db) db.emplace(open_db(args, Access::read_only));
  if (!args.has("--ids")) {
    int64_t n = db ? db->count_tokens(text, encoding, specials)
                   : ctxdb::count_tokens(text, encoding, specials);
    std::printf("%lld\n", static_cast<long long>(n));
    return 0;
  }
  std::vector<uint32_t> ids = db ? db->encode_tokens(text, encoding, specials)
                                 : ctxdb::encode_tokens(text, encoding, specials);
  std::string out = "[";
  for (size_t i = 0; i < ids.size(); ++i) out += (i ? "," : "") + std::to_string(ids[i]);
  std::printf("%s]\n", out.c_str());
  return 0;
}

} // namespace cli
