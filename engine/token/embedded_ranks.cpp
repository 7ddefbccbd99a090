#include "token/embedded_ranks.hpp"

namespace ctxdb::token {

#ifdef CTXDB_RANK_DIR

// .incbin copies each file into .rodata as it is at build time, in the
// assembler's time (5 MB of C array would cost the compiler a minute).
// The symbols are hidden: only this file names them.
#define CTXDB_INCBIN(sym, file)                                                                    \
  asm(".section .rodata\n.balign 16\n.hidden " #sym "\n.global " #sym "\n" #sym ":\n"              \
      ".incbin \"" CTXDB_RANK_DIR "/" file "\"\n.hidden " #sym "_end\n.global " #sym "_end\n" #sym \
      "_end:\n.previous\n");                                                                       \
  extern "C" const char sym[], sym##_end[];

CTXDB_INCBIN(ctxdb_rank_o200k, "o200k_base.tiktoken")
CTXDB_INCBIN(ctxdb_rank_cl100k, "cl100k_base.tiktoken")

std::string_view embedded_rank_file(std::string_view rank_file) {
  if (rank_file == "o200k_base.tiktoken")
    return {ctxdb_rank_o200k, size_t(ctxdb_rank_o200k_end - ctxdb_rank_o200k)};
  if (rank_file == "cl100k_base.tiktoken")
    return {ctxdb_rank_cl100k, size_t(ctxdb_rank_cl100k_end - ctxdb_rank_cl100k)};
  return {};
}

#else

std::string_view embedded_rank_file(std::string_view) { return {}; }

#endif

} // namespace ctxdb::token
