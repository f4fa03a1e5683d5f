// Jinja2-compatible chat-template engine: public API.
//
// Semantics follow Hugging Face transformers' apply_chat_template: an
// ImmutableSandboxedEnvironment with trim_blocks=True, lstrip_blocks=True and
// the loopcontrols extension ({% break %}, {% continue %}); the `tojson`
// filter is json.dumps(ensure_ascii=False, indent, separators, sort_keys);
// globals raise_exception(msg) and strftime_now(fmt); the {% generation %}
// tag renders its body. See docs/chat-templates.md for what is supported.
//
// Usage:
//   auto tmpl = cairn::chat::Template::Parse(source);  // at model load; throws
//   std::string prompt = tmpl.Render(context);          // per request; thread-safe
//
// Errors:
//   - Parse() throws cairn::Error "template syntax error at L:C: ..." for
//     malformed input and for constructs the engine does not implement
//     (e.g. "unsupported template construct '{% include %}'", unknown filters
//     or tests), so unsupported templates fail at load time.
//   - Render() throws TemplateRaisedError (a cairn::Error whose what() is the
//     template's own message) for raise_exception(), and cairn::Error
//     "template error at L:C: ..." for runtime errors (undefined attribute of
//     undefined, type errors, exceeded limits). It never crashes or hangs on
//     hostile templates: output size, work steps and macro depth are bounded.
#pragma once

#include <nlohmann/json.hpp>

#include <ctime>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "core/error.h"

namespace cairn::chat {

struct Stmt;

// Thrown by the template global raise_exception(message); what() == message.
class TemplateRaisedError : public Error {
 public:
  explicit TemplateRaisedError(const std::string& message) : Error(message) {}
};

struct RenderOptions {
  // Broken-down local time used by strftime_now(); defaults to the wall clock.
  // Inject a fixed time for reproducible output (golden tests).
  std::function<std::tm()> clock;
  size_t max_output_bytes = 64u << 20;  // rendered prompt (and any string built)
  int64_t max_steps = 20'000'000;       // loop iterations, macro calls, filter work
  int max_call_depth = 100;             // nested macro calls
};

class Template {
 public:
  // Parses template source once. Throws cairn::Error naming the construct and
  // line:column on syntax errors or unsupported features.
  static Template Parse(std::string_view source);

  Template(Template&&) noexcept;
  Template& operator=(Template&&) noexcept;
  ~Template();

  // Renders with `context` as the template's top-level variables (a JSON
  // object: messages, tools, add_generation_prompt, bos_token, eos_token and
  // any extra kwargs). Const and safe to call from many threads at once.
  std::string Render(const nlohmann::ordered_json& context,
                     const RenderOptions& options = RenderOptions()) const;

  const std::string& source() const;

 private:
  struct Impl;
  explicit Template(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Renders a chat the way transformers' apply_chat_template(tokenize=False)
// does: messages, tools (None when null), documents (None),
// add_generation_prompt, bos_token, eos_token, then every key of `kwargs` at top level (kwargs win on
// collisions, like Python keyword arguments after the named ones).
std::string RenderChat(const Template& tmpl, const nlohmann::ordered_json& messages,
                       const nlohmann::ordered_json& tools, bool add_generation_prompt,
                       std::string_view bos_token, std::string_view eos_token,
                       const nlohmann::ordered_json& kwargs = nlohmann::ordered_json::object(),
                       const RenderOptions& options = RenderOptions());

}  // namespace cairn::chat
