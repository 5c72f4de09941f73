#include "model/model_config.h"

namespace wl {

int64_t ModelConfig::numParameters() const {
    const int64_t d = hidden_size, hd = head_dim > 0 ? head_dim : (num_heads ? hidden_size / num_heads : 0);
    const int64_t q = num_heads * hd, kv = num_kv_heads * hd;
    int64_t attn = d * q + 2 * d * kv + q * d;
    if (attention_bias) attn += q + 2 * kv;
    if (qk_norm) attn += 2 * hd;
    const int64_t mlp = 3 * d * intermediate_size;
    const int64_t norms = 2 * d;
    int64_t total = num_layers * (attn + mlp + norms) + vocab_size * d + d;
    if (!tie_word_embeddings) total += vocab_size * d;
    return total;
}

}  // namespace wl
