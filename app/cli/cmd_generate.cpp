// wavelab-cli generate: greedy decoding with the KV cache (a quick check that a model works).
#include <chrono>
#include <iostream>

#include "command.h"
#include "model/causal_lm.h"
#include "tokenizer/tokenizer.h"
#include "util/error.h"

namespace wl::cli {
namespace {

int runGenerate(const Args& args) {
    args.allowOnly({"model", "prompt", "max-tokens", "greedy", "tokenizer", "device", "dtype"});
    const std::string path = args.get("model");
    const std::string prompt = args.get("prompt", "");
    const long long max_tokens = args.getInt("max-tokens", 256);
    if (max_tokens <= 0) throw Error("--max-tokens", "must be positive");
    LoadOptions lo;
    lo.device = args.get("device", "auto");
    lo.dtype = args.get("dtype", "float32");
    auto model = CausalLM::load(path, lo);
    auto tok = findTokenizerForModel(path, model->config().vocab_size, args.get("tokenizer", ""));
    std::vector<int64_t> ids = tok->encode(prompt, true);   // BOS, no EOS
    if (ids.empty()) throw Error("--prompt", "encodes to no tokens and the tokenizer has no BOS");
    const auto t0 = std::chrono::steady_clock::now();
    auto gen = model->generateGreedy(ids, max_tokens, true);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    // Decode prompt + continuation together so word boundaries come out right, then cut the prompt.
    std::vector<int64_t> all = ids;
    all.insert(all.end(), gen.begin(), gen.end());
    const std::string full = tok->decode(all), head = tok->decode(ids);
    const std::string continuation = full.rfind(head, 0) == 0 ? full.substr(head.size()) : tok->decode(gen);
    std::cout << prompt << continuation << "\n";
    std::cerr << "generated " << gen.size() << " tokens (max " << max_tokens << " incl. " << ids.size()
              << " prompt tokens) in " << s << " s, " << (s > 0 ? gen.size() / s : 0.0) << " tok/s\n";
    return 0;
}

Registrar reg{"generate",
              "--model PATH --prompt TEXT [--max-tokens N (prompt included)] [--greedy] [--tokenizer FILE]: "
              "greedy continuation",
              runGenerate};

}  // namespace
}  // namespace wl::cli
