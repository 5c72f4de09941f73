#pragma once
// Writes a capture directory (wavelab-cli capture, GUI export, draft training input):
//   hidden_states.safetensors  "hidden_states.<h>" f32 [Ntok, D] for h = 0..N (prompts
//                              concatenated in order), "final_normed" f32 [Ntok, D] when
//                              kept, "token_ids" i64 [Ntok], "token_entropy" f32 [Ntok],
//                              "prompt_offsets" i64 [P+1] (prompt p = rows [off[p], off[p+1])),
//                              "prompt_index" i64 [P] (index in the calibration set)
//   manifest.json              the convention, shapes, model/tokenizer/data info.
// Plain C++ (no torch). Prompts are kept in memory until finish().
#include <string>
#include <vector>

#include "capture/captured_prompt.h"
#include "model/model_config.h"

namespace wl {

struct CaptureManifestInfo {
    ModelConfig model;
    std::string compute_dtype = "float32";
    std::string device = "cpu";
    bool synthetic_model = false;
    std::string tokenizer_path;
    std::string tokenizer_kind;
    std::string data_source;
    std::string data_format;
    int64_t max_tokens_per_prompt = 0;
    bool add_bos = true;
    std::string chat_template = "none";
    double seconds = 0.0;
};

// The hidden-state convention text (same wording as model/causal_lm.h), for manifests.
const char* hiddenStateConventionText();

class CaptureWriter {
public:
    explicit CaptureWriter(std::string out_dir) : out_dir_(std::move(out_dir)) {}
    void add(CapturedPrompt&& prompt);   // throws wl::Error if shapes differ from the first prompt
    int64_t numPrompts() const { return static_cast<int64_t>(prompts_.size()); }
    int64_t numTokens() const { return num_tokens_; }
    // Writes both files atomically; returns the safetensors path.
    std::string finish(const CaptureManifestInfo& info);

private:
    std::string out_dir_;
    std::vector<CapturedPrompt> prompts_;
    int64_t num_tokens_ = 0;
};

}  // namespace wl
