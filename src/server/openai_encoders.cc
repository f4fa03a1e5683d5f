// OpenAI chat.completion(.chunk) and text_completion encoders for the
// generation seam (api_dialect.h); the objects themselves are built by
// response_builder.cc.
#include "server/api_dialect.h"

namespace cairn::server {
namespace {

bool WantsChatLogprobs(const ParsedRequest& request) { return request.options.logprobs; }
bool WantsLegacyLogprobs(const ParsedRequest& request) { return request.legacy_logprobs >= 0; }

class ChatEncoder final : public ResponseEncoder {
 public:
  ChatEncoder(const ParsedRequest& request, ResponseMeta meta)
      : meta_(std::move(meta)), logprobs_(WantsChatLogprobs(request)), include_usage_(request.include_usage) {}
  std::string StreamStart() override { return ChatRoleChunk(meta_); }
  std::string KeepAlive() override { return ChatKeepAliveChunk(meta_); }
  std::string Delta(const engine::GenerationDelta& delta) override {
    return ChatDeltaChunk(meta_, delta, logprobs_);
  }
  std::string StreamEnd(const engine::GenerationResult& result) override {
    return ChatFinalChunk(meta_, result, include_usage_).append(kSseDone);
  }
  std::string StreamError(const ApiError& error) override {
    return StreamErrorFrame(error.status, error.message).append(kSseDone);
  }
  Json Body(const engine::GenerationResult& result) override { return ChatCompletionJson(meta_, result, logprobs_); }

 private:
  ResponseMeta meta_;
  bool logprobs_;
  bool include_usage_;
};

class CompletionEncoder final : public ResponseEncoder {
 public:
  CompletionEncoder(const ParsedRequest& request, ResponseMeta meta)
      : meta_(std::move(meta)), logprobs_(WantsLegacyLogprobs(request)), include_usage_(request.include_usage) {}
  std::string StreamStart() override { return ""; }
  std::string KeepAlive() override { return CompletionKeepAliveChunk(meta_); }
  std::string Delta(const engine::GenerationDelta& delta) override {
    std::string frame = CompletionDeltaChunk(meta_, delta, logprobs_, text_offset_);
    text_offset_ += static_cast<int64_t>(delta.reasoning.size() + delta.content.size());
    return frame;
  }
  std::string StreamEnd(const engine::GenerationResult& result) override {
    return CompletionFinalChunk(meta_, result, include_usage_).append(kSseDone);
  }
  std::string StreamError(const ApiError& error) override {
    return StreamErrorFrame(error.status, error.message).append(kSseDone);
  }
  Json Body(const engine::GenerationResult& result) override { return CompletionJson(meta_, result, logprobs_); }

 private:
  ResponseMeta meta_;
  bool logprobs_;
  bool include_usage_;
  int64_t text_offset_ = 0;  // legacy logprobs text_offset of the next token
};

template <class Encoder>
std::unique_ptr<ResponseEncoder> Make(const ParsedRequest& request, const ResponseMeta& meta) {
  return std::make_unique<Encoder>(request, meta);
}

}  // namespace

const ApiDialect kOpenAiChatDialect{"/v1/chat/completions", "chatcmpl-", ErrorDialect::kOpenAi, ParseChatRequest,
                                    Make<ChatEncoder>};
const ApiDialect kOpenAiCompletionDialect{"/v1/completions", "cmpl-", ErrorDialect::kOpenAi,
                                          ParseCompletionRequest, Make<CompletionEncoder>};

}  // namespace cairn::server
