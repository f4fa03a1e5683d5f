// Field readers shared by every request parser (OpenAI chat/completions,
// Anthropic Messages): typed getters whose errors name the field path, the
// options every API shares, and the parse driver that turns FieldError into
// ParseResult::error. Internal to src/server.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "server/request_parser.h"
#include "server/server_options.h"

namespace cairn::server {

using engine::Json;

// Thrown by the field readers; ParseWith() turns it into ParseResult::error,
// so the public parse functions never throw.
class FieldError : public std::runtime_error {
 public:
  FieldError(const std::string& field, const std::string& message)
      : std::runtime_error(field + ": " + message) {}
};

// Short, printable rendering of a client value for error messages.
std::string Quote(const Json& value);
// "a number", "a string", ... for error messages.
std::string TypeName(const Json& value);
// A present, non-null field (null counts as "not given", as OpenAI does).
const Json* Field(const Json& object, const char* name);
double GetNumber(const Json& body, const char* name, double min, double max);
// Integers may arrive as 100 or 100.0; anything else fractional is an error.
int64_t GetInteger(const Json& value, const std::string& name, int64_t min, int64_t max);
bool GetBool(const Json& body, const char* name);
std::string GetString(const Json& value, const std::string& name);

// A stop-string list: a string or a list of at most 16 strings (empty ones dropped).
std::vector<std::string> ParseStop(const Json& stop, const std::string& name = "stop");

// Options every API shares: sampling, penalties, limits (max_tokens), stop,
// stream, Cairn's extensions (spec, cache_prompt, ...). Unknown fields are
// ignored, so a dialect's own spellings (stop_sequences) never collide.
void ParseSharedOptions(const Json& body, ParsedRequest& request);

// Parses body as a JSON object, runs `fields` (the dialect's own fields),
// then ParseSharedOptions; any FieldError becomes ParseResult::error.
ParseResult ParseWith(std::string_view body, void (*fields)(const Json& body, ParsedRequest& request));

}  // namespace cairn::server
