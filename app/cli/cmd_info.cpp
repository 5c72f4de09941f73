// wavelab-cli info: a model's architecture from its config alone (no weights loaded).
#include <cstdio>
#include <iostream>
#include <sstream>

#include "command.h"
#include "model/read_model_config.h"
#include "model/synthetic_checkpoint.h"

namespace wl::cli {
namespace {

std::string withCommas(int64_t v) {
    std::string s = std::to_string(v);
    for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<size_t>(i), ",");
    return s;
}

std::string megabytes(double bytes) {
    char buf[64];
    if (bytes >= 1e9) std::snprintf(buf, sizeof(buf), "%.2f GB", bytes / 1e9);
    else std::snprintf(buf, sizeof(buf), "%.2f MB", bytes / 1e6);
    return buf;
}

int runInfo(const Args& args) {
    args.allowOnly({"model"});
    const std::string path = args.get("model");
    const ModelConfig c = readModelConfig(path);
    const int64_t params = c.numParameters();
    const int64_t disk_bytes_per = c.torch_dtype == "float32" ? 4 : 2;
    std::ostringstream o;
    o << "model:             " << path << (isSyntheticCheckpoint(path) ? "  (SYNTHETIC: random weights)" : "") << "\n";
    o << "format:            " << (c.source_format == "llama2c" ? "llama2.c checkpoint" : "Hugging Face safetensors") << "\n";
    o << "architecture:      " << c.architecture << "\n";
    o << "layers:            " << c.num_layers << "\n";
    o << "hidden size:       " << c.hidden_size << "\n";
    o << "intermediate size: " << c.intermediate_size << "\n";
    o << "heads:             " << c.num_heads << " (kv heads " << c.num_kv_heads << ", head dim " << c.head_dim << ")\n";
    o << "vocab:             " << c.vocab_size << "\n";
    o << "context:           " << c.max_position_embeddings << "\n";
    o << "rope:              " << (c.rope_interleaved ? "interleaved pairs" : "rotate-half") << ", theta " << c.rope_theta;
    if (c.rope_scaling.type == "llama3")
        o << ", llama3 scaling (factor " << c.rope_scaling.factor << ", low " << c.rope_scaling.low_freq_factor << ", high "
          << c.rope_scaling.high_freq_factor << ", original " << c.rope_scaling.original_max_position_embeddings << ")";
    o << "\n";
    o << "embeddings:        " << (c.tie_word_embeddings ? "tied" : "untied") << (c.qk_norm ? ", q/k norm" : "")
      << (c.attention_bias ? ", q/k/v bias" : "");
    if (c.sliding_window > 0) o << ", sliding window " << c.sliding_window;
    o << "\n";
    o << "parameters:        " << withCommas(params) << "\n";
    o << "dtype on disk:     " << c.torch_dtype << " (" << megabytes(double(params) * disk_bytes_per) << ")\n";
    o << "memory estimate:   " << megabytes(double(params) * 4) << " weights in float32, " << megabytes(double(params) * 2)
      << " in bfloat16 (plus activations)\n";
    o << "hidden states:     " << c.numHiddenStates() << " per token (HF convention: 0 = embeddings, " << c.num_layers
      << " = last layer before the final norm)\n";
    std::cout << o.str();
    return 0;
}

Registrar reg{"info", "--model PATH: print a model's architecture, size and memory estimate", runInfo};

}  // namespace
}  // namespace wl::cli
