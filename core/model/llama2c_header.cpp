#include "model/llama2c_header.h"

#include <cstring>
#include <filesystem>
#include <fstream>

#include "model/hf_config.h"
#include "util/error.h"

namespace fs = std::filesystem;

namespace wl {

Llama2cHeader readLlama2cHeader(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(path, "cannot open");
    int32_t h[7] = {};
    in.read(reinterpret_cast<char*>(h), sizeof(h));
    if (in.gcount() != static_cast<std::streamsize>(sizeof(h)))
        throw Error(path, "too small for a llama2.c checkpoint header (28 bytes)");
    Llama2cHeader r;
    ModelConfig& c = r.config;
    c.architecture = "LlamaForCausalLM";
    c.source_format = "llama2c";
    c.source_path = path;
    c.name = fs::path(path).stem().string();
    c.hidden_size = h[0];
    c.intermediate_size = h[1];
    c.num_layers = h[2];
    c.num_heads = h[3];
    c.num_kv_heads = h[4];
    c.tie_word_embeddings = h[5] > 0;
    c.vocab_size = h[5] < 0 ? -static_cast<int64_t>(h[5]) : h[5];
    r.seq_len = h[6];
    c.max_position_embeddings = h[6];
    c.rms_norm_eps = 1e-5;
    c.rope_theta = 10000.0;
    c.rope_interleaved = true;
    c.torch_dtype = "float32";
    c.bos_token_id = 1;
    c.eos_token_id = 2;
    if (c.num_heads <= 0 || c.hidden_size <= 0 || c.hidden_size % c.num_heads != 0)
        throw Error(path, "not a llama2.c checkpoint: dim " + std::to_string(c.hidden_size) + " and n_heads " +
                              std::to_string(c.num_heads) + " are inconsistent");
    c.head_dim = c.hidden_size / c.num_heads;
    try {
        validateModelConfig(c, path);
    } catch (const Error& e) {
        throw Error(path, "not a valid llama2.c checkpoint header: " + e.problem());
    }
    const int64_t d = c.hidden_size, L = c.num_layers, kv = c.num_kv_heads * c.head_dim, hid = c.intermediate_size,
                  V = c.vocab_size;
    // Each term is far below 2^63 for header values < 2^31.
    long double floats = (long double)V * d + L * d + (long double)L * d * d + 2.0L * L * kv * d + (long double)L * d * d +
                         L * d + 3.0L * L * hid * d + d + (long double)r.seq_len * c.head_dim;
    if (!c.tie_word_embeddings) floats += (long double)V * d;
    const long double expected = Llama2cHeader::kHeaderBytes + 4.0L * floats;
    std::error_code ec;
    const auto size = fs::file_size(path, ec);
    if (ec) throw Error(path, "cannot read file size");
    if (expected > 1e15L) throw Error(path, "header implies an impossible size; not a llama2.c checkpoint");
    r.expected_file_size = static_cast<int64_t>(expected);
    if (static_cast<int64_t>(size) != r.expected_file_size)
        throw Error(path, "file has " + std::to_string(size) + " bytes but the llama2.c header (dim " + std::to_string(d) +
                              ", layers " + std::to_string(L) + ", vocab " + std::to_string(V) + ") implies " +
                              std::to_string(r.expected_file_size) + (static_cast<int64_t>(size) < r.expected_file_size
                                                                          ? " (truncated?)" : ""));
    return r;
}

}  // namespace wl
