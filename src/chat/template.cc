#include "chat/template.h"

#include "chat/ast.h"
#include "chat/evaluator.h"
#include "chat/lexer.h"
#include "chat/parser.h"

namespace cairn::chat {

struct Template::Impl {
  std::string source;
  StmtList body;
};

Template::Template(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Template::Template(Template&&) noexcept = default;
Template& Template::operator=(Template&&) noexcept = default;
Template::~Template() = default;

Template Template::Parse(std::string_view source) {
  auto impl = std::make_unique<Impl>();
  impl->source = NormalizeTemplateSource(source);
  impl->body = ParseTemplate(impl->source);
  return Template(std::move(impl));
}

const std::string& Template::source() const { return impl_->source; }

std::string Template::Render(const nlohmann::ordered_json& context,
                             const RenderOptions& options) const {
  if (!context.is_object() && !context.is_null()) Fail("template context must be a JSON object");
  Value root = context.is_null() ? Value::MakeDict() : Value::FromJson(context);
  RenderLimits limits;
  limits.max_output_bytes = options.max_output_bytes;
  limits.max_steps = options.max_steps;
  limits.max_call_depth = options.max_call_depth;
  std::function<std::tm()> clock = options.clock;
  if (!clock) {
    clock = [] {
      std::time_t now = std::time(nullptr);
      std::tm tm{};
      localtime_r(&now, &tm);
      return tm;
    };
  }
  std::string out;
  Evaluator evaluator(root.AsDict(), limits, std::move(clock), &out);
  evaluator.RenderRoot(impl_->body);
  return out;
}

std::string RenderChat(const Template& tmpl, const nlohmann::ordered_json& messages,
                       const nlohmann::ordered_json& tools, bool add_generation_prompt,
                       std::string_view bos_token, std::string_view eos_token,
                       const nlohmann::ordered_json& kwargs, const RenderOptions& options) {
  nlohmann::ordered_json context = nlohmann::ordered_json::object();
  context["messages"] = messages;
  context["tools"] = tools;        // transformers passes tools=None explicitly
  context["documents"] = nullptr;  // ... and documents=None
  context["add_generation_prompt"] = add_generation_prompt;
  context["bos_token"] = std::string(bos_token);
  context["eos_token"] = std::string(eos_token);
  if (kwargs.is_object()) {
    for (const auto& [key, value] : kwargs.items()) context[key] = value;
  }
  return tmpl.Render(context, options);
}

}  // namespace cairn::chat
