// `cairn perplexity --model F --file T [--ctx 512] [--chunks N]`: perplexity of
// a text file, by llama-perplexity's protocol (llama.cpp 3f545bec, default
// mode, ../shared/reference/real-models.md §5.C.3), so the numbers compare:
//
//   * the whole file is tokenized once, special tokens NOT parsed, BOS first
//     when the vocabulary's add_bos says so;
//   * it is cut into floor(n_tokens / ctx) chunks of ctx tokens (at most
//     --chunks); each chunk is a fresh sequence (empty KV) whose token 0 is
//     replaced by BOS when add_bos;
//   * in each chunk the logits at positions first = ctx/2 .. ctx-2 score the
//     next token: ctx - first - 1 tokens per chunk (255 at ctx 512);
//   * nll = -log softmax(logits)[next] (max-shifted, sum of exp in double);
//     PPL = exp(sum nll / count). The running PPL after each chunk is printed
//     as "[i]ppl", as llama-perplexity does.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cli/commands.h"
#include "model/perplexity.h"
#include "core/error.h"
#include "model/model.h"
#include "tokenizer/gguf_vocab.h"
#include "tokenizer/tokenizer.h"

namespace cairn::cli {
namespace {

struct PerplexityArgs {
  std::string model;
  std::string file;
  int ctx = 512;
  int chunks = -1;  // -1: all
  int threads = 0;
  std::string kv_type = "f16";
  bool k_q8 = false;
};

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) Fail("cannot open '{}'", path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void Run(const PerplexityArgs& args) {
  auto model = model::Model::Load(args.model);
  const tokenizer::Tokenizer tok(tokenizer::LoadGgufVocabulary(args.model));
  const std::vector<int32_t> tokens = tok.Encode(ReadAll(args.file), /*parse_special=*/false, /*add_special=*/true);
  const int threads = args.threads > 0 ? args.threads : static_cast<int>(std::thread::hardware_concurrency());
  ThreadPool pool(std::max(1, threads));
  DType kv = DType::kF16;
  if (args.kv_type == "bf16") {
    kv = DType::kBF16;
  } else if (args.kv_type != "f16") {
    Fail("--kv-type must be f16 or bf16");
  }
  std::fprintf(stderr, "perplexity: %zu tokens, ctx %d\n", tokens.size(), args.ctx);
  const auto t0 = std::chrono::steady_clock::now();
  const int32_t bos = tok.add_bos() ? tok.bos() : -1;
  const model::PerplexityResult r =
      model::Perplexity(*model, tokens, args.ctx, args.chunks, bos, kv, args.k_q8, pool, [](int chunk, double ppl) {
    std::printf("[%d]%.4f,", chunk + 1, ppl);
    std::fflush(stdout);
  });
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("\nFinal estimate: PPL = %.4f +/- %.5f\n", r.ppl, r.ppl_stderr);
  std::fprintf(stderr, "perplexity: %d chunks, %lld scored tokens, %.1f s\n", r.chunks,
               static_cast<long long>(r.count), secs);
}

const CommandRegistration kRegistration{"perplexity", 330, [](CLI::App& app) {
  auto args = std::make_shared<PerplexityArgs>();
  CLI::App* cmd = app.add_subcommand("perplexity", "Perplexity of a text file (llama-perplexity's protocol)");
  cmd->add_option("-m,--model", args->model, "GGUF model")->required()->check(CLI::ExistingFile);
  cmd->add_option("-f,--file", args->file, "Text file")->required()->check(CLI::ExistingFile);
  cmd->add_option("-c,--ctx", args->ctx, "Tokens per chunk")->capture_default_str();
  cmd->add_option("--chunks", args->chunks, "Chunks to score at most (-1 = all)")->capture_default_str();
  cmd->add_option("-t,--threads", args->threads, "Threads (0 = all cores)");
  cmd->add_option("--kv-type", args->kv_type, "KV cache type: f16 (llama.cpp's default) or bf16")->capture_default_str();
  AddCacheTypeKOption(cmd, &args->k_q8);
  cmd->callback([args] { Run(*args); });
}};

}  // namespace
}  // namespace cairn::cli
