// Bad-input corpus against the live server: every body in
// tests/server/bad_inputs/ (route chosen by file-name prefix) and a few
// inline byte-level cases must get a 4xx with an OpenAI error body, and the
// server must stay healthy afterwards.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "server_test_util.h"

namespace cairn::server::testing {
namespace {

std::string RouteFor(const std::string& file_name) {
  if (file_name.rfind("chat_", 0) == 0) return "/v1/chat/completions";
  if (file_name.rfind("responses_", 0) == 0) return "/v1/responses";
  if (file_name.rfind("messages_count_", 0) == 0) return "/v1/messages/count_tokens";
  if (file_name.rfind("messages_", 0) == 0) return "/v1/messages";
  if (file_name.rfind("completion_", 0) == 0) return "/v1/completions";
  if (file_name.rfind("tokenize_", 0) == 0) return "/tokenize";
  if (file_name.rfind("detokenize_", 0) == 0) return "/detokenize";
  return "";
}

void ExpectClientError(LiveServer& live, const std::string& route, const std::string& body,
                       const std::string& label) {
  auto client = live.Client();
  auto res = client.Post(route, body, "application/json");
  ASSERT_TRUE(res) << label;
  EXPECT_GE(res->status, 400) << label;
  EXPECT_LT(res->status, 500) << label << ": " << res->body;
  Json error = Json::parse(res->body, nullptr, false);
  ASSERT_FALSE(error.is_discarded()) << label << ": " << res->body;
  EXPECT_FALSE(error["error"]["message"].get<std::string>().empty()) << label;
  EXPECT_EQ(client.Get("/health")->status, 200) << "after " << label;
}

TEST(BadInputs, CorpusFilesAreRefusedCleanly) {
  ServerOptions options;
  options.max_body_bytes = 1 << 20;
  LiveServer live(options);
  std::filesystem::path dir = std::filesystem::path(CAIRN_SOURCE_DIR) / "tests/server/bad_inputs";
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::string name = entry.path().filename().string();
    std::string route = RouteFor(name);
    ASSERT_FALSE(route.empty()) << "bad_inputs file needs a route prefix: " << name;
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    ExpectClientError(live, route, text.str(), name);
    ++count;
  }
  EXPECT_GE(count, 12);
  EXPECT_EQ(live.service.generate_calls, 2);  // only the too-long and [reject] bodies reach the engine
}

TEST(BadInputs, ByteLevelGarbage) {
  LiveServer live;
  const std::string route = "/v1/chat/completions";
  ExpectClientError(live, route, "", "empty body");
  ExpectClientError(live, route, std::string("\0\x01\xff\xfe", 4), "binary");
  ExpectClientError(live, route, "{\"messages\":[{\"role\":\"user\",\"content\":\"\xc3\x28\"}]}", "invalid UTF-8");
  ExpectClientError(live, route, "{\"messages\":[{\"role\":\"user\",\"content\":\"\\ud800\"}]}", "lone surrogate");
  ExpectClientError(live, route, "{\"messages\":[{\"role\":\"user\",\"content\":\"x\"}],\"max_tokens\":1e400}",
                    "huge number");
  ExpectClientError(live, route, std::string(5000, '{'), "deep braces");
  ExpectClientError(live, "/v1/completions", "null", "null body");
  ExpectClientError(live, "/tokenize", "{\"content\":", "truncated tokenize");
}

TEST(BadInputs, MalformedHttp) {
  LiveServer live;
  // A raw socket request with a broken request line: httplib answers 400
  // itself; the error handler gives it an OpenAI body.
  httplib::Client client("127.0.0.1", live.server->port());
  auto res = client.Get("/v1/models/%zz");
  ASSERT_TRUE(res);
  EXPECT_EQ(client.Get("/health")->status, 200);
}

}  // namespace
}  // namespace cairn::server::testing
