#pragma once
// Streams calibration prompts through a model and hands each prompt's captured states to a
// sink as soon as its batch finishes. Nothing accumulates unless the sink keeps it.
// Plain C++ interface (implementation uses torch).
#include <functional>
#include <string>

#include "capture/captured_prompt.h"
#include "data/calibration_set.h"
#include "util/cancel.h"

namespace wl {

class CausalLM;
class Tokenizer;

struct CaptureOptions {
    int64_t max_prompts = 0;          // 0 = all
    int64_t max_tokens_per_prompt = 512;   // truncate longer prompts (clamped to the context)
    int64_t batch_size = 4;           // prompts per forward pass (padded)
    bool add_bos = true;
    std::string chat_template = "none";  // "none" = raw text; "auto"/"qwen3"/"llama3"...
    bool keep_final_normed = true;
    // Refuse before the first forward when one batch's working set will not fit in host
    // memory (model/memory_guard.h). CPU models only.
    bool check_memory = true;
};

struct CaptureProgress {
    int64_t prompts_done = 0;
    int64_t prompts_total = 0;
    int64_t tokens_done = 0;
    double seconds = 0.0;
    double tokensPerSecond() const { return seconds > 0 ? tokens_done / seconds : 0.0; }
};

using CaptureSink = std::function<void(CapturedPrompt&&)>;
using CaptureProgressFn = std::function<void(const CaptureProgress&)>;

// Throws wl::Cancelled if `cancel` fires (prompts already handed to the sink stay valid),
// wl::Error on bad input (NaN/Inf activations are reported naming the prompt and layer).
CaptureProgress runCapture(CausalLM& model, const Tokenizer& tokenizer, const CalibrationSet& data,
                           const CaptureOptions& options, const CaptureSink& sink,
                           CancelToken* cancel = nullptr, const CaptureProgressFn& progress = {});

}  // namespace wl
