// libFuzzer target: HTTP request-body parsing (chat, completions, Anthropic
// messages and count_tokens, Responses) must
// never crash, hang or leak, whatever the bytes; it either yields a request
// or an error message.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "server/anthropic_parser.h"
#include "server/request_parser.h"
#include "server/responses_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view body(reinterpret_cast<const char*>(data), size);
  for (auto parse : {cairn::server::ParseChatRequest, cairn::server::ParseCompletionRequest,
                     cairn::server::ParseAnthropicMessagesRequest, cairn::server::ParseAnthropicCountTokensRequest,
                     cairn::server::ParseResponsesRequest}) {
    cairn::server::ParseResult result = parse(body);
    // Exactly one of request / error.
    if (result.ok() == !result.error.empty()) __builtin_trap();
    if (result.ok()) {
      const auto& options = result.request->options;
      if (options.max_tokens < 1 || options.top_logprobs < 0 || options.top_logprobs > 20) __builtin_trap();
      if (result.request->input.messages.has_value() == result.request->input.prompt.has_value()) {
        __builtin_trap();
      }
    }
  }
  return 0;
}
