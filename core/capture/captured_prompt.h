#pragma once
// The unit of streaming between capture, analysis, the GUI and training: one prompt's
// hidden states at every depth. Plain C++ (no torch): safe to pass through Qt signals.
//
// Convention: states[h] for h = 0..num_layers, the Hugging Face hidden_states[h] convention
// documented in model/causal_lm.h (0 = embeddings, h = output of decoder layer h-1,
// h = num_layers is pre-final-norm). final_normed is the post-final-norm state.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace wl {

struct CapturedPrompt {
    int64_t prompt_index = 0;            // index in the calibration set
    int64_t num_tokens = 0;              // T (real tokens, no padding)
    int64_t num_states = 0;              // num_layers + 1
    int64_t hidden_size = 0;             // D
    std::vector<int64_t> token_ids;      // T
    // Entropy (nats) of the model's next-token distribution at each position: softmax of the
    // final logits at position t predicts token t+1.
    std::vector<float> token_entropy;    // T
    // Row-major [num_states][T][D] float32.
    std::vector<float> states;
    std::vector<float> final_normed;     // [T][D]
    bool has_bos = false;                // position 0 is BOS (an attention sink)

    const float* state(int64_t h) const { return states.data() + h * num_tokens * hidden_size; }
    const float* row(int64_t h, int64_t t) const { return state(h) + t * hidden_size; }
};

}  // namespace wl
