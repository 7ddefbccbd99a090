"""The C ABI of include/ctxdb/ctxdb.h, mirrored one function at a time.

Nothing here adds behaviour: each C function is declared with its ctypes
argtypes/restype under its C prototype. The library is loaded on first use
(see _loader.py); after that every function is a plain module attribute,
e.g. ``_capi.ctxdb_open(path, cfg, len(cfg), byref(db))``.

Conventions kept from the header:
- ``char **out`` parameters are ``POINTER(c_void_p)``, not ``c_char_p``:
  the caller owns the pointer, reads it with ``ctypes.string_at(ptr, len)``
  and hands it back to ``ctxdb_free`` exactly once.
- ``const char *`` inputs are ``c_char_p`` and always go with an explicit
  length (only paths are NUL-terminated).
- Handles are opaque pointers (``c_void_p``).
"""
from __future__ import annotations

import threading
from ctypes import CDLL, CFUNCTYPE, POINTER, c_char_p, c_int, c_int64, c_size_t, c_void_p
from ctypes import CDLL, POINTER, c_char_p, c_int, c_int64, c_size_t, c_uint32, c_void_p
from typing import Any, Dict, List, Optional, Tuple

from . import _loader

#: CTXDB_ABI_VERSION of the header this module mirrors.
ABI_VERSION = _loader.EXPECTED_ABI

# ---- status codes (enum in ctxdb.h; explicitly numbered, append-only) ----
OK = 0
MISUSE = 1
INVALID_ARG = 2
INVALID_UTF8 = 3
INVALID_JSON = 4
NOT_FOUND = 5
CONFLICT = 6
BUSY = 7
BUDGET = 8
CHECK_FAILED = 9
CORRUPT = 10
IO = 11
NOMEM = 12
SCHEMA = 13
READONLY = 14
INTERNAL = 15
NOTADB = 16
ROW = 100
DONE = 101

# ---- handles --------------------------------------------------------------
ctxdb_db_p = c_void_p    # ctxdb_db *   (typedef struct ctxdb_db ctxdb_db;)
ctxdb_iter_p = c_void_p  # ctxdb_iter * (typedef struct ctxdb_iter ctxdb_iter;)

_PROTOTYPES: List[Tuple[str, Any, Tuple[Any, ...]]] = []


def _proto(name: str, restype: Any, *argtypes: Any) -> None:
    _PROTOTYPES.append((name, restype, argtypes))


# ---- versions ---------------------------------------------------------------

# const char *ctxdb_version(void);
_proto("ctxdb_version", c_char_p)

# int ctxdb_version_number(void);
_proto("ctxdb_version_number", c_int)

# int ctxdb_abi_version(void);
_proto("ctxdb_abi_version", c_int)

# const char *ctxdb_errstr(int code);
_proto("ctxdb_errstr", c_char_p, c_int)

# ---- handles ----------------------------------------------------------------

# const char *ctxdb_errmsg(const ctxdb_db *db);
_proto("ctxdb_errmsg", c_char_p, ctxdb_db_p)

# void ctxdb_free(void *p);
_proto("ctxdb_free", None, c_void_p)

# ---- opening ------------------------------------------------------------------

# int ctxdb_open(const char *path, const char *config_json, size_t config_len,
#                ctxdb_db **out_db);
_proto("ctxdb_open", c_int, c_char_p, c_char_p, c_size_t, POINTER(ctxdb_db_p))

# int ctxdb_close(ctxdb_db *db);
_proto("ctxdb_close", c_int, ctxdb_db_p)

# ---- sessions -----------------------------------------------------------------

# int ctxdb_session_create(ctxdb_db *db, const char *session_json, size_t len,
#                          char **out, size_t *out_len);
_proto("ctxdb_session_create", c_int,
       ctxdb_db_p, c_char_p, c_size_t, POINTER(c_void_p), POINTER(c_size_t))

# int ctxdb_session_get(ctxdb_db *db, const char *session_id, size_t id_len,
#                       char **out, size_t *out_len);
_proto("ctxdb_session_get", c_int,
       ctxdb_db_p, c_char_p, c_size_t, POINTER(c_void_p), POINTER(c_size_t))

# int ctxdb_session_list(ctxdb_db *db, char **out, size_t *out_len);
_proto("ctxdb_session_list", c_int,
       ctxdb_db_p, POINTER(c_void_p), POINTER(c_size_t))

# ---- the event log --------------------------------------------------------------

# int ctxdb_append(ctxdb_db *db, const char *session_id, size_t id_len,
#                  const char *event_json, size_t len, char **out,
#                  size_t *out_len);
_proto("ctxdb_append", c_int,
       ctxdb_db_p, c_char_p, c_size_t, c_char_p, c_size_t,
       POINTER(c_void_p), POINTER(c_size_t))

# int ctxdb_append_batch(ctxdb_db *db, const char *session_id, size_t id_len,
#                        const char *ndjson, size_t len, char **out,
#                        size_t *out_len);
_proto("ctxdb_append_batch", c_int,
       ctxdb_db_p, c_char_p, c_size_t, c_char_p, c_size_t,
       POINTER(c_void_p), POINTER(c_size_t))

# int ctxdb_event_get(ctxdb_db *db, const char *event_id, size_t id_len,
#                     char **out, size_t *out_len);
_proto("ctxdb_event_get", c_int,
       ctxdb_db_p, c_char_p, c_size_t, POINTER(c_void_p), POINTER(c_size_t))

# int ctxdb_events_iter(ctxdb_db *db, const char *session_id, size_t id_len,
#                       int64_t from_seq, int64_t to_seq, ctxdb_iter **out_iter);
_proto("ctxdb_events_iter", c_int,
       ctxdb_db_p, c_char_p, c_size_t, c_int64, c_int64, POINTER(ctxdb_iter_p))

# int ctxdb_iter_next(ctxdb_iter *iter, const char **row, size_t *row_len);
# (*row is borrowed: valid until the next call on the iterator; not freed.)
_proto("ctxdb_iter_next", c_int,
       ctxdb_iter_p, POINTER(c_void_p), POINTER(c_size_t))

# void ctxdb_iter_free(ctxdb_iter *iter);
_proto("ctxdb_iter_free", None, ctxdb_iter_p)

# int ctxdb_verify(ctxdb_db *db, const char *session_id, size_t id_len,
#                  char **out, size_t *out_len);
_proto("ctxdb_verify", c_int,
       ctxdb_db_p, c_char_p, c_size_t, POINTER(c_void_p), POINTER(c_size_t))

# int ctxdb_verify_with(ctxdb_db *db, const char *options_json, size_t len,
#                       char **out, size_t *out_len);
_proto("ctxdb_verify_with", c_int,
       ctxdb_db_p, c_char_p, c_size_t, POINTER(c_void_p), POINTER(c_size_t))

# int ctxdb_anchor(ctxdb_db *db, const char *options_json, size_t len,
#                  char **out, size_t *out_len);
_proto("ctxdb_anchor", c_int,
       ctxdb_db_p, c_char_p, c_size_t, POINTER(c_void_p), POINTER(c_size_t))

# int ctxdb_rebuild(ctxdb_db *db, const char *options_json, size_t len,
#                   char **out, size_t *out_len);
_proto("ctxdb_rebuild", c_int,
       ctxdb_db_p, c_char_p, c_size_t, POINTER(c_void_p), POINTER(c_size_t))

# int ctxdb_optimize(ctxdb_db *db, const char *options_json, size_t len,
#                    char **out, size_t *out_len);
_proto("ctxdb_optimize", c_int,
       ctxdb_db_p, c_char_p, c_size_t, POINTER(c_void_p), POINTER(c_size_t))

# int ctxdb_import(ctxdb_db *db, const char *ndjson, size_t len, char **out,
#                  size_t *out_len);
_proto("ctxdb_import", c_int,
       ctxdb_db_p, c_char_p, c_size_t, POINTER(c_void_p), POINTER(c_size_t))

# int ctxdb_transcript_import(ctxdb_db *db, const char *options_json, size_t len,
#                             char **out, size_t *out_len);
_proto("ctxdb_transcript_import", c_int,
       ctxdb_db_p, c_char_p, c_size_t, POINTER(c_void_p), POINTER(c_size_t))

# ---- the session tree -------------------------------------------------------------

# int ctxdb_branch_fork(ctxdb_db *db, const char *session_id, size_t id_len,
#                       const char *spec_json, size_t len, char **out,
#                       size_t *out_len);
_proto("ctxdb_branch_fork", c_int,
       ctxdb_db_p, c_char_p, c_size_t, c_char_p, c_size_t,
       POINTER(c_void_p), POINTER(c_size_t))

# int ctxdb_branch_list(ctxdb_db *db, const char *session_id, size_t id_len,
#                       char **out, size_t *out_len);
_proto("ctxdb_branch_list", c_int,
       ctxdb_db_p, c_char_p, c_size_t, POINTER(c_void_p), POINTER(c_size_t))

# int ctxdb_branch_path(ctxdb_db *db, const char *session_id, size_t id_len,
#                       const char *branch, size_t branch_len,
#                       ctxdb_iter **out_iter);
_proto("ctxdb_branch_path", c_int,
       ctxdb_db_p, c_char_p, c_size_t, c_char_p, c_size_t, POINTER(ctxdb_iter_p))

# int ctxdb_event_children(ctxdb_db *db, const char *event_id, size_t id_len,
#                          char **out, size_t *out_len);
_proto("ctxdb_event_children", c_int,
       ctxdb_db_p, c_char_p, c_size_t, POINTER(c_void_p), POINTER(c_size_t))


# ---- views of a branch ---------------------------------------------------------

# int ctxdb_messages_list(ctxdb_db *db, const char *session_id, size_t id_len,
#                         const char *branch, size_t branch_len, char **out,
#                         size_t *out_len);
_proto("ctxdb_messages_list", c_int,
       ctxdb_db_p, c_char_p, c_size_t, c_char_p, c_size_t,
       POINTER(c_void_p), POINTER(c_size_t))

# int ctxdb_tool_calls_list(ctxdb_db *db, const char *session_id, size_t id_len,
#                           const char *branch, size_t branch_len, char **out,
#                           size_t *out_len);
_proto("ctxdb_tool_calls_list", c_int,
       ctxdb_db_p, c_char_p, c_size_t, c_char_p, c_size_t,
       POINTER(c_void_p), POINTER(c_size_t))

# int ctxdb_files_list(ctxdb_db *db, const char *session_id, size_t id_len,
#                      const char *branch, size_t branch_len, char **out,
#                      size_t *out_len);
_proto("ctxdb_files_list", c_int,
       ctxdb_db_p, c_char_p, c_size_t, c_char_p, c_size_t,
       POINTER(c_void_p), POINTER(c_size_t))


# ---- state and stats -------------------------------------------------------------

# int ctxdb_state_get(ctxdb_db *db, const char *session_id, size_t id_len,
#                     const char *query_json, size_t len, char **out,
#                     size_t *out_len);
_proto("ctxdb_state_get", c_int,
       ctxdb_db_p, c_char_p, c_size_t, c_char_p, c_size_t,
       POINTER(c_void_p), POINTER(c_size_t))

# int ctxdb_stats_get(ctxdb_db *db, const char *session_id, size_t id_len,
#                     char **out, size_t *out_len);
_proto("ctxdb_stats_get", c_int,
       ctxdb_db_p, c_char_p, c_size_t, POINTER(c_void_p), POINTER(c_size_t))


# ---- artifacts -------------------------------------------------------------------

# int ctxdb_artifact_put(ctxdb_db *db, const void *data, size_t len,
#                        const char *meta_json, size_t meta_len, char **out,
#                        size_t *out_len);
_proto("ctxdb_artifact_put", c_int,
       ctxdb_db_p, c_char_p, c_size_t, c_char_p, c_size_t,
       POINTER(c_void_p), POINTER(c_size_t))

# int ctxdb_artifact_read(ctxdb_db *db, const char *id, size_t id_len,
#                         int64_t offset, int64_t length, void **out,
#                         size_t *out_len);
_proto("ctxdb_artifact_read", c_int,
       ctxdb_db_p, c_char_p, c_size_t, c_int64, c_int64,
       POINTER(c_void_p), POINTER(c_size_t))

# int ctxdb_artifact_info(ctxdb_db *db, const char *id, size_t id_len,
#                         char **out, size_t *out_len);
_proto("ctxdb_artifact_info", c_int,
       ctxdb_db_p, c_char_p, c_size_t, POINTER(c_void_p), POINTER(c_size_t))

# int ctxdb_artifact_list(ctxdb_db *db, const char *session_id, size_t id_len,
#                         char **out, size_t *out_len);
_proto("ctxdb_artifact_list", c_int,
       ctxdb_db_p, c_char_p, c_size_t, POINTER(c_void_p), POINTER(c_size_t))

# int ctxdb_artifact_lines(ctxdb_db *db, const char *id, size_t id_len,
#                          int64_t first, int64_t count, char **out,
#                          size_t *out_len);
_proto("ctxdb_artifact_lines", c_int,
       ctxdb_db_p, c_char_p, c_size_t, c_int64, c_int64,
       POINTER(c_void_p), POINTER(c_size_t))

# int ctxdb_artifact_preview(ctxdb_db *db, const char *id, size_t id_len,
#                            const char *spec_json, size_t len, char **out,
#                            size_t *out_len);
_proto("ctxdb_artifact_preview", c_int,
       ctxdb_db_p, c_char_p, c_size_t, c_char_p, c_size_t,
       POINTER(c_void_p), POINTER(c_size_t))

# int ctxdb_artifact_search(ctxdb_db *db, const char *id, size_t id_len,
#                           const char *pattern, size_t pattern_len,
#                           const char *options_json, size_t options_len,
#                           char **out, size_t *out_len);
_proto("ctxdb_artifact_search", c_int,
       ctxdb_db_p, c_char_p, c_size_t, c_char_p, c_size_t, c_char_p, c_size_t,
       POINTER(c_void_p), POINTER(c_size_t))

# int ctxdb_export(ctxdb_db *db, const char *session_id, size_t id_len,
#                  ctxdb_iter **out_iter);
_proto("ctxdb_export", c_int, ctxdb_db_p, c_char_p, c_size_t, POINTER(ctxdb_iter_p))

# ---- the streaming put (ctxdb_artifact_writer_*) ----
ctxdb_artifact_writer_p = c_void_p  # ctxdb_artifact_writer *

# int ctxdb_artifact_writer_open(ctxdb_db *db, const char *meta_json,
#                                size_t meta_len, ctxdb_artifact_writer **out_writer);
_proto("ctxdb_artifact_writer_open", c_int,
       ctxdb_db_p, c_char_p, c_size_t, POINTER(ctxdb_artifact_writer_p))

# int ctxdb_artifact_writer_write(ctxdb_artifact_writer *w, const void *data, size_t len);
_proto("ctxdb_artifact_writer_write", c_int, ctxdb_artifact_writer_p, c_char_p, c_size_t)

# int ctxdb_artifact_writer_commit(ctxdb_artifact_writer *w, char **out, size_t *out_len);
_proto("ctxdb_artifact_writer_commit", c_int,
       ctxdb_artifact_writer_p, POINTER(c_void_p), POINTER(c_size_t))

# void ctxdb_artifact_writer_free(ctxdb_artifact_writer *w);
_proto("ctxdb_artifact_writer_free", None, ctxdb_artifact_writer_p)


# ---- the context compiler ----------------------------------------------------------

# int ctxdb_compile(ctxdb_db *db, const char *request_json, size_t len,
#                   char **out, size_t *out_len);
_proto("ctxdb_compile", c_int,
       ctxdb_db_p, c_char_p, c_size_t, POINTER(c_void_p), POINTER(c_size_t))

# int ctxdb_bundle_convert(ctxdb_db *db, const char *bundle_json, size_t len,
#                          const char *format, size_t format_len, char **out,
#                          size_t *out_len);
_proto("ctxdb_bundle_convert", c_int,
       ctxdb_db_p, c_char_p, c_size_t, c_char_p, c_size_t,
       POINTER(c_void_p), POINTER(c_size_t))

# typedef int (*ctxdb_token_count_fn)(void *user_data, const char *text,
#                                     size_t len, int64_t *out_tokens);
# (text is c_void_p: it is not NUL-terminated; read it with string_at.)
ctxdb_token_count_fn = CFUNCTYPE(c_int, c_void_p, c_void_p, c_size_t, POINTER(c_int64))

# int ctxdb_token_counter_set(ctxdb_db *db, const char *name, size_t name_len,
#                             ctxdb_token_count_fn fn, void *user_data);
_proto("ctxdb_token_counter_set", c_int,
       ctxdb_db_p, c_char_p, c_size_t, ctxdb_token_count_fn, c_void_p)

# ---- Search ----

# int ctxdb_search(ctxdb_db *db, const char *query, size_t len,
#                  const char *options_json, size_t opt_len,
#                  char **out, size_t *out_len);
_proto("ctxdb_search", c_int,
       ctxdb_db_p, c_char_p, c_size_t, c_char_p, c_size_t,
       POINTER(c_void_p), POINTER(c_size_t))

# ---- Memory --------------------------------------------------------------------

# int ctxdb_memory_write(ctxdb_db *db, const char *session_id, size_t id_len,
#     const char *memory_json, size_t len, char **out, size_t *out_len);
_proto("ctxdb_memory_write", c_int,
       ctxdb_db_p, c_char_p, c_size_t, c_char_p, c_size_t,
       POINTER(c_void_p), POINTER(c_size_t))

# int ctxdb_memory_update(ctxdb_db *db, const char *memory_id, size_t id_len,
#     const char *update_json, size_t len, char **out, size_t *out_len);
_proto("ctxdb_memory_update", c_int,
       ctxdb_db_p, c_char_p, c_size_t, c_char_p, c_size_t,
       POINTER(c_void_p), POINTER(c_size_t))

# int ctxdb_memory_forget(ctxdb_db *db, const char *memory_id, size_t id_len,
#     const char *options_json, size_t len, char **out, size_t *out_len);
_proto("ctxdb_memory_forget", c_int,
       ctxdb_db_p, c_char_p, c_size_t, c_char_p, c_size_t,
       POINTER(c_void_p), POINTER(c_size_t))

# int ctxdb_memory_get(ctxdb_db *db, const char *memory_id, size_t id_len,
#     char **out, size_t *out_len);
_proto("ctxdb_memory_get", c_int,
       ctxdb_db_p, c_char_p, c_size_t, POINTER(c_void_p), POINTER(c_size_t))

# int ctxdb_memory_list(ctxdb_db *db, const char *query_json, size_t len, char
#     **out, size_t *out_len);
_proto("ctxdb_memory_list", c_int,
       ctxdb_db_p, c_char_p, c_size_t, POINTER(c_void_p), POINTER(c_size_t))

# int ctxdb_memory_retrieve(ctxdb_db *db, const char *query_json, size_t len,
#     char **out, size_t *out_len);
_proto("ctxdb_memory_retrieve", c_int,
       ctxdb_db_p, c_char_p, c_size_t, POINTER(c_void_p), POINTER(c_size_t))

# int ctxdb_memory_promote(ctxdb_db *db, const char *session_id, size_t
#     id_len, const char *candidates_json, size_t len, char **out, size_t
#     *out_len);
_proto("ctxdb_memory_promote", c_int,
       ctxdb_db_p, c_char_p, c_size_t, c_char_p, c_size_t,
       POINTER(c_void_p), POINTER(c_size_t))
# ---- Tokenizer ----------------------------------------------------------------

SPECIALS_DISALLOW = 0
SPECIALS_ALLOW = 1
SPECIALS_TEXT = 2

# int ctxdb_tokens_count(ctxdb_db *db, const char *encoding, size_t enc_len,
#                        const char *text, size_t len, int specials,
#                        int64_t *out_count);
_proto("ctxdb_tokens_count", c_int,
       ctxdb_db_p, c_char_p, c_size_t, c_char_p, c_size_t, c_int, POINTER(c_int64))

# int ctxdb_tokens_encode(ctxdb_db *db, const char *encoding, size_t enc_len,
#                         const char *text, size_t len, int specials,
#                         uint32_t **out_ids, size_t *out_n);
_proto("ctxdb_tokens_encode", c_int,
       ctxdb_db_p, c_char_p, c_size_t, c_char_p, c_size_t, c_int,
       POINTER(POINTER(c_uint32)), POINTER(c_size_t))

# ---- compaction -----------------------------------------------------------------

# typedef int (*ctxdb_summarize_fn)(void *user_data, const char *plan_json,
#                                   size_t plan_len, ctxdb_summary_ctx *ctx);
# (plan_json is borrowed for the call: a c_void_p read with string_at.)
ctxdb_summarize_fn = CFUNCTYPE(c_int, c_void_p, c_void_p, c_size_t, c_void_p)

# int ctxdb_compact_should(ctxdb_db *db, const char *session_id, size_t id_len,
#                          const char *policy_json, size_t len, char **out,
#                          size_t *out_len);
_proto("ctxdb_compact_should", c_int,
       ctxdb_db_p, c_char_p, c_size_t, c_char_p, c_size_t,
       POINTER(c_void_p), POINTER(c_size_t))

# int ctxdb_compact_plan(ctxdb_db *db, const char *session_id, size_t id_len,
#                        const char *policy_json, size_t len, char **out,
#                        size_t *out_len);
_proto("ctxdb_compact_plan", c_int,
       ctxdb_db_p, c_char_p, c_size_t, c_char_p, c_size_t,
       POINTER(c_void_p), POINTER(c_size_t))

# int ctxdb_compact_commit(ctxdb_db *db, const char *session_id, size_t id_len,
#                          const char *plan_json, size_t plan_len,
#                          const char *summary_json, size_t summary_len,
#                          char **out, size_t *out_len);
_proto("ctxdb_compact_commit", c_int,
       ctxdb_db_p, c_char_p, c_size_t, c_char_p, c_size_t, c_char_p, c_size_t,
       POINTER(c_void_p), POINTER(c_size_t))

# int ctxdb_summary_set(ctxdb_summary_ctx *ctx, const char *summary_json,
#                       size_t len);
_proto("ctxdb_summary_set", c_int, c_void_p, c_char_p, c_size_t)

# int ctxdb_summary_error(ctxdb_summary_ctx *ctx, const char *message,
#                         size_t len);
_proto("ctxdb_summary_error", c_int, c_void_p, c_char_p, c_size_t)

# int ctxdb_compact(ctxdb_db *db, const char *session_id, size_t id_len,
#                   const char *policy_json, size_t len, ctxdb_summarize_fn fn,
#                   void *user_data, char **out, size_t *out_len);
# (fn is declared c_void_p so that None passes NULL: the built-in summarizer.)
_proto("ctxdb_compact", c_int,
       ctxdb_db_p, c_char_p, c_size_t, c_char_p, c_size_t, c_void_p, c_void_p,
       POINTER(c_void_p), POINTER(c_size_t))

# int ctxdb_branch_summarize(ctxdb_db *db, const char *session_id, size_t id_len,
#                            const char *from_leaf, size_t from_len,
#                            const char *to_event, size_t to_len, char **out,
#                            size_t *out_len);
_proto("ctxdb_branch_summarize", c_int,
       ctxdb_db_p, c_char_p, c_size_t, c_char_p, c_size_t, c_char_p, c_size_t,
       POINTER(c_void_p), POINTER(c_size_t))

# int ctxdb_compactions_list(ctxdb_db *db, const char *session_id, size_t id_len,
#                            const char *branch, size_t branch_len, char **out,
#                            size_t *out_len);
_proto("ctxdb_compactions_list", c_int,
       ctxdb_db_p, c_char_p, c_size_t, c_char_p, c_size_t,
       POINTER(c_void_p), POINTER(c_size_t))

# int ctxdb_response_record(ctxdb_db *db, const char *session_id, size_t id_len,
#                           const char *options_json, size_t opt_len,
#                           const char *response, size_t resp_len, char **out,
#                           size_t *out_len);
_proto("ctxdb_response_record", c_int,
       ctxdb_db_p, c_char_p, c_size_t, c_char_p, c_size_t, c_char_p, c_size_t,
       POINTER(c_void_p), POINTER(c_size_t))

FUNCTIONS = tuple(name for name, _, _ in _PROTOTYPES)

# ---- loading ------------------------------------------------------------------

_lock = threading.Lock()
_lib: Optional[CDLL] = None
_lib_path: Optional[str] = None


def bind(lib: CDLL) -> Dict[str, Any]:
    """Declares every prototype on ``lib``; returns {name: function}."""
    out = {}
    for name, restype, argtypes in _PROTOTYPES:
        try:
            fn = getattr(lib, name)
        except AttributeError:
            raise _loader.LibraryError(
                f"ctxdb: the library lacks {name}; it is not a complete "
                f"ctxdb ABI {ABI_VERSION} library") from None
        fn.restype = restype
        fn.argtypes = list(argtypes)
        out[name] = fn
    return out


def load() -> CDLL:
    """Loads, checks and binds the library once; returns it."""
    global _lib, _lib_path
    with _lock:
        if _lib is None:
            lib, path = _loader.load_library()
            globals().update(bind(lib))
            _lib, _lib_path = lib, path
        return _lib


def loaded_path() -> Optional[str]:
    """The path of the loaded library (None before the first use)."""
    return _lib_path


def __getattr__(name: str) -> Any:  # PEP 562: load lazily on first use
    if name in FUNCTIONS:
        load()
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
