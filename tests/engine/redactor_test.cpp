// The redactor: each built-in detector on a real-looking secret (with the
// exact text it leaves), ordinary agent text it must leave alone, UTF-8
// around secrets, and the policy's own rules (replacement, counts, errors).
#include "error.hpp"
#include "policy/redactor.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace redactor_test {

using ctxdb::policy::RedactionHit;
using ctxdb::policy::RedactionRule;
using ctxdb::policy::Redactor;

namespace {

const Redactor &builtin() {
  static const Redactor r({}, true);
  return r;
}

// The text after the built-in detectors.
std::string redacted(std::string text) {
  std::vector<RedactionHit> hits;
  builtin().redact(text, hits);
  return text;
}

// The one rule that matched, and how often.
std::string only_hit(std::string text) {
  std::vector<RedactionHit> hits;
  builtin().redact(text, hits);
  if (hits.size() != 1) return std::to_string(hits.size()) + " rules matched";
  return hits[0].rule + " x" + std::to_string(hits[0].count);
}

const std::string kJwt =
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9."
    "eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ."
    "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c";

} // namespace

TEST_CASE("the built-in detectors, by their stable names") {
  std::vector<std::string> names;
  for (const RedactionRule &r : Redactor::builtin_rules()) names.push_back(r.name);
  CHECK(names == std::vector<std::string>{
                     "private_key", "aws_access_key_id", "aws_secret_access_key", "github_token",
                     "openai_api_key", "anthropic_api_key", "slack_token", "google_api_key", "jwt",
                     "bearer_token", "url_password", "password_assignment"});
}

TEST_CASE("private_key: the whole PEM block, whatever the key type") {
  std::string rsa = "-----BEGIN RSA PRIVATE KEY-----\n"
                    "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n"
                    "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n"
                    "-----END RSA PRIVATE KEY-----";
  CHECK(redacted("key file:\n" + rsa + "\nloaded") == "key file:\n[REDACTED:private_key]\nloaded");
  CHECK(only_hit(rsa) == "private_key x1");
  std::string openssh = "-----BEGIN OPENSSH PRIVATE KEY-----\n"
                        "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
                        "-----END OPENSSH PRIVATE KEY-----\n";
  CHECK(redacted(openssh) == "[REDACTED:private_key]\n");
  CHECK(redacted("-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIIrYSSNQFaA2Hwf1duRSxKtLYX5CB04fSeQ6tF1a"
                 "Y/PuoAoGCCqGSM49\n-----END EC PRIVATE KEY-----") == "[REDACTED:private_key]");
  // Encrypted: PKCS#8, and the legacy form with its headers.
  CHECK(redacted("-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIFHDBOBgkqhkiG9w0BBQ0wQTApBgkqhkiG9w0"
                 "BBQwwHAQI\n-----END ENCRYPTED PRIVATE KEY-----") == "[REDACTED:private_key]");
  CHECK(redacted("-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,"
                 "3F17F5316E2BAC89\n\nxeDSmbzSpvs84dgMVCgyfEGO5hkpKw8JHvf7UFK0TJOc3Xx0Crbq8gC\n"
                 "-----END RSA PRIVATE KEY-----") == "[REDACTED:private_key]");
  // Inside a JSON string, with escaped newlines.
  CHECK(redacted(R"({"key":"-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n)"
                 R"(-----END PRIVATE KEY-----\n"})") == R"({"key":"[REDACTED:private_key]\n"})");
  // Cut short (a truncated log): through the last base64 line.
  CHECK(redacted("-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAo\n"
                 "MIIEvQIBADANBgkqhkiG9w\n[output truncated]") ==
        "[REDACTED:private_key]\n[output truncated]");
  // Public material stays.
  std::string pub = "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n"
                    "-----END PUBLIC KEY-----";
  CHECK(redacted(pub) == pub);
}

TEST_CASE("aws_access_key_id and aws_secret_access_key") {
  CHECK(redacted("aws_access_key_id = AKIAIOSFODNN7EXAMPLE\n") ==
        "aws_access_key_id = [REDACTED:aws_access_key_id]\n");
  CHECK(redacted("creds ASIAY34FZKBOKMUTVV7A expire") ==
        "creds [REDACTED:aws_access_key_id] expire");
  CHECK(redacted("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n") ==
        "aws_secret_access_key = [REDACTED:aws_secret_access_key]\n");
  CHECK(redacted("export AWS_SECRET_ACCESS_KEY=5lRDXNfPxOMFQmlFCcFZjIjjcbLT+8tmPjwwtsON") ==
        "export AWS_SECRET_ACCESS_KEY=[REDACTED:aws_secret_access_key]");
  // `aws sts` output.
  CHECK(redacted(R"("SecretAccessKey": "5lRDXNfPxOMFQmlFCcFZjIjjcbLT+8tmPjwwtsON",)") ==
        R"("SecretAccessKey": "[REDACTED:aws_secret_access_key]",)");
  // A longer run is not a key id; neither is a 40-char value under another name.
  CHECK(redacted("XAKIAIOSFODNN7EXAMPLE1") == "XAKIAIOSFODNN7EXAMPLE1");
  CHECK(redacted("commit: 5lRDXNfPxOMFQmlFCcFZjIjjcbLT+8tmPjwwtsON") ==
        "commit: 5lRDXNfPxOMFQmlFCcFZjIjjcbLT+8tmPjwwtsON");
}

TEST_CASE("github_token") {
  CHECK(redacted("git clone https://x:ghp_iK2ZWeqhFWCEPyYngFb51yBMWXaSCrUZoL8g@github.com/o/r") ==
        "git clone https://x:[REDACTED:github_token]@github.com/o/r");
  // The token wins over the assignment it sits in (same start: rule order).
  CHECK(redacted("GITHUB_TOKEN=gho_iK2ZWeqhFWCEPyYngFb51yBMWXaSCrUZoL8g") ==
        "GITHUB_TOKEN=[REDACTED:github_token]");
  CHECK(redacted("pat github_pat_5ubbbPIa84yRnBUbHoWC8F_JowoRoWD8s7bA16J7PglOU3shVv5UTG79BG16Qmts"
                 "L4F28GzL2cEpVZzAQl.") == "pat [REDACTED:github_token].");
  CHECK(redacted("ghp_short") == "ghp_short");
}

TEST_CASE("openai_api_key and anthropic_api_key") {
  CHECK(redacted("OPENAI_API_KEY=sk-proj-UVl4nuYV_d8fNYvvDbzDZST6IaXqA2h9Uz0_T1SaQ6dDwxlG\n") ==
        "OPENAI_API_KEY=[REDACTED:openai_api_key]\n");
  CHECK(redacted("key sk-c18Ref3bCaWWrprhZNlwsekkqH8kQrPTsDSuFEhbtyvAYmqg ok") ==
        "key [REDACTED:openai_api_key] ok");
  CHECK(redacted(
            "x-api-key: sk-ant-api03-GA3cCcYseu52C5CdYP2hMqBgNjjNMu1GqbeB6veWzSmA3y-nXL-cPZKcuz"
            "PrR2BImWS_EifkrvvBIQGVRRoLE_rnPf0jWAA") == "x-api-key: [REDACTED:anthropic_api_key]");
  CHECK(only_hit("sk-ant-api03-GA3cCcYseu52C5CdYP2hMqBgNjjNMu1GqbeB6veW") ==
        "anthropic_api_key x1");
  CHECK(redacted("pip install sk-learn scikit-learn") == "pip install sk-learn scikit-learn");
}

TEST_CASE("slack_token and google_api_key") {
  CHECK(redacted("SLACK_BOT=xoxb-848475135000-4957656115971-qnYNX5I3SEQwqlIntmpxf0rf") ==
        "SLACK_BOT=[REDACTED:slack_token]");
  CHECK(redacted("maps?key=AIzasqRoWjCkIULo6JnfLbbl0ofyE1uo5vEun3W&q=x") ==
        "maps?key=[REDACTED:google_api_key]&q=x");
}

TEST_CASE("jwt and bearer_token") {
  CHECK(redacted("cookie: session=" + kJwt + "; Path=/") ==
        "cookie: session=[REDACTED:jwt]; Path=/");
  // Bearer stays; the token goes (a JWT is named as such).
  CHECK(redacted("Authorization: Bearer 8f14e45fceea167a5a36dedd4bea2543aZ\r\n") ==
        "Authorization: Bearer [REDACTED:bearer_token]\r\n");
  CHECK(redacted("-H 'Authorization: Bearer " + kJwt + "'") ==
        "-H 'Authorization: Bearer [REDACTED:jwt]'");
  CHECK(redacted(R"({"authorization":"bearer abc.DEF-123_456~789+xyz/0=="})") ==
        R"({"authorization":"bearer [REDACTED:bearer_token]"})");
}

TEST_CASE("url_password keeps the user and the host") {
  CHECK(redacted("DATABASE_URL=postgres://admin:s3cr3t@db.internal:5432/app") ==
        "DATABASE_URL=postgres://admin:[REDACTED:url_password]@db.internal:5432/app");
  // No user, and an '@' inside the password: the last '@' ends it.
  CHECK(redacted("redis://:p@ss:w0rd@cache:6379/0") ==
        "redis://:[REDACTED:url_password]@cache:6379/0");
  CHECK(redacted("\"amqps://guest:gu3st!@mq.example.com\"") ==
        "\"amqps://guest:[REDACTED:url_password]@mq.example.com\"");
}

TEST_CASE("password_assignment keeps the key") {
  CHECK(redacted(R"(password = "hunter2")") == R"(password = "[REDACTED:password_assignment]")");
  CHECK(redacted("DB_PASSWORD=s3cr3t!x\n") == "DB_PASSWORD=[REDACTED:password_assignment]\n");
  CHECK(redacted(R"({"api_key": "abc123", "user": "bob"})") ==
        R"({"api_key": "[REDACTED:password_assignment]", "user": "bob"})");
  CHECK(redacted("client_secret: 9f8e7d6c5b4a\n") ==
        "client_secret: [REDACTED:password_assignment]\n");
  CHECK(redacted(R"(config['passwd'] = 'p\'ss w0rd')") ==
        R"(config['passwd'] = '[REDACTED:password_assignment]')");
  CHECK(redacted("curl 'https://api.example.com/v1?token=9a8b7c6d5e4f&page=2'") ==
        "curl 'https://api.example.com/v1?token=[REDACTED:password_assignment]&page=2'");
  CHECK(redacted("accessToken := \"tk_live_51H\"") ==
        "accessToken := \"[REDACTED:password_assignment]\"");
}

TEST_CASE("ordinary agent text is left alone") {
  std::string text = R"(commit 3f786850e387550fdab836ed7e6dc881de23001b (HEAD -> main)
Author: Dev <dev@example.com>
request_id=7c9e6679-7425-40de-944b-e07fc1f90ae7 sha256=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
{"type":"image","data":"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==","tokens":1234,"max_tokens":4096}
def check(user, password):
    return password_hash(password) == user.pw_hash
if (token == NULL) { return -1; }
const token = lexer.next();
while (token != EOF) token = tokens[i + 1];
token: Token; password: string; secret: SecretString;
let pwd = std::env::current_dir()?; pwd: /home/dev/project2
See https://github.com/org/repo/blob/main/README.md and http://localhost:8080/api?page=2.
ssh git@github.com:org/repo.git; https://user@example.com/path
Bearer tokens are sent in the Authorization header; the server checks the Bearer scheme.
Error: unexpected token: expected identifier at line 12
The secret: it is kept in the vault, not in this file. api_key=$OPENAI_API_KEY
[  PASSED  ] 42 tests. Timezone Asia/Tokyo. ---------------------------------------------
eyJub3QiOiJhIGp3dCJ9 is just base64; sk-learn is a package; task-4f9a2b is an id.
)";
  std::vector<RedactionHit> hits;
  std::string before = text;
  CHECK_FALSE(builtin().redact(text, hits));
  CHECK(text == before);
  CHECK(hits.empty());
}

TEST_CASE("UTF-8 around a secret stays intact") {
  CHECK(redacted("clé «AKIAIOSFODNN7EXAMPLE» → ok") == "clé «[REDACTED:aws_access_key_id]» → ok");
  CHECK(redacted("пароль: password=\"héllo wörld ✓\" 終") ==
        "пароль: password=\"[REDACTED:password_assignment]\" 終");
  CHECK(redacted("日本 postgres://ユーザー:秘密123@db/x 日本") ==
        "日本 postgres://ユーザー:[REDACTED:url_password]@db/x 日本");
  CHECK(redacted("🙂" + kJwt + "🙂") == "🙂[REDACTED:jwt]🙂");
}

TEST_CASE("policy rules: replacement, order of hits, counts added up") {
  Redactor r(
      {{"employee_id", "EMP-\\d{6}", ""}, {"card", "\\b(?:\\d{4}[ -]?){3}\\d{4}\\b", "<card>"}},
      true);
  std::string text = "EMP-123456 paid with 4111 1111 1111 1111 using AKIAIOSFODNN7EXAMPLE, "
                     "then EMP-654321 and ASIAY34FZKBOKMUTVV7A.";
  std::vector<RedactionHit> hits;
  CHECK(r.redact(text, hits));
  CHECK(text == "[REDACTED:employee_id] paid with <card> using [REDACTED:aws_access_key_id], "
                "then [REDACTED:employee_id] and [REDACTED:aws_access_key_id].");
  REQUIRE(hits.size() == 3); // built-ins first, then the policy's rules in order
  CHECK(hits[0].rule == "aws_access_key_id");
  CHECK(hits[0].count == 2);
  CHECK(hits[1].rule == "employee_id");
  CHECK(hits[1].count == 2);
  CHECK(hits[2].rule == "card");
  CHECK(hits[2].count == 1);
  // A second segment adds to the same entries.
  std::string more = "EMP-000001";
  CHECK(r.redact(more, hits));
  CHECK(hits.size() == 3);
  CHECK(hits[1].count == 3);
}

TEST_CASE("policy rules alone, and a rule that may keep its context with \\K") {
  Redactor r({{"ticket", "ticket #\\K\\d+", "N"}}, false);
  std::string text = "see ticket #4521 (AKIAIOSFODNN7EXAMPLE stays: no built-ins)";
  std::vector<RedactionHit> hits;
  CHECK(r.redact(text, hits));
  CHECK(text == "see ticket #N (AKIAIOSFODNN7EXAMPLE stays: no built-ins)");
  // A replacement equal to the match changes nothing, but still counts.
  std::string same = "ticket #N";
  Redactor n({{"n", "N", "N"}}, false);
  hits.clear();
  CHECK_FALSE(n.redact(same, hits));
  CHECK(hits.size() == 1);
  // A match that comes out empty all the same (consumed text dropped by \K,
  // or only a lookahead) is skipped, not replaced.
  Redactor empty({{"k", "a\\K", ""}, {"ahead", "(?=b)", ""}}, false);
  std::string ab = "aabb";
  hits.clear();
  CHECK_FALSE(empty.redact(ab, hits));
  CHECK(ab == "aabb");
  CHECK(hits.empty());
}

TEST_CASE("a bad rule is kInvalidArg naming it") {
  auto message = [](std::vector<RedactionRule> rules) -> std::string {
    try {
      Redactor r(std::move(rules), true);
    } catch (const ctxdb::Error &e) {
      CHECK(e.code() == ctxdb::Code::kInvalidArg);
      return e.what();
    }
    return "no error";
  };
  std::string bad = message({{"broken", "(abc", ""}});
  CHECK(bad.find("'broken'") != std::string::npos);
  CHECK(bad.find("offset 4") != std::string::npos);
  CHECK(bad.find("missing closing parenthesis") != std::string::npos);
  std::string empty = message({{"optional", "x*", ""}});
  CHECK(empty.find("'optional'") != std::string::npos);
  CHECK(empty.find("empty string") != std::string::npos);
  CHECK(message({{"boundary", "\\b", ""}}).find("empty string") != std::string::npos);
  CHECK(message({{"jwt", "abc", ""}}).find("another rule") != std::string::npos);
  CHECK(message({{"", "abc", ""}}).find("without a name") != std::string::npos);
}

TEST_CASE("the prefilter hides no match: anchored built-ins equal full scans") {
  // The same patterns as policy rules run over every position; the
  // built-ins run only where an anchor gram is. Both must agree.
  Redactor full(Redactor::builtin_rules(), false);
  std::string corpus = "a AKIAIOSFODNN7EXAMPLE b password=\"x1y2z3\" c https://u:pw1@h/ d " + kJwt +
                       " Bearer abcdefghij0123456789 -----BEGIN PRIVATE KEY-----\nMIIEvQIBADAN"
                       "BgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY----- AIzasqRoWjCkIULo6JnfLbbl0of"
                       "yE1uo5vEun3W xoxs-1-abcdefghij sk-c18Ref3bCaWWrprhZNlwsekkqH8kQrPT TOKEN: "
                       "'q' api-key=z9z9z9z9 PWD_KEY=ab12cd34 SECRET_TOKEN:\"s\" é";
  for (size_t lead = 0; lead < 8; ++lead) {
    std::string a = std::string(lead, '.') + corpus, b = a;
    std::vector<RedactionHit> ha, hb;
    builtin().redact(a, ha);
    full.redact(b, hb);
    INFO("lead " << lead);
    CHECK(a == b);
    REQUIRE(ha.size() == hb.size());
    for (size_t i = 0; i < ha.size(); ++i) {
      CHECK(ha[i].rule == hb[i].rule);
      CHECK(ha[i].count == hb[i].count);
    }
  }
}

} // namespace redactor_test
