// bench_record: ctxdb_response_record against ctxdb_append of the same
// AssistantMessageCreated, side by side in one run. The goal: recording a
// provider's response costs no more than appending what it means by hand,
// within 0.8 of its throughput.
//
// The responses are one of each format in turn (an OpenAI ChatCompletion, a
// Responses response, an Anthropic Message, a Gemini response), each ~1.2 KB
// with text, a reasoning or thinking block, two tool calls and usage; the
// stream side records the OpenAI chat and Anthropic streams of the same
// answers (~25 events each). The baseline appends the payloads record
// stored (read back from a first database), with the same event ids, so
// both sides write the same rows. Each side, each round: open a fresh
// file, create the session, one call per response (one transaction each,
// durability "normal"), close (the WAL checkpointed). Rounds rotate the
// sides' order; medians of the rounds.
//
// usage: bench_record [--responses N] [--rounds R]
#include "bench_util.hpp"

#include <ctxdb/ctxdb.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

#ifndef CTXDB_BENCH_BUILD_TYPE
#define CTXDB_BENCH_BUILD_TYPE ""
#endif

namespace fs = std::filesystem;
using bench::call;
using bench::check;
using bench::Clock;
using bench::median;

namespace {

const char *kConfig = R"({"durability":"normal"})";
const char *kSession = R"({"id":"bench","payload":{"agent_id":"bench"}})";

std::string words(size_t i, size_t n) {
  static const char *w[] = {"the", "build", "fails", "in",  "module", "parser", "because",
                            "a",   "token", "is",    "not", "closed", "so",     "we"};
  std::string s;
  for (size_t k = 0; k < n; ++k) s += std::string(k ? " " : "") + w[(i + k * 7) % 14];
  return s;
}

struct Response {
  std::string options, body;
};

// Response i of format i % 4, complete.
Response complete(size_t i) {
  std::string id = std::to_string(i), text = words(i, 90), thought = words(i + 3, 40);
  std::string args = R"({\"path\":\"src/mod)" + id + R"(.rs\",\"line\":)" + id + "}";
  switch (i % 4) {
  case 0:
    return {
        R"({"format":"openai.chat"})",
        R"({"id":"chatcmpl-)" + id +
            R"(","object":"chat.completion","model":"gpt-4.1","choices":[{"index":0,"message":{"role":"assistant","content":")" +
            text + R"(","refusal":null,"tool_calls":[{"id":"call_a)" + id +
            R"(","type":"function","function":{"name":"read","arguments":")" + args +
            R"("}},{"id":"call_b)" + id +
            R"(","type":"function","function":{"name":"grep","arguments":")" + args +
            R"("}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":9000,"completion_tokens":300,"total_tokens":9300,"prompt_tokens_details":{"cached_tokens":8000},"completion_tokens_details":{"reasoning_tokens":120}}})"};
  case 1:
    return {
        R"({"format":"openai.responses"})",
        R"({"id":"resp_)" + id +
            R"(","object":"response","status":"completed","model":"o3","output":[{"type":"reasoning","id":"rs_)" +
            id + R"(","summary":[{"type":"summary_text","text":")" + thought +
            R"("}],"encrypted_content":"gAAAAB)" + id + R"("},{"type":"message","id":"msg_)" + id +
            R"(","role":"assistant","content":[{"type":"output_text","text":")" + text +
            R"(","annotations":[]}]},{"type":"function_call","id":"fc_a)" + id +
            R"(","call_id":"call_a)" + id + R"(","name":"read","arguments":")" + args +
            R"("},{"type":"function_call","id":"fc_b)" + id + R"(","call_id":"call_b)" + id +
            R"(","name":"grep","arguments":")" + args +
            R"("}],"usage":{"input_tokens":9000,"input_tokens_details":{"cached_tokens":8000},"output_tokens":300,"output_tokens_details":{"reasoning_tokens":120},"total_tokens":9300}})"};
  case 2:
    return {
        R"({"format":"anthropic.messages"})",
        R"({"id":"msg_)" + id +
            R"(","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"thinking","thinking":")" +
            thought + R"(","signature":"EqQBCgIYAh)" + id + R"("},{"type":"text","text":")" + text +
            R"("},{"type":"tool_use","id":"toolu_a)" + id +
            R"(","name":"read","input":{"path":"src/mod)" + id +
            R"(.rs"}},{"type":"tool_use","id":"toolu_b)" + id +
            R"(","name":"grep","input":{"path":"src/mod)" + id +
            R"(.rs"}}],"stop_reason":"tool_use","usage":{"input_tokens":1000,"cache_read_input_tokens":8000,"cache_creation_input_tokens":0,"output_tokens":300}})"};
  default:
    return {
        R"({"format":"gemini.generate_content"})",
        R"({"responseId":"g)" + id +
            R"(","modelVersion":"gemini-2.5-flash","candidates":[{"index":0,"finishReason":"STOP","content":{"role":"model","parts":[{"text":")" +
            thought + R"(","thought":true},{"text":")" + text +
            R"("},{"functionCall":{"name":"read","args":{"path":"src/mod)" + id +
            R"(.rs"}},"thoughtSignature":"CiwBVKhc)" + id +
            R"("},{"functionCall":{"name":"grep","args":{"path":"src/mod)" + id +
            R"(.rs"}}}]}}],"usageMetadata":{"promptTokenCount":9000,"cachedContentTokenCount":8000,"candidatesTokenCount":180,"thoughtsTokenCount":120}})"};
  }
}

// Text split into deltas of ~24 bytes, at spaces.
std::vector<std::string> pieces(const std::string &text) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find(' ', at + 24);
    end = end == std::string::npos ? text.size() : end;
    out.push_back(text.substr(at, end - at));
    at = end;
  }
  return out;
}

// Response i as a stream: OpenAI chat chunks (even i) or Anthropic events.
Response streamed(size_t i) {
  std::string id = std::to_string(i), text = words(i, 90), nd;
  if (i % 2 == 0) {
    std::string head = R"({"id":"chatcmpl-s)" + id +
                       R"(","object":"chat.completion.chunk","model":"gpt-4.1","choices":[)";
    nd += head + R"({"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]})"
                 "\n";
    for (const std::string &p : pieces(text))
      nd += head + R"({"index":0,"delta":{"content":")" + p +
            R"("},"finish_reason":null}]})"
            "\n";
    nd +=
        head + R"({"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_a)" + id +
        R"(","type":"function","function":{"name":"read","arguments":""}}]},"finish_reason":null}]})"
        "\n";
    nd +=
        head +
        R"({"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\":\"src/mod)" +
        id +
        R"(.rs\"}"}}]},"finish_reason":null}]})"
        "\n";
    nd += head + R"({"index":0,"delta":{},"finish_reason":"tool_calls"}]})"
                 "\n";
    nd +=
        head +
        R"(],"usage":{"prompt_tokens":9000,"completion_tokens":300,"prompt_tokens_details":{"cached_tokens":8000}}})"
        "\n";
    return {R"({"format":"openai.chat","stream":true})", nd};
  }
  nd +=
      R"({"type":"message_start","message":{"id":"msg_s)" + id +
      R"(","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[],"stop_reason":null,"usage":{"input_tokens":1000,"cache_read_input_tokens":8000,"output_tokens":1}}})"
      "\n";
  nd += R"({"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}})"
        "\n";
  for (const std::string &p : pieces(text))
    nd += R"({"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":")" + p +
          R"("}})"
          "\n";
  nd += R"({"type":"content_block_stop","index":0})"
        "\n";
  nd +=
      R"({"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_a)" +
      id +
      R"(","name":"read","input":{}}})"
      "\n";
  nd +=
      R"({"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"path\": \"src/mod)" +
      id +
      R"(.rs\"}"}})"
      "\n";
  nd += R"({"type":"content_block_stop","index":1})"
        "\n";
  nd +=
      R"({"type":"message_delta","delta":{"stop_reason":"tool_use"},"usage":{"output_tokens":300}})"
      "\n";
  nd += R"({"type":"message_stop"})"
        "\n";
  return {R"({"format":"anthropic.messages","stream":true})", nd};
}

ctxdb_db *fresh(const fs::path &file) {
  fs::remove(file);
  fs::remove(file.string() + "-wal");
  fs::remove(file.string() + "-shm");
  ctxdb_db *db = nullptr;
  check(ctxdb_open(file.c_str(), kConfig, std::strlen(kConfig), &db), nullptr, "open");
  char *out = nullptr;
  size_t n = 0;
  call(ctxdb_session_create(db, kSession, std::strlen(kSession), &out, &n), db, &out, "session");
  return db;
}

// Seconds for one side: fresh file, one call per item, close.
double timed(const fs::path &file, size_t count,
             const std::function<int(ctxdb_db *, size_t, char **, size_t *)> &one) {
  Clock::time_point t0 = Clock::now();
  ctxdb_db *db = fresh(file);
  for (size_t i = 0; i < count; ++i) {
    char *out = nullptr;
    size_t n = 0;
    call(one(db, i, &out, &n), db, &out, "call");
  }
  ctxdb_close(db);
  return bench::seconds_since(t0);
}

// The events record stores, as appends with their ids and payloads.
std::vector<std::string> direct_events(const fs::path &file, const std::vector<Response> &rs) {
  ctxdb_db *db = fresh(file);
  std::vector<std::string> events;
  for (const Response &r : rs) {
    char *out = nullptr;
    size_t n = 0;
    std::string stored =
        call(ctxdb_response_record(db, "bench", 5, r.options.data(), r.options.size(),
                                   r.body.data(), r.body.size(), &out, &n),
             db, &out, "record");
    size_t id = stored.find("\"id\":\""), payload = stored.find(",\"payload\":");
    size_t id_end = stored.find('"', id + 6), hash = stored.rfind(",\"payload_hash\"");
    events.push_back("{\"type\":\"AssistantMessageCreated\",\"actor\":\"assistant\",\"id\":\"" +
                     stored.substr(id + 6, id_end - id - 6) + "\"" +
                     stored.substr(payload, hash - payload) + "}");
  }
  ctxdb_close(db);
  return events;
}

struct Figures {
  double record = 0, append = 0;
};

Figures measure(const fs::path &dir, const std::vector<Response> &rs, int rounds) {
  std::vector<std::string> events = direct_events(dir / "setup.ctxdb", rs);
  std::vector<double> rec, app;
  auto record = [&] {
    rec.push_back(
        timed(dir / "r.ctxdb", rs.size(), [&](ctxdb_db *db, size_t i, char **o, size_t *n) {
          return ctxdb_response_record(db, "bench", 5, rs[i].options.data(), rs[i].options.size(),
                                       rs[i].body.data(), rs[i].body.size(), o, n);
        }));
  };
  auto append = [&] {
    app.push_back(
        timed(dir / "a.ctxdb", rs.size(), [&](ctxdb_db *db, size_t i, char **o, size_t *n) {
          return ctxdb_append(db, "bench", 5, events[i].data(), events[i].size(), o, n);
        }));
  };
  for (int r = 0; r < rounds; ++r) {
    if (r % 2) {
      record();
      append();
    } else {
      append();
      record();
    }
  }
  return {median(rec), median(app)};
}

} // namespace

int main(int argc, char **argv) {
  size_t count = 2000;
  int rounds = 7;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--responses") && i + 1 < argc)
      count = std::strtoul(argv[++i], nullptr, 10);
    else if (!std::strcmp(argv[i], "--rounds") && i + 1 < argc)
      rounds = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "usage: bench_record [--responses N] [--rounds R]\n");
      return 2;
    }
  }
  fs::path dir = fs::temp_directory_path() / ("ctxdb-bench-record-" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::vector<Response> whole, streams;
  size_t whole_bytes = 0, stream_bytes = 0;
  for (size_t i = 0; i < count; ++i) {
    whole.push_back(complete(i));
    streams.push_back(streamed(i));
    whole_bytes += whole.back().body.size();
    stream_bytes += streams.back().body.size();
  }
  Figures w, s;
  try {
    w = measure(dir, whole, rounds);
    s = measure(dir, streams, rounds);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "bench_record: %s\n", e.what());
    fs::remove_all(dir);
    return 1;
  }
  fs::remove_all(dir);
  std::printf("bench_record (%s build): %zu responses a round, %d rounds, medians; one "
              "transaction per call, durability normal\n",
              CTXDB_BENCH_BUILD_TYPE, count, rounds);
  std::printf("%-10s %10s %14s %14s %14s %8s\n", "input", "bytes/resp", "record /s", "append /s",
              "record us/op", "ratio");
  auto row = [&](const char *name, size_t bytes, const Figures &f) {
    double rec = double(count) / f.record, app = double(count) / f.append;
    std::printf("%-10s %10zu %14.0f %14.0f %14.1f %8.3f\n", name, bytes / count, rec, app,
                f.record * 1e6 / double(count), rec / app);
  };
  row("complete", whole_bytes, w);
  row("stream", stream_bytes, s);
  double worst = std::min(w.append / w.record, s.append / s.record);
  std::printf("goal: record >= 0.8 of append's throughput: worst ratio %.3f, %s\n", worst,
              worst >= 0.8 ? "met" : "NOT met");
  for (auto [name, f] : {std::pair{"complete", w}, std::pair{"stream", s}})
    std::printf("{\"bench\":\"record\",\"input\":\"%s\",\"responses\":%zu,\"rounds\":%d,"
                "\"record_s\":%.4f,\"append_s\":%.4f,\"ratio\":%.3f}\n",
                name, count, rounds, f.record, f.append, f.append / f.record);
  return 0;
}
