#pragma once
// Architecture description shared by every loader (llama2.c and Hugging Face) and the
// forward pass. Plain C++: safe to include from GUI code.
#include <cstdint>
#include <string>

namespace wl {

struct RopeScaling {
    // "none" or "llama3" (Llama-3.1 frequency-dependent scaling); others are rejected at load.
    std::string type = "none";
    double factor = 1.0;
    double low_freq_factor = 1.0;
    double high_freq_factor = 4.0;
    int64_t original_max_position_embeddings = 8192;
};

struct ModelConfig {
    std::string architecture;      // LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM
    std::string source_format;     // "hf" or "llama2c"
    std::string source_path;       // directory or checkpoint file it was read from
    std::string name;              // short display name (dir or file stem)
    int64_t vocab_size = 0;
    int64_t hidden_size = 0;
    int64_t intermediate_size = 0;
    int64_t num_layers = 0;
    int64_t num_heads = 0;
    int64_t num_kv_heads = 0;
    int64_t head_dim = 0;          // hidden_size / num_heads unless config says otherwise (Qwen3)
    int64_t max_position_embeddings = 2048;
    double rms_norm_eps = 1e-5;
    double rope_theta = 10000.0;
    RopeScaling rope_scaling;
    bool tie_word_embeddings = false;
    bool qk_norm = false;          // Qwen3: RMSNorm on q and k per head before RoPE
    bool attention_bias = false;   // Qwen2: bias on q/k/v projections
    int64_t sliding_window = 0;    // 0 = none (Mistral may set one; applied as a mask)
    bool rope_interleaved = false; // true = llama2.c pairs (2i,2i+1); false = HF rotate-half
    std::string torch_dtype = "float32";  // dtype stored on disk: float32, float16, bfloat16
    int64_t bos_token_id = -1;
    int64_t eos_token_id = -1;

    int64_t numParameters() const;      // computed from the shapes above
    int64_t numHiddenStates() const { return num_layers + 1; }  // see capture convention
};

}  // namespace wl
