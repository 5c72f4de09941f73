// wavelab-cli make-synthetic: an HF checkpoint with random weights and a real model's shapes.
#include <iostream>

#include "command.h"
#include "model/synthetic_checkpoint.h"
#include "util/error.h"

namespace wl::cli {
namespace {

int runMakeSynthetic(const Args& args) {
    args.allowOnly({"preset", "out", "layers", "vocab", "dtype", "shards", "seed"});
    ModelConfig c = syntheticPreset(args.get("preset"));
    const std::string out = args.get("out");
    const long long layers = args.getInt("layers", c.num_layers), vocab = args.getInt("vocab", c.vocab_size);
    if (layers <= 0) throw Error("--layers", "must be positive");
    if (vocab <= 0) throw Error("--vocab", "must be positive");
    c.num_layers = layers;
    c.vocab_size = vocab;
    SyntheticOptions o;
    o.dtype = args.get("dtype", "float32");
    o.shards = args.getInt("shards", 1);
    o.seed = static_cast<uint64_t>(args.getInt("seed", 0));
    writeSyntheticCheckpoint(c, out, o);
    std::cout << "wrote SYNTHETIC " << args.get("preset") << " checkpoint to " << out << ": " << c.num_layers
              << " layers, hidden " << c.hidden_size << ", vocab " << c.vocab_size << ", " << o.dtype << ", "
              << o.shards << " shard(s), " << c.numParameters() << " parameters (random weights)\n";
    return 0;
}

Registrar reg{"make-synthetic",
              "--preset qwen3-0.6b|qwen3-4b|llama-3.1-8b|mistral-7b --out DIR [--layers N] [--vocab V] "
              "[--dtype float32|bf16|f16] [--shards K] [--seed S]: random-weight checkpoint with a real model's shapes",
              runMakeSynthetic};

}  // namespace
}  // namespace wl::cli
