#include "tokenizer/pre_tokenizer.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <array>

#include "core/error.h"

namespace cairn::tokenizer {
namespace {

// Unicode White_Space, as a character-class body.
constexpr std::string_view kWhiteSpace =
    "\\t-\\r\\x{20}\\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}"
    "\\x{205F}\\x{3000}";

// GPT-2's split: contractions, letters, numbers, other, trailing whitespace.
constexpr std::string_view kGpt2 =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)";
// Llama 3 / tiktoken cl100k style (case-insensitive contractions, 1-3 digits).
constexpr std::string_view kLlama3 =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+"
    "[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
// Qwen2: as Llama 3 but single digits.
constexpr std::string_view kQwen2 =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+"
    "[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
// Qwen3.5: Qwen2 with combining marks (\p{M}) joined to letters.
constexpr std::string_view kQwen35 =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}"
    "\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
// CJK ideographs, Hangul and the block between (used by the DeepSeek splits).
constexpr std::string_view kDeepseekCjk = "[一-龥ࠀ-一가-퟿]+";

std::vector<std::string> List(std::initializer_list<std::string_view> items) {
  return std::vector<std::string>(items.begin(), items.end());
}

}  // namespace

std::vector<std::string> PreTokenizerPatterns(std::string_view pre) {
  if (pre == "default") {
    return List({"[\\p{P}\\$\\+<=>\\^~\\|]+", kGpt2, "\\p{N}+", "[0-9][0-9][0-9]"});
  }
  if (pre == "gpt-2" || pre == "gpt2" || pre == "mpt" || pre == "olmo" || pre == "phi-2" ||
      pre == "jais" || pre == "trillion" || pre == "granite-docling") {
    return List({kGpt2});
  }
  if (pre == "llama3" || pre == "llama-v3" || pre == "llama-bpe" || pre == "dbrx" ||
      pre == "smaug-bpe" || pre == "falcon3" || pre == "pixtral" || pre == "chatglm-bpe") {
    return List({kLlama3});
  }
  if (pre == "qwen2" || pre == "stablelm2" || pre == "deepseek-r1-qwen" || pre == "hunyuan" ||
      pre == "grok-2") {
    return List({kQwen2});
  }
  if (pre == "qwen35") return List({kQwen35});
  if (pre == "deepseek-llm") {
    return List({
        "[\r\n]",
        "\\s?[A-Za-z\\x{B5}\\x{C0}-\\x{D6}\\x{D8}-\\x{F6}\\x{F8}-\\x{1BA}\\x{1BC}-\\x{1BF}"
        "\\x{1C4}-\\x{293}\\x{295}-\\x{2AF}\\x{370}-\\x{373}\\x{376}\\x{377}\\x{37B}-\\x{37D}"
        "\\x{37F}\\x{386}\\x{388}-\\x{38A}\\x{38C}\\x{38E}-\\x{3A1}\\x{3A3}-\\x{3F5}\\x{3F7}-"
        "\\x{481}\\x{48A}-\\x{52F}\\x{531}-\\x{556}\\x{10A0}-\\x{10C5}\\x{13A0}-\\x{13F5}"
        "\\x{13F8}-\\x{13FD}\\x{1C90}-\\x{1CBA}\\x{1CBD}-\\x{1CBF}\\x{1D00}-\\x{1D2B}\\x{1D6B}-"
        "\\x{1D77}\\x{1D79}-\\x{1D9A}\\x{1E00}-\\x{1F15}\\x{1F18}-\\x{1F1D}\\x{1F20}-\\x{1F45}"
        "\\x{1F48}-\\x{1F4D}\\x{1F50}-\\x{1F57}\\x{1F59}\\x{1F5B}\\x{1F5D}\\x{1F5F}-\\x{1F7D}"
        "\\x{1F80}-\\x{1FB4}\\x{1FB6}-\\x{1FBC}\\x{1FBE}\\x{1FC2}-\\x{1FC4}\\x{1FC6}-\\x{1FCC}"
        "\\x{1FD0}-\\x{1FD3}\\x{1FD6}-\\x{1FDB}\\x{1FE0}-\\x{1FEC}\\x{1FF2}-\\x{1FF4}\\x{1FF6}-"
        "\\x{1FFC}\\x{2102}\\x{2107}\\x{210A}-\\x{2113}\\x{2115}\\x{2119}-\\x{211D}\\x{2124}"
        "\\x{2126}\\x{2128}\\x{212A}-\\x{212D}\\x{212F}-\\x{2134}\\x{2139}\\x{213C}-\\x{213F}"
        "\\x{2145}-\\x{2149}\\x{214E}\\x{2183}\\x{2184}\\x{2C00}-\\x{2C7B}\\x{2C7E}-\\x{2CE4}"
        "\\x{2CEB}-\\x{2CEE}\\x{2CF2}\\x{2CF3}\\x{A640}-\\x{A66D}\\x{A680}-\\x{A69B}\\x{A722}-"
        "\\x{A76F}\\x{A771}-\\x{A787}\\x{A78B}-\\x{A78E}\\x{AB70}-\\x{ABBF}\\x{FB00}-\\x{FB06}"
        "\\x{FB13}-\\x{FB17}\\x{FF21}-\\x{FF3A}\\x{FF41}-\\x{FF5A}\\x{10400}-\\x{1044F}\\x{104B0}"
        "-\\x{104D3}\\x{104D8}-\\x{104FB}\\x{10C80}-\\x{10CB2}\\x{10CC0}-\\x{10CF2}\\x{118A0}-"
        "\\x{118DF}\\x{1E900}-\\x{1E943}]+",
        "\\s?[!-/:-~！-／：-～‘-‟　-。]+",
        "\\s+$",
        kDeepseekCjk,
        "\\p{N}+",
    });
  }
  if (pre == "deepseek-coder") {
    return List({"[\r\n]", "\\s?\\p{L}+", "\\s?\\p{P}+", kDeepseekCjk, "\\p{N}"});
  }
  if (pre == "falcon") {
    return List({"[\\p{P}\\$\\+<=>\\^~\\|`]+", kGpt2, "[0-9][0-9][0-9]"});
  }
  if (pre == "starcoder" || pre == "refact" || pre == "command-r" || pre == "smollm" ||
      pre == "codeshell" || pre == "exaone" || pre == "minerva-7b") {
    return List({"\\p{N}", kGpt2});
  }
  Fail("unknown tokenizer pre-tokenizer '{}' (tokenizer.ggml.pre); supported: default, gpt-2, "
       "mpt, llama3/llama-bpe, qwen2, qwen35, deepseek-llm, deepseek-coder, falcon, starcoder, "
       "refact and aliases",
       pre);
}

bool IsKnownPreTokenizer(std::string_view pre) {
  try {
    PreTokenizerPatterns(pre);
    return true;
  } catch (const Error&) {
    return false;
  }
}

std::string ExpandWhitespaceClasses(std::string_view pattern) {
  std::string out;
  out.reserve(pattern.size() + 64);
  bool in_class = false;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char c = pattern[i];
    if (c == '\\' && i + 1 < pattern.size()) {
      const char next = pattern[++i];
      if (next == 's') {
        if (in_class) {
          out += kWhiteSpace;
        } else {
          out += '[';
          out += kWhiteSpace;
          out += ']';
        }
      } else if (next == 'S' && !in_class) {
        out += "[^";
        out += kWhiteSpace;
        out += ']';
      } else {
        out += c;
        out += next;
      }
      continue;
    }
    if (c == '[' && !in_class) {
      in_class = true;
      out += c;
      // A ']' (after an optional '^') right after '[' is a literal.
      if (i + 1 < pattern.size() && pattern[i + 1] == '^') out += pattern[++i];
      if (i + 1 < pattern.size() && pattern[i + 1] == ']') out += pattern[++i];
      continue;
    }
    if (c == ']' && in_class) in_class = false;
    out += c;
  }
  return out;
}

struct PreTokenizer::Compiled {
  pcre2_code* code = nullptr;
  bool jit = false;
  ~Compiled() { pcre2_code_free(code); }
};

PreTokenizer::PreTokenizer(const std::vector<std::string>& patterns) {
  for (const std::string& raw : patterns) {
    const std::string pattern = ExpandWhitespaceClasses(raw);
    int error = 0;
    PCRE2_SIZE error_offset = 0;
    // UCP: \p and \d/\w use Unicode properties. MATCH_INVALID_UTF: arbitrary
    // bytes are allowed in the subject; ill-formed sequences simply never match.
    pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                     PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &error,
                                     &error_offset, nullptr);
    if (code == nullptr) {
      std::array<PCRE2_UCHAR, 256> message{};
      pcre2_get_error_message(error, message.data(), message.size());
      Fail("pre-tokenizer regex does not compile at offset {}: {} (pattern: {})", error_offset,
           reinterpret_cast<const char*>(message.data()), raw);
    }
    auto compiled = std::make_unique<Compiled>();
    compiled->code = code;
    compiled->jit = pcre2_jit_compile(code, PCRE2_JIT_COMPLETE) == 0;
    regexes_.push_back(std::move(compiled));
  }
}

PreTokenizer::~PreTokenizer() = default;

namespace {

// Per-thread match resources, sized for the largest pattern seen so far. The
// JIT stack grows to 8 MiB: backtracking over a long whitespace run in
// `\s+(?!\S)` needs stack proportional to the run.
class MatchScratch {
 public:
  MatchScratch() {
    data_ = pcre2_match_data_create(32, nullptr);
    jit_stack_ = pcre2_jit_stack_create(32 * 1024, 8 * 1024 * 1024, nullptr);
    context_ = pcre2_match_context_create(nullptr);
    pcre2_jit_stack_assign(context_, nullptr, jit_stack_);
  }
  ~MatchScratch() {
    pcre2_match_context_free(context_);
    pcre2_jit_stack_free(jit_stack_);
    pcre2_match_data_free(data_);
  }
  pcre2_match_data* data() { return data_; }
  pcre2_match_context* context() { return context_; }

 private:
  pcre2_match_data* data_;
  pcre2_jit_stack* jit_stack_;
  pcre2_match_context* context_;
};

MatchScratch& Scratch() {
  thread_local MatchScratch scratch;
  return scratch;
}

// Splits one piece with one regex, appending matches and gaps.
void SplitPiece(pcre2_code* code, bool jit, std::string_view piece,
                std::vector<std::string_view>& out) {
  MatchScratch& scratch = Scratch();
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(piece.data());
  const size_t n = piece.size();
  size_t gap_start = 0;
  size_t pos = 0;
  while (pos < n) {
    const int rc = jit ? pcre2_jit_match(code, subject, n, pos, 0, scratch.data(), scratch.context())
                       : pcre2_match(code, subject, n, pos, 0, scratch.data(), scratch.context());
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) {
      std::array<PCRE2_UCHAR, 256> message{};
      pcre2_get_error_message(rc, message.data(), message.size());
      Fail("pre-tokenizer regex failed on a {}-byte piece: {}", n,
           reinterpret_cast<const char*>(message.data()));
    }
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(scratch.data());
    const size_t begin = ovector[0];
    const size_t end = ovector[1];
    if (end == begin) {
      // Empty match: not a piece; step over one (possibly invalid) character.
      pos = begin + 1;
      while (pos < n && (static_cast<uint8_t>(piece[pos]) & 0xC0) == 0x80) ++pos;
      continue;
    }
    if (begin > gap_start) out.push_back(piece.substr(gap_start, begin - gap_start));
    out.push_back(piece.substr(begin, end - begin));
    gap_start = pos = end;
  }
  if (gap_start < n) out.push_back(piece.substr(gap_start));
}

}  // namespace

void PreTokenizer::Split(std::string_view text, std::vector<std::string_view>& out) const {
  if (text.empty()) return;
  if (regexes_.empty()) {
    out.push_back(text);
    return;
  }
  const size_t first = out.size();
  SplitPiece(regexes_[0]->code, regexes_[0]->jit, text, out);
  std::vector<std::string_view> current;
  for (size_t r = 1; r < regexes_.size(); ++r) {
    current.assign(out.begin() + static_cast<std::ptrdiff_t>(first), out.end());
    out.resize(first);
    for (std::string_view piece : current) {
      SplitPiece(regexes_[r]->code, regexes_[r]->jit, piece, out);
    }
  }
}

}  // namespace cairn::tokenizer
