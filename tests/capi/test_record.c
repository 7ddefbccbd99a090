/*
 * test_record.c — ctxdb_response_record through the C ABI: a provider's
 * response recorded as an AssistantMessageCreated, a retry, a conflict,
 * and every bad argument (NULL, garbage, invalid UTF-8, malformed JSON,
 * an unknown session, a missing field, a cut stream) refused with the
 * database left as it was.
 */
#include "util.h"

#include <ctxdb/ctxdb.h>

#include <stdio.h>
#include <string.h>

static ctxdb_db *g_db = NULL;

static const char *kChat =
    "{\"id\":\"chatcmpl-1\",\"model\":\"gpt-4.1\",\"choices\":[{\"index\":0,\"message\":{"
    "\"role\":\"assistant\",\"content\":\"Hi.\",\"tool_calls\":[{\"id\":\"call_1\",\"type\":"
    "\"function\",\"function\":{\"name\":\"ls\",\"arguments\":\"{\\\"dir\\\":\\\".\\\"}\"}}]},"
    "\"finish_reason\":\"tool_calls\"}],\"usage\":{\"prompt_tokens\":100,\"completion_tokens\":7,"
    "\"prompt_tokens_details\":{\"cached_tokens\":60}}}";

static const char *kFresh =
    "{\"id\":\"chatcmpl-2\",\"choices\":[{\"message\":{\"content\":\"x\"}}]}";

static const char *kOptChat = "{\"format\":\"openai.chat\"}";

static int record(const char *session, const char *opts, size_t opt_len, const char *resp,
                  size_t resp_len, char **out, size_t *n) {
  return ctxdb_response_record(g_db, session, session ? strlen(session) : 0, opts, opt_len, resp,
                               resp_len, out, n);
}

/* The session object, to compare before and after a failed call. */
static char *session_state(void) {
  char *out = NULL;
  size_t n = 0;
  CHECK_RC(ctxdb_session_get(g_db, "s", 1, &out, &n), CTXDB_OK);
  return out;
}

static void fails_at(int line, const char *session, const char *opts, const char *resp, int want,
                     const char *names) {
  char *out = (char *)1;
  size_t n = 7;
  int rc = record(session, opts, opts ? strlen(opts) : 0, resp, resp ? strlen(resp) : 0, &out, &n);
  check_rc_at(rc, want, __FILE__, line, "ctxdb_response_record");
  CHECK_AT(__FILE__, line, out == NULL && n == 0);
  if (names) CHECK_AT(__FILE__, line, strstr(ctxdb_errmsg(g_db), names) != NULL);
}
#define FAILS(session, opts, resp, want, names) fails_at(__LINE__, session, opts, resp, want, names)

static void test_records(void) {
  char *out = NULL, *again = NULL;
  size_t n = 0, n2 = 0;
  const char *v;
  size_t vlen;
  CHECK_RC(record("s", kOptChat, strlen(kOptChat), kChat, strlen(kChat), &out, &n), CTXDB_OK);
  CHECK(out && strstr(out, "\"type\":\"AssistantMessageCreated\"") != NULL);
  CHECK(out && strstr(out, "\"input_tokens\":40") != NULL);
  CHECK(out && strstr(out, "\"cache_read_tokens\":60") != NULL);
  CHECK(out && strstr(out, "{\"type\":\"tool_call\",\"id\":\"call_1\",\"name\":\"ls\","
                           "\"args\":{\"dir\":\".\"}}") != NULL);
  CHECK(out && jget(out, n, "actor", &v, &vlen) && vlen == 11 &&
        memcmp(v, "\"assistant\"", 11) == 0);
  /* A retry returns the stored event. */
  CHECK_RC(record("s", kOptChat, strlen(kOptChat), kChat, strlen(kChat), &again, &n2), CTXDB_OK);
  CHECK(again && out && n == n2 && memcmp(out, again, n) == 0);
  ctxdb_free(out);
  ctxdb_free(again);
}

static void test_conflict(void) {
  char *before = session_state();
  char changed[2048];
  char *at;
  snprintf(changed, sizeof changed, "%s", kChat);
  at = strstr(changed, "Hi.");
  if (at) at[0] = 'O';
  FAILS("s", kOptChat, changed, CTXDB_CONFLICT, "already exists");
  {
    char *after = session_state();
    CHECK(before && after && strcmp(before, after) == 0);
    ctxdb_free(after);
  }
  ctxdb_free(before);
}

static void test_bad_arguments(void) {
  char *before = session_state();
  char *out = NULL;
  size_t n = 0;
  /* NULL handle, NULL out, NULL pointers with lengths. */
  CHECK_RC(ctxdb_response_record(NULL, "s", 1, kOptChat, strlen(kOptChat), kChat, strlen(kChat),
                                 &out, &n),
           CTXDB_MISUSE);
  CHECK_RC(record("s", kOptChat, strlen(kOptChat), kChat, strlen(kChat), NULL, &n), CTXDB_MISUSE);
  CHECK_RC(record("s", NULL, 5, kChat, strlen(kChat), &out, &n), CTXDB_MISUSE);
  CHECK_RC(record("s", kOptChat, strlen(kOptChat), NULL, 9, &out, &n), CTXDB_MISUSE);
  CHECK_RC(ctxdb_response_record(g_db, NULL, 3, kOptChat, strlen(kOptChat), kChat, strlen(kChat),
                                 &out, &n),
           CTXDB_MISUSE);
  /* The session id. */
  FAILS(NULL, kOptChat, kChat, CTXDB_INVALID_ARG, "session_id");
  FAILS("\xC3\x28", kOptChat, kChat, CTXDB_INVALID_UTF8, "session_id");
  FAILS("nope", kOptChat, kChat, CTXDB_NOT_FOUND, "nope");
  /* The options. */
  FAILS("s", NULL, kChat, CTXDB_INVALID_JSON, "record options");
  FAILS("s", "{", kChat, CTXDB_INVALID_JSON, "record options");
  FAILS("s", "\x01garbage\x02", kChat, CTXDB_INVALID_JSON, NULL);
  FAILS("s", Q("{'format':'\xC3\x28'}"), kChat, CTXDB_INVALID_UTF8, NULL);
  FAILS("s", "[]", kChat, CTXDB_INVALID_ARG, NULL);
  FAILS("s", Q("{}"), kChat, CTXDB_INVALID_ARG, "format");
  FAILS("s", Q("{'format':'cohere'}"), kChat, CTXDB_INVALID_ARG, "format");
  FAILS("s", Q("{'format':'openai.chat','stream':'yes'}"), kChat, CTXDB_INVALID_ARG, "stream");
  FAILS("s", Q("{'format':'openai.chat','colour':1}"), kChat, CTXDB_INVALID_ARG, "colour");
  /* Unknown places, for a response not recorded yet (a recorded one under
   * another parent is a conflict, as for any event id). */
  FAILS("s", Q("{'format':'openai.chat','parent_id':'evt_nope'}"), kFresh, CTXDB_NOT_FOUND,
        "evt_nope");
  FAILS("s", Q("{'format':'openai.chat','branch_id':'nope'}"), kFresh, CTXDB_NOT_FOUND, "nope");
  FAILS("s", Q("{'format':'openai.chat','parent_id':'evt_nope'}"), kChat, CTXDB_CONFLICT,
        "already exists");
  /* The response. */
  FAILS("s", kOptChat, NULL, CTXDB_INVALID_JSON, NULL);
  FAILS("s", kOptChat, "{\"id\":", CTXDB_INVALID_JSON, "openai.chat response");
  FAILS("s", kOptChat, "\x01\x02garbage", CTXDB_INVALID_JSON, NULL);
  FAILS("s", kOptChat, "{\"id\":\"\xFF\"}", CTXDB_INVALID_UTF8, NULL);
  FAILS("s", kOptChat, "42", CTXDB_INVALID_ARG, NULL);
  FAILS("s", kOptChat, Q("{'id':'c','choices':[{'index':0}]}"), CTXDB_INVALID_ARG,
        "choices[0].message");
  FAILS("s", Q("{'format':'anthropic.messages'}"), Q("{'id':'m','content':[{'type':'tool_use'}]}"),
        CTXDB_INVALID_ARG, "content[0].id");
  FAILS("s", Q("{'format':'anthropic.messages','stream':true}"),
        Q("{'type':'message_start','message':{'id':'m','content':[]}}"), CTXDB_INVALID_ARG,
        "message_stop");
  FAILS("s", Q("{'format':'openai.responses','stream':true}"),
        Q("{'type':'response.created','response':{'id':'r','output':[]}}"), CTXDB_INVALID_ARG,
        "response.completed");
  {
    char *after = session_state();
    CHECK(before && after && strcmp(before, after) == 0);
    ctxdb_free(after);
  }
  ctxdb_free(before);
}

int main(void) {
  char *out = NULL;
  size_t n = 0;
  const char *create = Q("{'id':'s','payload':{'agent_id':'a'}}");
  scratch_init("record");
  CHECK_RC(ctxdb_open(scratch_path("record.ctxdb"), NULL, 0, &g_db), CTXDB_OK);
  CHECK_RC(ctxdb_session_create(g_db, create, strlen(create), &out, &n), CTXDB_OK);
  ctxdb_free(out);
  test_records();
  test_conflict();
  test_bad_arguments();
  ctxdb_close(g_db);
  scratch_cleanup();
  return check_finish("test_record");
}
