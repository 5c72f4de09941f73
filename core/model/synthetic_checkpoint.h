#pragma once
// Synthetic checkpoints: HF directories with random weights and the exact shapes of real
// models, for benchmarks and tests (no real weights of that size are available offline).
// config.json carries "wavelab_synthetic": true so every figure made from one can say so.
// Plain C++ (no torch).
#include <cstdint>
#include <string>
#include <vector>

#include "model/model_config.h"
#include "util/cancel.h"

namespace wl {

struct SyntheticOptions {
    std::string dtype = "float32";   // stored dtype: float32, bfloat16, float16
    int64_t shards = 1;              // > 1 writes model-0000k-of-0000n.safetensors + index json
    uint64_t seed = 0;
};

// Real configs: "qwen3-0.6b", "qwen3-4b", "llama-3.1-8b", "mistral-7b". Shrink for tests by
// editing the returned config (num_layers, vocab_size, ...). Throws wl::Error("--preset", ..).
ModelConfig syntheticPreset(const std::string& name);
std::vector<std::string> syntheticPresetNames();

// Writes config.json + safetensors into out_dir (created). Values depend only on the seed and
// tensor name (not on sharding or dtype). Norm weights ~1, projections ~U with std 1/sqrt(in).
void writeSyntheticCheckpoint(const ModelConfig& config, const std::string& out_dir,
                              const SyntheticOptions& options = {}, CancelToken* cancel = nullptr);

// True when `model_path` is an HF directory whose config.json says "wavelab_synthetic": true.
bool isSyntheticCheckpoint(const std::string& model_path);

}  // namespace wl
