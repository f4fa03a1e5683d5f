// Differential test: every case in tests/chat/golden/*.json (rendered by
// Python Jinja2 configured like transformers, see tools/chat_template_golden.py)
// must render byte-identically here, or fail the same way.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "chat/template.h"
#include "common/test_paths.h"

namespace cairn::chat {
namespace {

using Json = nlohmann::ordered_json;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string GoldenDir() { return test::SourceDir() + "/tests/chat/golden"; }

// 2025-03-14 09:26:53, the golden generator's frozen clock.
std::tm FixedTime() {
  std::tm tm{};
  tm.tm_year = 2025 - 1900;
  tm.tm_mon = 2;
  tm.tm_mday = 14;
  tm.tm_hour = 9;
  tm.tm_min = 26;
  tm.tm_sec = 53;
  tm.tm_wday = 5;   // Friday
  tm.tm_yday = 72;
  return tm;
}

std::string Escaped(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else out.push_back(c);
  }
  return out;
}

std::string FirstDifference(const std::string& want, const std::string& got) {
  size_t i = 0;
  while (i < want.size() && i < got.size() && want[i] == got[i]) ++i;
  size_t from = i > 60 ? i - 60 : 0;
  return "first difference at byte " + std::to_string(i) + " (want " + std::to_string(want.size()) +
         " bytes, got " + std::to_string(got.size()) + ")\n  want: ..." +
         Escaped(std::string_view(want).substr(from, 120)) + "\n  got:  ..." +
         Escaped(std::string_view(got).substr(from, 120));
}

std::string SharedPathOf(const std::string& ref) {
  return test::SharedDir() + "/" + ref.substr(0, ref.find('#'));
}

std::string LoadTemplateSource(const std::string& ref) {
  std::string text = ReadFile(SharedPathOf(ref));
  if (ref.find('#') != std::string::npos) return Json::parse(text)["chat_template"].get<std::string>();
  return text;
}

class GoldenTest : public testing::TestWithParam<std::string> {};

TEST_P(GoldenTest, MatchesJinja2) {
  const Json conversations = Json::parse(ReadFile(GoldenDir() + "/conversations.json"));
  const Json golden = Json::parse(ReadFile(GoldenDir() + "/" + GetParam() + ".json"));
  const std::string ref = golden["template"].get<std::string>();
  if (!std::filesystem::exists(SharedPathOf(ref))) GTEST_SKIP() << "missing " << SharedPathOf(ref);
  Template tmpl = Template::Parse(LoadTemplateSource(ref));
  RenderOptions options;
  options.clock = FixedTime;
  int passed = 0, failed = 0;
  for (const Json& c : golden["cases"]) {
    const std::string name = c["conversation"].get<std::string>() +
                             (c["add_generation_prompt"].get<bool>() ? " +gen" : " -gen") +
                             " kwargs=" + c["kwargs"].dump();
    Json tools = c["tools"].get<bool>() ? conversations["tools"] : Json();
    std::string got, error;
    bool raised = false;
    try {
      got = RenderChat(tmpl, conversations["conversations"][c["conversation"].get<std::string>()], tools,
                       c["add_generation_prompt"].get<bool>(), golden["bos_token"].get<std::string>(),
                       golden["eos_token"].get<std::string>(), c["kwargs"], options);
    } catch (const TemplateRaisedError& e) {
      error = e.what();
      raised = true;
    } catch (const Error& e) {
      error = e.what();
    }
    bool ok = true;
    if (c.contains("output")) {
      if (!error.empty()) {
        ADD_FAILURE() << name << ": unexpected error: " << error;
        ok = false;
      } else if (got != c["output"].get<std::string>()) {
        ADD_FAILURE() << name << ": " << FirstDifference(c["output"].get<std::string>(), got);
        ok = false;
      }
    } else {
      const std::string want_error = c["error"].get<std::string>();
      if (error.empty()) {
        ADD_FAILURE() << name << ": expected error '" << want_error << "', rendered instead";
        ok = false;
      } else if (c["error_type"] == "raise_exception" && (!raised || error != want_error)) {
        ADD_FAILURE() << name << ": expected raise_exception('" << want_error << "'), got: " << error;
        ok = false;
      } else if (c["error_type"] != "raise_exception" && error.find(want_error) == std::string::npos) {
        // Jinja2 raised a Python error; any cairn::Error is acceptable, but say
        // when the wording differs.
        std::cout << "  note: " << name << ": Jinja2 said '" << want_error << "', we said '" << error << "'\n";
      }
    }
    (ok ? passed : failed)++;
  }
  std::cout << GetParam() << ": " << passed << " passed, " << failed << " failed\n";
}

std::vector<std::string> GoldenNames() {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(GoldenDir())) {
    std::string stem = entry.path().stem().string();
    if (entry.path().extension() == ".json" && stem != "conversations") names.push_back(stem);
  }
  std::sort(names.begin(), names.end());
  return names;
}

INSTANTIATE_TEST_SUITE_P(Templates, GoldenTest, testing::ValuesIn(GoldenNames()),
                         [](const testing::TestParamInfo<std::string>& info) {
                           std::string name;
                           for (char c : info.param) name.push_back(std::isalnum(static_cast<unsigned char>(c)) ? c : '_');
                           return name;
                         });

}  // namespace
}  // namespace cairn::chat
