#include "capture/capture_writer.h"

#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "io/safetensors.h"
#include "util/atomic_file.h"
#include "util/error.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace wl {

const char* hiddenStateConventionText() {
    return "Hugging Face hidden_states[h] convention: for a model with N decoder layers there are N+1 states "
           "per token; h = 0: token embeddings (input to decoder layer 0); h = k: output of decoder layer k-1 = "
           "residual stream entering layer k (pre-final-norm); h = N: output of the last decoder layer, BEFORE the "
           "final RMSNorm; plus final_normed = final RMSNorm applied to h = N (what the LM head sees).";
}

void CaptureWriter::add(CapturedPrompt&& p) {
    if (!prompts_.empty()) {
        const auto& first = prompts_.front();
        if (p.num_states != first.num_states || p.hidden_size != first.hidden_size ||
            p.final_normed.empty() != first.final_normed.empty())
            throw Error(out_dir_, "captured prompts disagree in shape");
    }
    num_tokens_ += p.num_tokens;
    prompts_.push_back(std::move(p));
}

std::string CaptureWriter::finish(const CaptureManifestInfo& info) {
    if (prompts_.empty()) throw Error(out_dir_, "nothing captured");
    makeDirectories(out_dir_);
    const int64_t S = prompts_[0].num_states, D = prompts_[0].hidden_size, N = num_tokens_;
    const std::string st_path = (fs::path(out_dir_) / "hidden_states.safetensors").string();
    SafetensorsWriter w(st_path);
    w.setMetadata("format", "wavelab-capture");
    for (int64_t h = 0; h < S; ++h) {
        w.addProduced("hidden_states." + std::to_string(h), DType::F32, {N, D}, [this, h](uint8_t* dst, size_t) {
            for (const auto& p : prompts_) {
                const size_t n = static_cast<size_t>(p.num_tokens * p.hidden_size) * sizeof(float);
                std::memcpy(dst, p.state(h), n);
                dst += n;
            }
        });
    }
    const bool has_final = !prompts_[0].final_normed.empty();
    if (has_final)
        w.addProduced("final_normed", DType::F32, {N, D}, [this](uint8_t* dst, size_t) {
            for (const auto& p : prompts_) {
                std::memcpy(dst, p.final_normed.data(), p.final_normed.size() * sizeof(float));
                dst += p.final_normed.size() * sizeof(float);
            }
        });
    std::vector<int64_t> ids, offsets{0}, index;
    std::vector<float> entropy;
    for (const auto& p : prompts_) {
        ids.insert(ids.end(), p.token_ids.begin(), p.token_ids.end());
        entropy.insert(entropy.end(), p.token_entropy.begin(), p.token_entropy.end());
        offsets.push_back(offsets.back() + p.num_tokens);
        index.push_back(p.prompt_index);
    }
    const int64_t P = static_cast<int64_t>(prompts_.size());
    w.add("token_ids", DType::I64, {N}, ids.data());
    w.add("token_entropy", DType::F32, {N}, entropy.data());
    w.add("prompt_offsets", DType::I64, {P + 1}, offsets.data());
    w.add("prompt_index", DType::I64, {P}, index.data());
    w.finish();

    const auto& m = info.model;
    json manifest = {
        {"format", "wavelab-capture"},
        {"version", 1},
        {"convention", hiddenStateConventionText()},
        {"file", "hidden_states.safetensors"},
        {"num_prompts", P},
        {"num_tokens", N},
        {"num_states", S},
        {"num_layers", S - 1},
        {"hidden_size", D},
        {"has_bos", prompts_[0].has_bos},
        {"tensors",
         {{"hidden_states.<h>", "float32 [num_tokens, hidden_size], h = 0..num_layers, prompts concatenated in order"},
          {"final_normed", has_final ? "float32 [num_tokens, hidden_size], final RMSNorm of hidden_states.<num_layers>"
                                     : "absent"},
          {"token_ids", "int64 [num_tokens]"},
          {"token_entropy", "float32 [num_tokens], nats; softmax of the logits at position t predicts token t+1"},
          {"prompt_offsets", "int64 [num_prompts + 1]; prompt p is rows [prompt_offsets[p], prompt_offsets[p+1])"},
          {"prompt_index", "int64 [num_prompts], index of each prompt in the calibration data"}}},
        {"model",
         {{"name", m.name},
          {"path", m.source_path},
          {"source_format", m.source_format},
          {"architecture", m.architecture},
          {"num_layers", m.num_layers},
          {"hidden_size", m.hidden_size},
          {"num_heads", m.num_heads},
          {"num_kv_heads", m.num_kv_heads},
          {"head_dim", m.head_dim},
          {"vocab_size", m.vocab_size},
          {"dtype_on_disk", m.torch_dtype},
          {"compute_dtype", info.compute_dtype},
          {"device", info.device},
          {"synthetic", info.synthetic_model}}},
        {"tokenizer", {{"path", info.tokenizer_path}, {"kind", info.tokenizer_kind}}},
        {"data", {{"source", info.data_source}, {"format", info.data_format}}},
        {"options",
         {{"max_tokens_per_prompt", info.max_tokens_per_prompt}, {"add_bos", info.add_bos}, {"chat_template", info.chat_template}}},
        {"seconds", info.seconds},
        {"tokens_per_second", info.seconds > 0 ? N / info.seconds : 0.0}};
    writeFileAtomic((fs::path(out_dir_) / "manifest.json").string(), manifest.dump(2) + "\n");
    return st_path;
}

}  // namespace wl
