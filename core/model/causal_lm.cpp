// Loaders (llama2.c checkpoint, HF safetensors directory) and the HF writer.
#include "model/causal_lm.h"

#include <cstring>
#include <filesystem>

#include "io/safetensors.h"
#include "model/hf_config.h"
#include "model/llama2c_header.h"
#include "model/memory_guard.h"
#include "model/read_model_config.h"
#include "model/transformer_lm.h"
#include "util/atomic_file.h"
#include "util/error.h"

namespace fs = std::filesystem;

namespace wl {

namespace {

torch::ScalarType torchType(DType d, const std::string& source, const std::string& name) {
    switch (d) {
        case DType::F32: return torch::kFloat32;
        case DType::F16: return torch::kFloat16;
        case DType::BF16: return torch::kBFloat16;
        case DType::F64: return torch::kFloat64;
        default: throw Error(source, "tensor '" + name + "' has dtype " + dtypeName(d) + ", expected F32, F16 or BF16");
    }
}

// Copies (the mapping may not be aligned for the element type) and widens to float32.
torch::Tensor tensorFromView(const TensorView& v) {
    auto t = torch::empty(v.shape, torch::TensorOptions().dtype(torchType(v.dtype, v.file, v.name)));
    std::memcpy(t.data_ptr(), v.data, v.nbytes);
    return t;
}

std::string diskDtypeName(DType d) {
    switch (d) {
        case DType::F16: return "float16";
        case DType::BF16: return "bfloat16";
        case DType::F64: return "float64";
        default: return "float32";
    }
}

bool isHfDirectory(const std::string& path) {
    std::error_code ec;
    return fs::is_directory(path, ec);
}

// A file inside an HF directory (config.json, *.safetensors, the index json) stands for the directory.
bool isHfFile(const std::string& path) {
    const fs::path p(path);
    return p.filename() == "config.json" || p.extension() == ".safetensors" ||
           p.filename().string().find(".index.json") != std::string::npos;
}

std::string hfDirOf(const std::string& path) {
    auto dir = fs::path(path).parent_path();
    return dir.empty() ? std::string(".") : dir.string();
}

std::string configPathOf(const std::string& dir) {
    auto p = (fs::path(dir) / "config.json").string();
    if (!fs::exists(p)) throw Error(dir, "no config.json in model directory");
    return p;
}

ModelConfig readHfConfigWithDiskDtype(const std::string& dir) {
    ModelConfig c = parseHfConfig(configPathOf(dir));
    c.source_path = dir;
    c.name = fs::path(dir).filename().string();
    if (c.name.empty()) c.name = fs::path(dir).parent_path().filename().string();
    // The dtype on disk is what matters for memory; the header says it without reading weights.
    try {
        SafetensorsSet set(dir);
        if (set.has("model.embed_tokens.weight")) c.torch_dtype = diskDtypeName(set.get("model.embed_tokens.weight").dtype);
    } catch (const Error&) {
        // No or unreadable weights: keep config.json's torch_dtype; load() reports the problem.
    }
    return c;
}

std::unique_ptr<CausalLM> loadHf(const std::string& dir, const LoadOptions& options) {
    ModelConfig c = readHfConfigWithDiskDtype(dir);
    SafetensorsSet set(dir);
    WeightMap weights;
    for (const auto& name : set.names()) {
        if (name.find("rotary_emb.inv_freq") != std::string::npos) continue;
        weights[name] = tensorFromView(set.get(name));
    }
    try {
        return makeTransformerLM(c, std::move(weights), options);
    } catch (const Error& e) {
        // Name the weights file rather than the directory when a tensor is wrong.
        if (e.source() == dir) throw Error(set.source(), e.problem());
        throw;
    }
}

std::unique_ptr<CausalLM> loadLlama2c(const std::string& path, const LoadOptions& options) {
    Llama2cHeader h = readLlama2cHeader(path);   // validates the file size exactly
    ModelConfig c = h.config;
    const std::string bytes = readFile(path);
    const float* f = reinterpret_cast<const float*>(bytes.data() + Llama2cHeader::kHeaderBytes);
    // Copy runs of floats; each array is [L, ...] stacked over layers.
    auto next = [&](std::vector<int64_t> shape) {
        auto t = torch::empty(shape, torch::kFloat32);
        std::memcpy(t.data_ptr<float>(), f, t.numel() * sizeof(float));
        f += t.numel();
        return t;
    };
    const int64_t d = c.hidden_size, L = c.num_layers, hd = c.head_dim, kv = c.num_kv_heads * hd, hid = c.intermediate_size;
    WeightMap w;
    w["model.embed_tokens.weight"] = next({c.vocab_size, d});
    auto rms_att = next({L, d});
    auto wq = next({L, d, d});
    auto wk = next({L, kv, d});
    auto wv = next({L, kv, d});
    auto wo = next({L, d, d});
    auto rms_ffn = next({L, d});
    auto w1 = next({L, hid, d});
    auto w2 = next({L, d, hid});
    auto w3 = next({L, hid, d});
    w["model.norm.weight"] = next({d});
    f += 2 * h.seq_len * (hd / 2);   // freq_cis_real / freq_cis_imag: recomputed from theta
    if (!c.tie_word_embeddings) w["lm_head.weight"] = next({c.vocab_size, d});
    for (int64_t i = 0; i < L; ++i) {
        const std::string p = "model.layers." + std::to_string(i) + ".";
        w[p + "input_layernorm.weight"] = rms_att[i];
        w[p + "self_attn.q_proj.weight"] = wq[i];
        w[p + "self_attn.k_proj.weight"] = wk[i];
        w[p + "self_attn.v_proj.weight"] = wv[i];
        w[p + "self_attn.o_proj.weight"] = wo[i];
        w[p + "post_attention_layernorm.weight"] = rms_ffn[i];
        w[p + "mlp.gate_proj.weight"] = w1[i];
        w[p + "mlp.down_proj.weight"] = w2[i];
        w[p + "mlp.up_proj.weight"] = w3[i];
    }
    return makeTransformerLM(c, std::move(w), options);
}

// HF's convert_llama_weights_to_hf permute: interleaved pairs -> rotate-half row order.
torch::Tensor permuteForRotateHalf(const torch::Tensor& w, int64_t heads) {
    const int64_t rows = w.size(0), cols = w.size(1);
    return w.view({heads, rows / heads / 2, 2, cols}).transpose(1, 2).reshape({rows, cols});
}

}  // namespace

std::unique_ptr<CausalLM> CausalLM::load(const std::string& path, const LoadOptions& options) {
    std::error_code ec;
    if (!fs::exists(path, ec)) throw Error(path, "no such file or directory");
    // Refuse before allocating anything: an OOM kill halfway through loading loses the session.
    // Host memory only; a CUDA load is bounded by the device, which torch reports itself.
    if (options.check_memory && resolveDevice(options.device, path).is_cpu()) {
        const ModelConfig config = readConfig(path);
        checkFits(estimateModelBytes(config, options.dtype), availableMemoryBytes(), path,
                  "loading " + std::to_string(config.numParameters()) + " parameters as " + options.dtype);
    }
    if (isHfDirectory(path)) return loadHf(path, options);
    if (isHfFile(path)) return loadHf(hfDirOf(path), options);
    return loadLlama2c(path, options);
}

ModelConfig CausalLM::readConfig(const std::string& path) {
    std::error_code ec;
    if (!fs::exists(path, ec)) throw Error(path, "no such file or directory");
    if (isHfDirectory(path)) return readHfConfigWithDiskDtype(path);
    if (isHfFile(path)) return readHfConfigWithDiskDtype(hfDirOf(path));
    return readLlama2cHeader(path).config;
}

ModelConfig readModelConfig(const std::string& path) { return CausalLM::readConfig(path); }

void saveAsHuggingFace(const CausalLM& model, const std::string& out_dir) {
    makeDirectories(out_dir);
    ModelConfig c = model.config();
    const bool permute = c.rope_interleaved;
    c.rope_interleaved = false;
    c.torch_dtype = "float32";
    if (c.architecture.empty()) c.architecture = "LlamaForCausalLM";
    std::vector<torch::Tensor> keep;   // alive until the writer finishes
    SafetensorsWriter writer((fs::path(out_dir) / "model.safetensors").string());
    writer.setMetadata("format", "pt");
    for (const auto& [name, tensor] : model.namedParameters()) {
        torch::Tensor t = tensor.detach().to(torch::kCPU, torch::kFloat32);
        if (permute && name.find("self_attn.q_proj.weight") != std::string::npos) t = permuteForRotateHalf(t, c.num_heads);
        if (permute && name.find("self_attn.k_proj.weight") != std::string::npos) t = permuteForRotateHalf(t, c.num_kv_heads);
        if (permute && (name.find("q_proj.bias") != std::string::npos || name.find("k_proj.bias") != std::string::npos))
            throw Error(out_dir, "cannot convert interleaved-RoPE attention biases");
        t = t.contiguous();
        keep.push_back(t);
        writer.add(name, DType::F32, std::vector<int64_t>(t.sizes().begin(), t.sizes().end()), t.data_ptr());
    }
    writer.finish();
    writeFileAtomic((fs::path(out_dir) / "config.json").string(), hfConfigJson(c));
}

}  // namespace wl
