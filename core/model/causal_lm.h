#pragma once
// A decoder-only causal LM (Llama/Mistral/Qwen2/Qwen3 family) running in libtorch.
// This header includes torch: never include it from a moc'ed (Qt) header.
//
// Hidden-state convention (the Hugging Face `hidden_states[h]` convention), used everywhere
// in WaveLab: for a model with N decoder layers there are N+1 states per token,
//   h = 0      : token embeddings (input to decoder layer 0)
//   h = k      : output of decoder layer k-1 = residual stream entering layer k (pre-final-norm)
//   h = N      : output of the last decoder layer, BEFORE the final RMSNorm
// plus `final_normed` = final RMSNorm applied to h = N (what the LM head sees).
#include <torch/torch.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "model/model_config.h"

namespace wl {

struct LoadOptions {
    std::string device = "auto";   // "auto" (cuda if available, else cpu), "cpu", "cuda", "cuda:1"
    std::string dtype = "float32"; // compute dtype: float32, bfloat16, float16 (float16 only on CUDA)
    // CPU threads for torch (it defaults to 1 here). 0 = $WAVELAB_THREADS if set, else all
    // cores. Lower it when other work shares the machine: oversubscribed torch threads spin.
    int threads = 0;
    // Refuse (wl::Error with the estimate) when the weights will not fit in host memory
    // (model/memory_guard.h: MemAvailable, capped by $WAVELAB_MEMORY_LIMIT_MB).
    bool check_memory = true;
};

// The device a load with LoadOptions::device runs on ("auto" = CUDA when available, else the
// CPU). Throws wl::Error(source, ...) for an unknown device or CUDA without CUDA.
torch::Device resolveDevice(const std::string& device, const std::string& source);

// Per-layer key/value cache for incremental decoding. Shapes [B, kv_heads, T, head_dim].
struct KVCache {
    std::vector<torch::Tensor> keys;
    std::vector<torch::Tensor> values;
    int64_t length() const { return keys.empty() || !keys[0].defined() ? 0 : keys[0].size(2); }
    void clear() { keys.clear(); values.clear(); }
    // Drop cached positions >= new_length (used when speculative tokens are rejected).
    void truncate(int64_t new_length);
    // Keep positions [0, prefix) followed by the listed rows (ascending, each >= prefix): the
    // accepted path of a verified draft tree.
    void keepRows(int64_t prefix, const std::vector<int64_t>& rows);
};

struct ForwardOptions {
    bool capture_hidden = false;   // fill ForwardOutput::hidden_states (all N+1); final_normed is always filled
    bool compute_logits = true;
    // Tree verification (speculative decoding, batch 1, no attention_mask): the T new tokens
    // are nodes of a token tree. tree_mask [T, T] bool: row i sees new token j when j is i or
    // an ancestor of i (every cached position is seen). tree_depth [T] int64: position id =
    // past + depth. Undefined = the usual causal sequence.
    torch::Tensor tree_mask;
    torch::Tensor tree_depth;
};

struct ForwardOutput {
    torch::Tensor logits;                      // [B, T, vocab], float32
    std::vector<torch::Tensor> hidden_states;  // N+1 tensors [B, T, hidden], compute dtype
    torch::Tensor final_normed;                // [B, T, hidden]
};

class CausalLM {
public:
    // `path` is an HF model directory (config.json + safetensors) or a llama2.c checkpoint file.
    // Throws wl::Error naming the file and the problem.
    static std::unique_ptr<CausalLM> load(const std::string& path, const LoadOptions& options = {});
    // Reads only the config (no weights): used for "info" and memory estimates before loading.
    static ModelConfig readConfig(const std::string& path);

    virtual ~CausalLM() = default;
    virtual const ModelConfig& config() const = 0;
    virtual torch::Device device() const = 0;
    virtual torch::ScalarType dtype() const = 0;

    // input_ids: [B, T] int64. attention_mask: [B, T_past + T] (1 = real token, 0 = padding;
    // padding on the LEFT or RIGHT both work), or undefined for "all real".
    // position ids are derived from the mask (cumsum - 1), as HF does.
    // cache: optional; when given, new keys/values are appended.
    virtual ForwardOutput forward(const torch::Tensor& input_ids,
                                  const torch::Tensor& attention_mask = {},
                                  KVCache* cache = nullptr,
                                  const ForwardOptions& options = {}) = 0;

    // Token embedding lookup [.., hidden] and LM head (applied to already-normed states).
    virtual torch::Tensor embed(const torch::Tensor& input_ids) = 0;
    virtual torch::Tensor lmHead(const torch::Tensor& normed_states) = 0;
    // Named parameters (HF names, e.g. "model.layers.0.self_attn.q_proj.weight").
    virtual std::vector<std::pair<std::string, torch::Tensor>> namedParameters() const = 0;

    // Greedy decoding with KV cache. `max_total_tokens` counts prompt + generated positions
    // (llama2.c's -n). Stops at EOS when stop_at_eos. Returns only the generated ids.
    virtual std::vector<int64_t> generateGreedy(const std::vector<int64_t>& prompt_ids,
                                                int64_t max_total_tokens,
                                                bool stop_at_eos = true,
                                                const std::function<bool(int64_t)>& on_token = {}) = 0;
};

// Writes `model` as an HF safetensors directory (config.json + model.safetensors, f32),
// permuting q/k from llama2.c interleaved RoPE to HF rotate-half layout when needed.
void saveAsHuggingFace(const CausalLM& model, const std::string& out_dir);

}  // namespace wl
