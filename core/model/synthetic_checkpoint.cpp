#include "model/synthetic_checkpoint.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "io/float_convert.h"
#include "io/safetensors.h"
#include "model/hf_config.h"
#include "util/atomic_file.h"
#include "util/error.h"

namespace fs = std::filesystem;

namespace wl {

namespace {

ModelConfig base(const std::string& arch, int64_t layers, int64_t hidden, int64_t inter, int64_t heads, int64_t kv,
                 int64_t head_dim, int64_t vocab, double theta, bool tied) {
    ModelConfig c;
    c.architecture = arch;
    c.source_format = "hf";
    c.num_layers = layers;
    c.hidden_size = hidden;
    c.intermediate_size = inter;
    c.num_heads = heads;
    c.num_kv_heads = kv;
    c.head_dim = head_dim;
    c.vocab_size = vocab;
    c.rope_theta = theta;
    c.tie_word_embeddings = tied;
    c.rms_norm_eps = 1e-6;
    return c;
}

// splitmix64: seeds one xoshiro-like stream per tensor.
uint64_t splitmix(uint64_t& s) {
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

uint64_t hashName(const std::string& s) {
    uint64_t h = 1469598103934665603ull;
    for (unsigned char ch : s) h = (h ^ ch) * 1099511628211ull;
    return h;
}

struct Spec {
    std::string name;
    std::vector<int64_t> shape;
    double center;   // 1 for norm weights, 0 otherwise
    double stddev;
};

}  // namespace

std::vector<std::string> syntheticPresetNames() { return {"qwen3-0.6b", "qwen3-4b", "llama-3.1-8b", "mistral-7b"}; }

ModelConfig syntheticPreset(const std::string& name) {
    ModelConfig c;
    if (name == "qwen3-0.6b") {
        c = base("Qwen3ForCausalLM", 28, 1024, 3072, 16, 8, 128, 151936, 1e6, true);
        c.qk_norm = true;
        c.max_position_embeddings = 40960;
        c.bos_token_id = 151643;
        c.eos_token_id = 151645;
    } else if (name == "qwen3-4b") {
        c = base("Qwen3ForCausalLM", 36, 2560, 9728, 32, 8, 128, 151936, 1e6, true);
        c.qk_norm = true;
        c.max_position_embeddings = 40960;
        c.bos_token_id = 151643;
        c.eos_token_id = 151645;
    } else if (name == "llama-3.1-8b") {
        c = base("LlamaForCausalLM", 32, 4096, 14336, 32, 8, 128, 128256, 500000.0, false);
        c.rms_norm_eps = 1e-5;
        c.max_position_embeddings = 131072;
        c.rope_scaling.type = "llama3";
        c.rope_scaling.factor = 8.0;
        c.rope_scaling.low_freq_factor = 1.0;
        c.rope_scaling.high_freq_factor = 4.0;
        c.rope_scaling.original_max_position_embeddings = 8192;
        c.bos_token_id = 128000;
        c.eos_token_id = 128001;
    } else if (name == "mistral-7b") {
        c = base("MistralForCausalLM", 32, 4096, 14336, 32, 8, 128, 32000, 10000.0, false);
        c.rms_norm_eps = 1e-5;
        c.max_position_embeddings = 32768;
        c.bos_token_id = 1;
        c.eos_token_id = 2;
    } else {
        std::string all;
        for (const auto& n : syntheticPresetNames()) all += (all.empty() ? "" : ", ") + n;
        throw Error("--preset", "unknown preset '" + name + "' (known: " + all + ")");
    }
    c.name = name + "-synthetic";
    return c;
}

void writeSyntheticCheckpoint(const ModelConfig& config_in, const std::string& out_dir, const SyntheticOptions& options,
                              CancelToken* cancel) {
    ModelConfig c = config_in;
    if (c.head_dim <= 0 && c.num_heads > 0) c.head_dim = c.hidden_size / c.num_heads;
    if (c.num_kv_heads <= 0) c.num_kv_heads = c.num_heads;
    c.qk_norm = c.qk_norm || c.architecture == "Qwen3ForCausalLM";
    c.attention_bias = c.attention_bias || c.architecture == "Qwen2ForCausalLM";
    validateModelConfig(c, out_dir);
    DType dtype;
    if (options.dtype == "float32" || options.dtype == "f32") dtype = DType::F32, c.torch_dtype = "float32";
    else if (options.dtype == "bfloat16" || options.dtype == "bf16") dtype = DType::BF16, c.torch_dtype = "bfloat16";
    else if (options.dtype == "float16" || options.dtype == "f16") dtype = DType::F16, c.torch_dtype = "float16";
    else throw Error("--dtype", "unknown dtype '" + options.dtype + "' (float32, bfloat16, float16)");
    if (options.shards < 1) throw Error("--shards", "must be at least 1");

    const int64_t d = c.hidden_size, hd = c.head_dim, q = c.num_heads * hd, kv = c.num_kv_heads * hd,
                  I = c.intermediate_size;
    auto lin = [](int64_t in) { return 1.0 / std::sqrt(static_cast<double>(in)); };
    std::vector<Spec> specs;
    specs.push_back({"model.embed_tokens.weight", {c.vocab_size, d}, 0.0, 1.0});
    for (int64_t i = 0; i < c.num_layers; ++i) {
        const std::string p = "model.layers." + std::to_string(i) + ".";
        specs.push_back({p + "input_layernorm.weight", {d}, 1.0, 0.1});
        specs.push_back({p + "self_attn.q_proj.weight", {q, d}, 0.0, lin(d)});
        specs.push_back({p + "self_attn.k_proj.weight", {kv, d}, 0.0, lin(d)});
        specs.push_back({p + "self_attn.v_proj.weight", {kv, d}, 0.0, lin(d)});
        if (c.attention_bias) {
            specs.push_back({p + "self_attn.q_proj.bias", {q}, 0.0, 0.1});
            specs.push_back({p + "self_attn.k_proj.bias", {kv}, 0.0, 0.1});
            specs.push_back({p + "self_attn.v_proj.bias", {kv}, 0.0, 0.1});
        }
        specs.push_back({p + "self_attn.o_proj.weight", {d, q}, 0.0, lin(q)});
        if (c.qk_norm) {
            specs.push_back({p + "self_attn.q_norm.weight", {hd}, 1.0, 0.1});
            specs.push_back({p + "self_attn.k_norm.weight", {hd}, 1.0, 0.1});
        }
        specs.push_back({p + "post_attention_layernorm.weight", {d}, 1.0, 0.1});
        specs.push_back({p + "mlp.gate_proj.weight", {I, d}, 0.0, lin(d)});
        specs.push_back({p + "mlp.up_proj.weight", {I, d}, 0.0, lin(d)});
        specs.push_back({p + "mlp.down_proj.weight", {d, I}, 0.0, lin(I)});
    }
    specs.push_back({"model.norm.weight", {d}, 1.0, 0.1});
    if (!c.tie_word_embeddings) specs.push_back({"lm_head.weight", {c.vocab_size, d}, 0.0, lin(d)});

    makeDirectories(out_dir);
    auto producer = [&](const Spec& s) {
        return [&s, dtype, seed = options.seed, cancel](uint8_t* dst, size_t nbytes) {
            if (cancel) cancel->checkpoint();
            uint64_t state = seed * 0x9e3779b97f4a7c15ull ^ hashName(s.name);
            const size_t n = nbytes / dtypeSize(dtype);
            // Uniform on [-sqrt(3) sd, sqrt(3) sd] has standard deviation sd.
            const float half_width = static_cast<float>(std::sqrt(3.0) * s.stddev), center = static_cast<float>(s.center);
            for (size_t i = 0; i < n; ++i) {
                const float u = static_cast<float>((splitmix(state) >> 40) * (1.0 / 16777216.0));   // [0, 1)
                const float v = center + (2.0f * u - 1.0f) * half_width;
                if (dtype == DType::F32) std::memcpy(dst + 4 * i, &v, 4);
                else {
                    const uint16_t h = dtype == DType::BF16 ? floatToBf16(v) : floatToHalf(v);
                    std::memcpy(dst + 2 * i, &h, 2);
                }
            }
        };
    };
    // Split into shards of roughly equal byte size, in tensor order.
    uint64_t total = 0;
    for (const auto& s : specs) {
        uint64_t n = dtypeSize(dtype);
        for (auto x : s.shape) n *= static_cast<uint64_t>(x);
        total += n;
    }
    const int64_t k = std::min<int64_t>(options.shards, static_cast<int64_t>(specs.size()));
    std::map<std::string, std::string> weight_map;
    size_t next = 0;
    uint64_t written = 0;
    for (int64_t shard = 0; shard < k; ++shard) {
        char fname[64];
        std::snprintf(fname, sizeof(fname), "model-%05lld-of-%05lld.safetensors", (long long)shard + 1, (long long)k);
        const std::string file = k == 1 ? "model.safetensors" : fname;
        SafetensorsWriter writer((fs::path(out_dir) / file).string());
        writer.setMetadata("format", "pt");
        writer.setMetadata("wavelab_synthetic", "true");
        const uint64_t target = total * static_cast<uint64_t>(shard + 1) / static_cast<uint64_t>(k);
        const size_t remaining_shards = static_cast<size_t>(k - shard - 1);
        size_t count = 0;
        while (next < specs.size() && specs.size() - next > remaining_shards && (count == 0 || written < target ||
                                                                                  shard == k - 1)) {
            const Spec& s = specs[next++];
            uint64_t n = dtypeSize(dtype);
            for (auto x : s.shape) n *= static_cast<uint64_t>(x);
            writer.addProduced(s.name, dtype, s.shape, producer(s));
            weight_map[s.name] = file;
            written += n;
            ++count;
        }
        writer.finish();
    }
    if (k > 1) writeSafetensorsIndex((fs::path(out_dir) / "model.safetensors.index.json").string(), weight_map, total);
    writeFileAtomic((fs::path(out_dir) / "config.json").string(), hfConfigJson(c, true));
}

bool isSyntheticCheckpoint(const std::string& model_path) {
    std::error_code ec;
    if (!fs::is_directory(model_path, ec)) return false;
    const fs::path dir(model_path);
    if (!fs::exists(dir / "config.json", ec)) return false;
    try {
        auto j = nlohmann::json::parse(readFile((dir / "config.json").string()));
        return j.is_object() && j.value("wavelab_synthetic", false) == true;
    } catch (const std::exception&) {
        return false;
    }
}

}  // namespace wl
