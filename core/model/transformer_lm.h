#pragma once
// The CausalLM implementation shared by every loader: loaders hand over HF-named weights
// (any float dtype, CPU) and the config; the model fuses q/k/v and gate/up projections,
// converts to the compute dtype and device, and runs the forward pass.
#include <map>

#include "model/causal_lm.h"

namespace wl {

using WeightMap = std::map<std::string, torch::Tensor>;

// Consumes `weights` (entries are released as they are converted). Throws wl::Error naming
// config.source_path for missing tensors or shapes that disagree with the config.
std::unique_ptr<CausalLM> makeTransformerLM(const ModelConfig& config, WeightMap weights, const LoadOptions& options);

// Inverse RoPE frequencies (float64), with Llama-3 frequency-dependent scaling when configured.
std::vector<double> ropeInverseFrequencies(const ModelConfig& config);

}  // namespace wl
