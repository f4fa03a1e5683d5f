// API-key checks for --api-key.
#pragma once

#include <string>
#include <string_view>

namespace cairn::server {

// Compares without an early exit on the first differing byte, so response
// timing does not reveal how much of a guessed key was right. (The length
// still leaks; key length is not the secret.)
bool ConstantTimeEquals(std::string_view a, std::string_view b);

// True when `expected` is empty (auth off) or one of the headers carries it:
// `Authorization: Bearer K` (OpenAI clients) or `x-api-key: K` (Anthropic clients).
bool IsAuthorized(std::string_view expected, std::string_view authorization_header,
                  std::string_view x_api_key_header);

}  // namespace cairn::server
