#pragma once
// llama2.c legacy checkpoint header: 7 int32 (dim, hidden_dim, n_layers, n_heads, n_kv_heads,
// vocab_size [negative = untied classifier at the end], seq_len), then fp32 arrays. Plain C++.
#include <cstdint>
#include <string>

#include "model/model_config.h"

namespace wl {

struct Llama2cHeader {
    static constexpr int64_t kHeaderBytes = 7 * 4;
    ModelConfig config;        // LlamaForCausalLM, rope_interleaved, eps 1e-5, theta 1e4
    int64_t seq_len = 0;
    int64_t expected_file_size = 0;
};

// Reads and validates the header and that the file size equals exactly what it implies
// (a truncated or padded file is a wl::Error naming the file).
Llama2cHeader readLlama2cHeader(const std::string& path);

}  // namespace wl
