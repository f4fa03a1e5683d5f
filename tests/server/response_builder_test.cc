// Response objects, SSE frames, auth, metrics labels and the stream hand-off.
#include "server/response_builder.h"

#include <gtest/gtest.h>

#include <thread>

#include "server/auth.h"
#include "server/errors.h"
#include "server/http_metrics.h"
#include "server/stream_session.h"

namespace cairn::server {
namespace {

engine::GenerationResult SampleResult() {
  engine::GenerationResult r;
  r.content = "Hello";
  r.reasoning = "hmm";
  r.finish_reason = "stop";
  r.prompt_tokens = 100;
  r.cached_tokens = 60;
  r.completion_tokens = 10;
  r.prefill_seconds = 0.5;
  r.prefill_trace = {{80, 0.25}, {100, 0.5}};
  r.decode_seconds = 2.0;
  r.ttft_seconds = 0.6;
  r.queue_seconds = 0.1;
  r.cache = {{"kind", "hit"}};
  r.spec = {{"mode", "lookup"}};
  r.logprobs = {{72, "H", -0.5f, {{"H", -0.5f}, {"h", -1.5f}}}, {101, "ello", -0.25f, {}}};
  return r;
}

ResponseMeta Meta() { return ResponseMeta{"chatcmpl-x", 1700000000, "m"}; }

TEST(ResponseBuilder, ChatCompletion) {
  Json body = ChatCompletionJson(Meta(), SampleResult(), true);
  EXPECT_EQ(body["object"], "chat.completion");
  EXPECT_EQ(body["id"], "chatcmpl-x");
  EXPECT_EQ(body["created"], 1700000000);
  const Json& choice = body["choices"][0];
  EXPECT_EQ(choice["message"]["role"], "assistant");
  EXPECT_EQ(choice["message"]["content"], "Hello");
  EXPECT_EQ(choice["message"]["reasoning_content"], "hmm");
  EXPECT_EQ(choice["message"]["reasoning"], "hmm");
  EXPECT_EQ(choice["finish_reason"], "stop");
  EXPECT_EQ(choice["logprobs"]["content"][0],
            Json::parse(R"({"token":"H","logprob":-0.5,"bytes":[72],"top_logprobs":[
              {"token":"H","logprob":-0.5,"bytes":[72]},{"token":"h","logprob":-1.5,"bytes":[104]}]})"));
  EXPECT_EQ(body["usage"], Json::parse(R"({"prompt_tokens":100,"completion_tokens":10,"total_tokens":110,
                                            "prompt_tokens_details":{"cached_tokens":60}})"));
  const Json& x = body["x_cairn"];
  EXPECT_EQ(x["cached_tokens"], 60);
  EXPECT_DOUBLE_EQ(x["prefill_tokens_per_sec"].get<double>(), 80.0);  // 40 fresh / 0.5 s
  EXPECT_DOUBLE_EQ(x["decode_tokens_per_sec"].get<double>(), 5.0);
  EXPECT_DOUBLE_EQ(x["queue_seconds"].get<double>(), 0.1);
  EXPECT_EQ(x["cache"]["kind"], "hit");
  EXPECT_EQ(x["spec"]["mode"], "lookup");
  EXPECT_EQ(x["prefill_trace"], Json::parse("[[80, 0.25], [100, 0.5]]"));
  EXPECT_TRUE(ChatCompletionJson(Meta(), SampleResult(), false)["choices"][0]["logprobs"].is_null());
}

TEST(ResponseBuilder, FullyCachedPromptHasNoPrefillRate) {
  engine::GenerationResult r = SampleResult();
  r.cached_tokens = r.prompt_tokens;
  EXPECT_TRUE(XCairnJson(r)["prefill_tokens_per_sec"].is_null());
}

TEST(ResponseBuilder, LegacyLogprobsOffsets) {
  Json lp = LegacyLogprobs(SampleResult().logprobs, 3);
  EXPECT_EQ(lp, Json::parse(R"({"tokens":["H","ello"],"token_logprobs":[-0.5,-0.25],
                                "top_logprobs":[{"H":-0.5,"h":-1.5},{}],"text_offset":[3,4]})"));
  Json body = CompletionJson(Meta(), SampleResult(), true);
  EXPECT_EQ(body["object"], "text_completion");
  EXPECT_EQ(body["choices"][0]["text"], "hmmHello");
}

Json FramePayload(const std::string& frame) {
  EXPECT_EQ(frame.substr(0, 6), "data: ");
  EXPECT_EQ(frame.substr(frame.size() - 2), "\n\n");
  return Json::parse(frame.substr(6));
}

TEST(ResponseBuilder, ChatChunks) {
  Json role = FramePayload(ChatRoleChunk(Meta()));
  EXPECT_EQ(role["object"], "chat.completion.chunk");
  EXPECT_EQ(role["choices"][0]["delta"]["role"], "assistant");
  EXPECT_EQ(FramePayload(ChatKeepAliveChunk(Meta()))["choices"][0]["delta"], Json::object());

  engine::GenerationDelta delta;
  EXPECT_EQ(ChatDeltaChunk(Meta(), delta, false), "");
  delta.content = "Hi";
  delta.reasoning = "r";
  Json chunk = FramePayload(ChatDeltaChunk(Meta(), delta, false));
  EXPECT_EQ(chunk["choices"][0]["delta"], Json::parse(R"({"reasoning_content":"r","reasoning":"r","content":"Hi"})"));

  Json last = FramePayload(ChatFinalChunk(Meta(), SampleResult(), true));
  EXPECT_EQ(last["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(last["usage"]["total_tokens"], 110);
  EXPECT_EQ(last["x_cairn"]["completion_tokens"], 10);
  EXPECT_FALSE(FramePayload(ChatFinalChunk(Meta(), SampleResult(), false)).contains("usage"));
}

TEST(ResponseBuilder, ChatChunksPassToolCallFragmentsThrough) {
  engine::GenerationDelta header, piece;
  header.content = "Sure.";
  header.tool_calls = Json::parse(
      R"([{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":""}},
          {"index":0,"function":{"arguments":"{\"a\":"}}])");
  piece.tool_calls = Json::parse(R"([{"index":0,"function":{"arguments":"1}"}}])");
  Json first = FramePayload(ChatDeltaChunk(Meta(), header, false));
  EXPECT_EQ(first["choices"][0]["delta"]["tool_calls"], header.tool_calls);
  EXPECT_EQ(first["choices"][0]["delta"]["content"], "Sure.");
  Json next = FramePayload(ChatDeltaChunk(Meta(), piece, false));
  EXPECT_EQ(next["choices"][0]["delta"], Json({{"tool_calls", piece.tool_calls}}));
}

TEST(ResponseBuilder, InvalidUtf8TokenTextDoesNotThrow) {
  engine::GenerationDelta delta;
  delta.logprobs = {{1, std::string("\xE2\x82", 2), -1.0f, {}}};
  Json chunk = FramePayload(ChatDeltaChunk(Meta(), delta, true));
  EXPECT_EQ(chunk["choices"][0]["logprobs"]["content"][0]["bytes"], Json::parse("[226,130]"));
}

TEST(Errors, Body) {
  EXPECT_EQ(Json::parse(ErrorBody(BadRequest("x: bad"))),
            Json::parse(R"({"error":{"message":"x: bad","type":"invalid_request_error","code":"400"}})"));
  EXPECT_EQ(ErrorTypeForStatus(401), "authentication_error");
  EXPECT_EQ(ErrorTypeForStatus(404), "not_found");
  EXPECT_EQ(ErrorTypeForStatus(500), "server_error");
}

TEST(Auth, Keys) {
  EXPECT_TRUE(IsAuthorized("", "", ""));
  EXPECT_TRUE(IsAuthorized("k1", "Bearer k1", ""));
  EXPECT_TRUE(IsAuthorized("k1", "bearer k1", ""));
  EXPECT_TRUE(IsAuthorized("k1", "", "k1"));
  EXPECT_FALSE(IsAuthorized("k1", "Bearer k2", ""));
  EXPECT_FALSE(IsAuthorized("k1", "Bearer k1x", ""));
  EXPECT_FALSE(IsAuthorized("k1", "k1", ""));
  EXPECT_FALSE(IsAuthorized("k1", "", ""));
  EXPECT_FALSE(IsAuthorized("k1", "Bearer ", "k"));
  EXPECT_TRUE(ConstantTimeEquals("abc", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "abd"));
  EXPECT_FALSE(ConstantTimeEquals("abc", "ab"));
}

TEST(HttpMetrics, RouteLabelsAndText) {
  EXPECT_EQ(RouteLabel("/v1/chat/completions"), "/chat/completions");
  EXPECT_EQ(RouteLabel("/chat/completions/"), "/chat/completions");
  EXPECT_EQ(RouteLabel("/v1/models?x=1"), "/models");
  EXPECT_EQ(RouteLabel("/v1"), "/");
  EXPECT_EQ(RouteLabel("/etc/passwd"), "other");
  HttpMetrics metrics;
  metrics.Count("POST", "/v1/chat/completions", 200);
  metrics.Count("POST", "/chat/completions", 200);
  metrics.Count("BREW", "/x", 404);
  std::string text = metrics.Text();
  EXPECT_NE(text.find("cairn_http_requests_total{route=\"/chat/completions\",method=\"POST\",status=\"200\"} 2"),
            std::string::npos);
  EXPECT_NE(text.find("{route=\"other\",method=\"other\",status=\"404\"} 1"), std::string::npos);
}

TEST(StreamSession, FramesKeepAliveAndGone) {
  StreamSession session(std::chrono::milliseconds(30), "KA");
  std::string written;
  auto write = [&](std::string_view f) {
    written += f;
    return true;
  };
  EXPECT_TRUE(session.Push("a"));
  EXPECT_TRUE(session.Push(""));
  EXPECT_EQ(session.Pump(write, std::chrono::milliseconds(1)), StreamSession::PumpResult::kMore);
  EXPECT_EQ(written, "a");
  std::this_thread::sleep_for(std::chrono::milliseconds(40));
  EXPECT_EQ(session.Pump(write, std::chrono::milliseconds(1)), StreamSession::PumpResult::kMore);
  EXPECT_EQ(written, "aKA");
  session.Finish("z");
  EXPECT_EQ(session.Pump(write, std::chrono::milliseconds(1)), StreamSession::PumpResult::kDone);
  EXPECT_EQ(written, "aKAz");

  StreamSession broken(std::chrono::seconds(10), "KA");
  broken.Push("x");
  EXPECT_EQ(broken.Pump([](std::string_view) { return false; }, std::chrono::milliseconds(1)),
            StreamSession::PumpResult::kGone);
  EXPECT_TRUE(broken.gone());
  EXPECT_FALSE(broken.Push("y"));
  EXPECT_FALSE(broken.Progress());
}

TEST(StreamSession, WaitFirstEvent) {
  StreamSession session(std::chrono::seconds(10), "KA");
  EXPECT_FALSE(session.WaitFirstEvent(std::chrono::milliseconds(5)));
  std::thread producer([&] { session.Progress(); });
  EXPECT_TRUE(session.WaitFirstEvent(std::chrono::seconds(10)));
  producer.join();
}

}  // namespace
}  // namespace cairn::server
