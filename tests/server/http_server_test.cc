// The server against the fake engine on loopback: routes, streaming,
// keep-alive, cancellation, errors, auth, concurrency, shutdown.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "server_test_util.h"

namespace cairn::server::testing {
namespace {

Json Parse(const std::string& text) { return Json::parse(text); }

std::string ErrorMessage(const httplib::Result& result) {
  return Parse(result->body)["error"]["message"].get<std::string>();
}

TEST(HttpServer, InfoRoutes) {
  LiveServer live;
  auto client = live.Client();
  auto health = client.Get("/health");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  EXPECT_EQ(health->get_header_value("Access-Control-Allow-Origin"), "*");
  Json h = Parse(health->body);
  EXPECT_EQ(h["status"], "ok");
  EXPECT_EQ(h["model"], "fake-model");
  EXPECT_EQ(h["context_window"], 4096);
  EXPECT_EQ(h["spec"], "baseline");  // settings merged in

  for (const char* path : {"/v1/models", "/models", "/v1/models/", "/v1/models?x=1"}) {
    auto models = client.Get(path);
    ASSERT_TRUE(models) << path;
    EXPECT_EQ(models->status, 200) << path;
    EXPECT_EQ(Parse(models->body)["data"][0]["id"], "fake-model") << path;
  }
  auto head = client.Head("/");
  ASSERT_TRUE(head);
  EXPECT_EQ(head->status, 200);
  auto options = client.Options("/v1/chat/completions");
  ASSERT_TRUE(options);
  EXPECT_EQ(options->status, 204);
  EXPECT_NE(options->get_header_value("Access-Control-Allow-Headers").find("Authorization"), std::string::npos);

  auto missing = client.Get("/v1/nope");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
  EXPECT_EQ(Parse(missing->body)["error"]["type"], "not_found");
  EXPECT_EQ(ErrorMessage(missing), "unknown route: GET /v1/nope");

  auto tok = client.Post("/tokenize", R"({"content":"hi"})", "application/json");
  ASSERT_TRUE(tok);
  EXPECT_EQ(Parse(tok->body)["tokens"], Parse("[104,105]"));
  auto pieces = client.Post("/tokenize", R"({"content":"h","with_pieces":true})", "application/json");
  EXPECT_EQ(Parse(pieces->body)["tokens"], Parse(R"([{"id":104,"piece":"h"}])"));
  auto detok = client.Post("/detokenize", R"({"tokens":[104,105]})", "application/json");
  ASSERT_TRUE(detok);
  EXPECT_EQ(Parse(detok->body)["content"], "hi");
  auto bad_detok = client.Post("/detokenize", R"({"tokens":[1,999]})", "application/json");
  EXPECT_EQ(bad_detok->status, 400);
  EXPECT_EQ(ErrorMessage(bad_detok), "tokens[1]: not a token id of this model");

  auto cache = client.Get("/cache");
  ASSERT_TRUE(cache);
  EXPECT_TRUE(Parse(cache->body).contains("entries"));
  auto metrics = client.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("cairn_requests_total"), std::string::npos);
  EXPECT_NE(metrics->body.find("cairn_http_requests_total{route=\"/health\",method=\"GET\",status=\"200\"} 1"),
            std::string::npos)
      << metrics->body;
  EXPECT_NE(metrics->body.find("route=\"other\",method=\"GET\",status=\"404\""), std::string::npos);
}

TEST(HttpServer, CacheDeleteRoutes) {
  LiveServer live;
  auto client = live.Client();
  auto cleared = client.Delete("/v1/cache");
  ASSERT_TRUE(cleared);
  EXPECT_EQ(cleared->status, 200);
  EXPECT_EQ(Parse(cleared->body)["cleared"], true);
  EXPECT_EQ(live.service.cache_clears.load(), 1);
  const std::string id = "0123456789abcdef0123456789abcdef";
  auto removed = client.Delete("/cache/entries/" + id);
  ASSERT_TRUE(removed);
  EXPECT_EQ(removed->status, 200);
  EXPECT_EQ(Parse(removed->body)["deleted"], id);
  auto again = client.Delete("/cache/entries/" + id);
  EXPECT_EQ(again->status, 404);
  EXPECT_EQ(ErrorMessage(again), "no cache entry " + id);
  for (const std::string bad : std::vector<std::string>{"xyz", "0123456789ABCDEF0123456789ABCDEF", std::string(33, 'a'), ""}) {
    auto r = client.Delete("/cache/entries/" + bad);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 400) << bad;
  }
  auto metrics = client.Get("/metrics");
  EXPECT_NE(metrics->body.find("route=\"/cache\",method=\"DELETE\",status=\"200\""), std::string::npos)
      << metrics->body;
}

TEST(HttpServer, ChatNonStreaming) {
  LiveServer live;
  auto client = live.Client();
  auto res = client.Post("/v1/chat/completions", ChatBody("hello").dump(), "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  Json body = Parse(res->body);
  EXPECT_EQ(body["object"], "chat.completion");
  EXPECT_EQ(body["id"].get<std::string>().rfind("chatcmpl-", 0), 0u);
  EXPECT_EQ(body["model"], "test");
  EXPECT_EQ(body["choices"][0]["message"]["content"], "HELLO");
  EXPECT_EQ(body["choices"][0]["finish_reason"], "stop");
  // "<|user|>hello\n<|assistant|>" = 27 byte tokens.
  EXPECT_EQ(body["usage"]["prompt_tokens"], 27);
  EXPECT_EQ(body["usage"]["completion_tokens"], 5);
  EXPECT_EQ(body["usage"]["total_tokens"], 32);
  EXPECT_EQ(body["usage"]["prompt_tokens_details"]["cached_tokens"], 0);
  EXPECT_EQ(body["x_cairn"]["cache"]["kind"], "miss");

  // The same prompt again: the fake's prefix cache serves all but one token.
  auto again = client.Post("/chat/completions", ChatBody("hello").dump(), "application/json");
  ASSERT_TRUE(again);
  EXPECT_EQ(Parse(again->body)["usage"]["prompt_tokens_details"]["cached_tokens"], 26);
  EXPECT_EQ(Parse(again->body)["x_cairn"]["cached_tokens"], 26);

  auto limited = client.Post("/v1/chat/completions", ChatBody("hello", {{"max_tokens", 2}}).dump(),
                             "application/json");
  EXPECT_EQ(Parse(limited->body)["choices"][0]["message"]["content"], "HE");
  EXPECT_EQ(Parse(limited->body)["choices"][0]["finish_reason"], "length");

  auto think = client.Post("/v1/chat/completions", ChatBody("[think] ok").dump(), "application/json");
  Json message = Parse(think->body)["choices"][0]["message"];
  EXPECT_EQ(message["content"], "OK");
  EXPECT_EQ(message["reasoning_content"], "thinking...");
}

TEST(HttpServer, RequestFieldsReachTheEngine) {
  LiveServer live;
  auto client = live.Client();
  Json body = ChatBody("hi", {{"temperature", 0.5}, {"seed", 7}, {"stop", "x"}, {"spec", "lookup"},
                              {"cache_prompt", false}, {"enable_thinking", false},
                              {"tools", Json::parse(R"([{"type":"function","function":{"name":"f"}}])")}});
  auto res = client.Post("/v1/chat/completions", body.dump(), "application/json");
  ASSERT_EQ(res->status, 200) << res->body;
  EXPECT_FLOAT_EQ(live.service.last_options.temperature, 0.5f);
  EXPECT_EQ(*live.service.last_options.seed, 7u);
  EXPECT_EQ(live.service.last_options.stop, std::vector<std::string>{"x"});
  EXPECT_EQ(live.service.last_options.spec_mode, "lookup");
  EXPECT_FALSE(live.service.last_options.use_prefix_cache);
  EXPECT_EQ(live.service.last_input.template_kwargs["enable_thinking"], false);
  EXPECT_EQ(live.service.last_input.tools[0]["function"]["name"], "f");
  EXPECT_EQ(Parse(res->body)["x_cairn"]["spec"]["mode"], "lookup");
}

TEST(HttpServer, DefaultAnswerLimitAppliesOnlyWhenTheRequestSetsNone) {
  ServerOptions options;
  options.default_max_tokens = 3;
  LiveServer live(options);
  auto client = live.Client();
  ASSERT_EQ(client.Post("/v1/chat/completions", ChatBody("a").dump(), "application/json")->status, 200);
  EXPECT_EQ(live.service.last_options.max_tokens, 3);
  ASSERT_EQ(client.Post("/v1/chat/completions", ChatBody("a", {{"max_tokens", 9}}).dump(), "application/json")->status,
            200);
  EXPECT_EQ(live.service.last_options.max_tokens, 9);
  const Json responses = {{"model", "m"}, {"input", "a"}};
  ASSERT_EQ(client.Post("/v1/responses", responses.dump(), "application/json")->status, 200);
  EXPECT_EQ(live.service.last_options.max_tokens, 3);
}

TEST(HttpServer, ChatStreaming) {
  LiveServer live;
  StreamReply reply = PostStream(
      live.server->port(), "/v1/chat/completions",
      ChatBody("[think] hey", {{"stream", true}, {"stream_options", {{"include_usage", true}}}}).dump());
  ASSERT_EQ(reply.status, 200) << reply.raw;
  ASSERT_TRUE(reply.done);
  ASSERT_GE(reply.data.size(), 3u);
  Json first = Parse(reply.data.front());
  EXPECT_EQ(first["object"], "chat.completion.chunk");
  EXPECT_EQ(first["choices"][0]["delta"]["role"], "assistant");
  std::string content, reasoning, id = first["id"];
  for (size_t i = 1; i + 1 < reply.data.size(); ++i) {
    Json chunk = Parse(reply.data[i]);
    EXPECT_EQ(chunk["id"], id);
    EXPECT_TRUE(chunk["choices"][0]["finish_reason"].is_null());
    content += chunk["choices"][0]["delta"].value("content", "");
    reasoning += chunk["choices"][0]["delta"].value("reasoning_content", "");
  }
  EXPECT_EQ(content, "HEY");
  EXPECT_EQ(reasoning, "thinking...");
  Json last = Parse(reply.data.back());
  EXPECT_EQ(last["choices"][0]["finish_reason"], "stop");
  EXPECT_EQ(last["usage"]["completion_tokens"], 14);
  EXPECT_EQ(last["x_cairn"]["completion_tokens"], 14);

  StreamReply no_usage = PostStream(live.server->port(), "/chat/completions",
                                    ChatBody("a", {{"stream", true}}).dump());
  EXPECT_FALSE(Parse(no_usage.data.back()).contains("usage"));
  EXPECT_TRUE(Parse(no_usage.data.back()).contains("x_cairn"));
}

TEST(HttpServer, CompletionsWithLegacyLogprobs) {
  LiveServer live;
  auto client = live.Client();
  auto res = client.Post("/v1/completions", R"({"prompt":"abc","logprobs":2,"max_tokens":2})",
                         "application/json");
  ASSERT_EQ(res->status, 200) << res->body;
  Json body = Parse(res->body);
  EXPECT_EQ(body["object"], "text_completion");
  EXPECT_EQ(body["id"].get<std::string>().rfind("cmpl-", 0), 0u);
  EXPECT_EQ(body["choices"][0]["text"], "AB");
  EXPECT_EQ(body["choices"][0]["logprobs"],
            Parse(R"({"tokens":["A","B"],"token_logprobs":[0.0,-0.25],
                      "top_logprobs":[{"A":0.0,"b":-1.0},{"B":-0.25,"b":-1.25}],"text_offset":[0,1]})"));
  EXPECT_EQ(body["usage"]["prompt_tokens"], 3);

  StreamReply reply = PostStream(live.server->port(), "/completions",
                                 R"({"prompt":["xyz","ignored"],"stream":true})");
  ASSERT_TRUE(reply.done);
  std::string text;
  for (const auto& payload : reply.data) text += Parse(payload)["choices"][0]["text"].get<std::string>();
  EXPECT_EQ(text, "XYZ");
  EXPECT_EQ(Parse(reply.data.back())["choices"][0]["finish_reason"], "stop");
}

TEST(HttpServer, ChatLogprobs) {
  LiveServer live;
  auto client = live.Client();
  auto res = client.Post("/v1/chat/completions",
                         ChatBody("ab", {{"logprobs", true}, {"top_logprobs", 1}}).dump(), "application/json");
  Json content = Parse(res->body)["choices"][0]["logprobs"]["content"];
  EXPECT_EQ(content, Parse(R"([{"token":"A","logprob":0.0,"bytes":[65],"top_logprobs":[{"token":"A","logprob":0.0,"bytes":[65]}]},
                              {"token":"B","logprob":-0.25,"bytes":[66],"top_logprobs":[{"token":"B","logprob":-0.25,"bytes":[66]}]}])"));
}

TEST(HttpServer, EngineErrorsMapToStatuses) {
  LiveServer live;
  auto client = live.Client();
  auto reject = client.Post("/v1/chat/completions", ChatBody("[reject]").dump(), "application/json");
  EXPECT_EQ(reject->status, 400);
  EXPECT_EQ(ErrorMessage(reject), "could not apply chat template: fake rejection");
  auto fail = client.Post("/v1/chat/completions", ChatBody("[error]").dump(), "application/json");
  EXPECT_EQ(fail->status, 500);
  EXPECT_EQ(ErrorMessage(fail), "fake engine failure");
  EXPECT_EQ(Parse(fail->body)["error"]["type"], "server_error");
  auto too_long = client.Post("/v1/chat/completions", ChatBody(std::string(5000, 'x')).dump(), "application/json");
  EXPECT_EQ(too_long->status, 400);
  EXPECT_EQ(ErrorMessage(too_long), "prompt is too long: 5022 tokens > 4096 maximum");
  // Streaming: an early engine error still gets a real status, not a 200 stream.
  StreamReply streamed = PostStream(live.server->port(), "/v1/chat/completions",
                                    ChatBody("[reject]", {{"stream", true}}).dump());
  EXPECT_EQ(streamed.status, 400);
  EXPECT_EQ(Parse(streamed.raw)["error"]["message"], "could not apply chat template: fake rejection");
  auto n2 = client.Post("/v1/chat/completions", ChatBody("a", {{"n", 2}}).dump(), "application/json");
  EXPECT_EQ(n2->status, 400);
  EXPECT_EQ(ErrorMessage(n2), "n: only n=1 is supported");
  // Still healthy.
  EXPECT_EQ(client.Get("/health")->status, 200);
}

TEST(HttpServer, ApiKey) {
  ServerOptions options;
  options.api_key = "sekrit";
  LiveServer live(options);
  auto client = live.Client();
  auto denied = client.Post("/v1/chat/completions", ChatBody("a").dump(), "application/json");
  ASSERT_TRUE(denied);
  EXPECT_EQ(denied->status, 401);
  EXPECT_EQ(Parse(denied->body)["error"]["type"], "authentication_error");
  EXPECT_EQ(client.Get("/v1/models")->status, 401);
  EXPECT_EQ(client.Get("/health")->status, 200);
  EXPECT_EQ(client.Options("/v1/models")->status, 204);
  httplib::Headers wrong = {{"Authorization", "Bearer nope"}};
  EXPECT_EQ(client.Get("/v1/models", wrong)->status, 401);
  httplib::Headers bearer = {{"Authorization", "Bearer sekrit"}};
  EXPECT_EQ(client.Get("/v1/models", bearer)->status, 200);
  httplib::Headers x_key = {{"x-api-key", "sekrit"}};
  auto ok = client.Post("/v1/chat/completions", x_key, ChatBody("a").dump(), "application/json");
  EXPECT_EQ(ok->status, 200);
}

TEST(HttpServer, BodyLimit) {
  ServerOptions options;
  options.max_body_bytes = 1024;
  LiveServer live(options);
  auto client = live.Client();
  auto res = client.Post("/v1/chat/completions", ChatBody(std::string(4000, 'a')).dump(), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 413);
  EXPECT_EQ(ErrorMessage(res), "request body too large (limit 1024 bytes)");
  EXPECT_EQ(live.Client().Get("/health")->status, 200);
}

TEST(HttpServer, KeepAliveDuringLongPrefill) {
  ServerOptions options;
  options.keepalive_seconds = 1;
  LiveServer live(options);
  StreamReply reply = PostStream(live.server->port(), "/v1/chat/completions",
                                 ChatBody("[prefill=2600] go", {{"stream", true}}).dump());
  ASSERT_TRUE(reply.done) << reply.raw;
  size_t empty = 0;
  for (size_t i = 1; i < reply.data.size(); ++i) {
    Json chunk = Parse(reply.data[i]);
    if (chunk["choices"][0]["delta"] == Json::object() && chunk["choices"][0]["finish_reason"].is_null()) ++empty;
    else break;  // keep-alives come before the content
  }
  EXPECT_GE(empty, 1u) << reply.raw;
}

TEST(HttpServer, ClientDisconnectCancelsGenerationAndServerRecovers) {
  LiveServer live;
  StreamReply partial = PostStream(live.server->port(), "/v1/chat/completions",
                                   ChatBody("[long] [delay=5]", {{"stream", true}, {"max_tokens", 2000}}).dump(),
                                   /*stop_after=*/3);
  EXPECT_EQ(partial.data.size(), 3u);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (live.service.cancelled == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(live.service.cancelled, 1);
  auto res = live.Client().Post("/v1/chat/completions", ChatBody("after").dump(), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(Parse(res->body)["choices"][0]["message"]["content"], "AFTER");
}

TEST(HttpServer, NonStreamingClientDisconnectCancelsGeneration) {
  LiveServer live;
  {
    // The client walks away at the first byte (a probe space) of a ~10 s answer.
    httplib::Client client("127.0.0.1", live.server->port());
    httplib::Request req;
    req.method = "POST";
    req.path = "/v1/chat/completions";
    req.body = ChatBody("[long] [delay=5]", {{"max_tokens", 2000}}).dump();
    req.set_header("Content-Type", "application/json");
    req.content_receiver = [](const char*, size_t, uint64_t, uint64_t) { return false; };
    EXPECT_FALSE(client.send(req));
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (live.service.cancelled == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(live.service.cancelled, 1);
}

TEST(HttpServer, SlowNonStreamingAnswerIsValidJsonAfterProbes) {
  LiveServer live;
  // ~2.5 s: past the grace period, so the body is preceded by probe spaces.
  auto res = live.Client().Post("/v1/chat/completions",
                                ChatBody("[long] [delay=10]", {{"max_tokens", 250}}).dump(), "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body.front(), ' ') << "expected probe whitespace before the body";
  const Json body = Parse(res->body);
  EXPECT_EQ(body["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(body["usage"]["completion_tokens"], 250);
  EXPECT_EQ(live.service.cancelled, 0);
}

TEST(HttpServer, HealthAnswersDuringGeneration) {
  LiveServer live;
  std::thread generation([&] {
    PostStream(live.server->port(), "/v1/chat/completions",
               ChatBody("[long] [delay=5]", {{"stream", true}, {"max_tokens", 200}}).dump());
  });
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (live.service.active == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_EQ(live.service.active, 1);
  auto client = live.Client();
  auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(client.Get("/health")->status, 200);
  EXPECT_EQ(client.Get("/metrics")->status, 200);
  EXPECT_EQ(client.Get("/v1/models")->status, 200);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(900));
  EXPECT_EQ(live.service.active, 1);  // the generation was still running
  generation.join();
}

TEST(HttpServer, ConcurrentClients) {
  LiveServer live;
  const int clients = 4, requests = Sanitized() ? 2 : 5;
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      for (int i = 0; i < requests; ++i) {
        // Appends, not operator+: GCC 12 warns falsely (-Wrestrict) on "lit" + string&&.
        std::string text = "c";
        text.append(std::to_string(c)).append("r").append(std::to_string(i));
        if ((c + i) % 2) {
          StreamReply reply = PostStream(live.server->port(), "/v1/chat/completions",
                                         ChatBody(text, {{"stream", true}}).dump());
          std::string content;
          for (size_t k = 1; k + 1 < reply.data.size(); ++k) {
            content += Parse(reply.data[k])["choices"][0]["delta"].value("content", "");
          }
          if (reply.done && content == Upper(text)) ++ok;
        } else {
          auto res = live.Client().Post("/v1/chat/completions", ChatBody(text).dump(), "application/json");
          if (res && Parse(res->body)["choices"][0]["message"]["content"] == Upper(text)) ++ok;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok, clients * requests);
}

TEST(HttpServer, StopCancelsRunningGeneration) {
  auto live = std::make_unique<LiveServer>();
  std::thread generation([&] {
    PostStream(live->server->port(), "/v1/chat/completions",
               ChatBody("[long] [delay=10]", {{"stream", true}, {"max_tokens", 100000}}).dump());
  });
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (live->service.active == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(live->service.active, 1);
  auto start = std::chrono::steady_clock::now();
  live->server->Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  generation.join();
  EXPECT_EQ(live->service.cancelled, 1);
}

}  // namespace
}  // namespace cairn::server::testing
