#pragma once
// Deterministic synthetic hidden states shared by the analysis benchmarks and the numpy
// baseline (bench/baseline_entropy_cka.py implements the same bit operations):
//   value(p, l, t, d) = s_d * (u(noise) + w_l * u(shared)),  s_d = 1/sqrt(1 + d/32),
//   w_l = 2 l / L, u = splitmix-style hash of a flat index -> float32 in [-1, 1) (24 bits).
// Adjacent states share the `shared` component with growing weight, so CKA is not trivial.
#include <cmath>
#include <cstdint>
#include <vector>

#include "capture/captured_prompt.h"

namespace wl::bench {

inline float hashUniform(uint64_t idx, uint64_t seed) {
    uint64_t h = idx * 0x9E3779B97F4A7C15ull + seed;
    h ^= h >> 29;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 32;
    return static_cast<float>(h >> 40) * (1.0f / 8388608.0f) - 1.0f;
}

inline CapturedPrompt syntheticPrompt(int64_t p, int64_t L, int64_t T, int64_t D, uint64_t seed) {
    CapturedPrompt cp;
    cp.prompt_index = p;
    cp.num_tokens = T;
    cp.num_states = L;
    cp.hidden_size = D;
    cp.token_ids.assign(static_cast<size_t>(T), 5);
    cp.token_entropy.assign(static_cast<size_t>(T), 1.0f);
    cp.has_bos = false;
    cp.states.resize(static_cast<size_t>(L * T * D));
    std::vector<float> scale(static_cast<size_t>(D));
    for (int64_t d = 0; d < D; ++d) scale[d] = static_cast<float>(1.0 / std::sqrt(1.0 + static_cast<double>(d) / 32.0));
    for (int64_t l = 0; l < L; ++l) {
        const float w = static_cast<float>(2.0 * static_cast<double>(l) / static_cast<double>(L));
        float* out = cp.states.data() + l * T * D;
        for (int64_t t = 0; t < T; ++t)
            for (int64_t d = 0; d < D; ++d) {
                const uint64_t noise = static_cast<uint64_t>(((p * L + l) * T + t) * D + d);
                const uint64_t shared = static_cast<uint64_t>(((p * L) * T + t) * D + d);
                const float a = hashUniform(noise, seed);
                const float b = hashUniform(shared, seed);
                const float wb = w * b;   // separate statements: no FMA contraction, same as numpy
                out[t * D + d] = (a + wb) * scale[d];
            }
    }
    return cp;
}

}  // namespace wl::bench
