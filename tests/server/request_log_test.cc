// The per-request log line.
#include "server/request_log.h"

#include <gtest/gtest.h>

namespace cairn::server {
namespace {

TEST(RequestLogTest, GenerationLineHasTokensTtftAndSpeed) {
  engine::GenerationResult result;
  result.prompt_tokens = 9951;
  result.cached_tokens = 9921;
  result.ttft_seconds = 0.414;
  result.completion_tokens = 64;
  result.decode_seconds = 2.0;
  result.finish_reason = "stop";
  EXPECT_EQ(RequestLogLine("POST", "/v1/chat/completions", 200, &result),
            "POST /v1/chat/completions 200 | prompt 9951 tok, cached 9921 | ttft 0.41 s | 64 tok, 32.0 tok/s | stop");
}

TEST(RequestLogTest, ErrorLineIsOneLine) {
  EXPECT_EQ(RequestLogLine("POST", "/v1/completions", 400, nullptr, "bad\njson"),
            "POST /v1/completions 400 | bad json");
  EXPECT_EQ(RequestLogLine("GET", "/v1/models", 200, nullptr), "GET /v1/models 200");
}

TEST(RequestLogTest, GenerationRoutesLogTheirOwnLine) {
  EXPECT_TRUE(LogsOwnRequestLine("/v1/chat/completions"));
  EXPECT_TRUE(LogsOwnRequestLine("/completions"));
  EXPECT_FALSE(LogsOwnRequestLine("/v1/models"));
}

}  // namespace
}  // namespace cairn::server
