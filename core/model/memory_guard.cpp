#include "model/memory_guard.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "util/error.h"

namespace wl {

int64_t bytesPerElement(const std::string& dtype) {
    if (dtype == "float32" || dtype == "F32" || dtype == "f32" || dtype == "float") return 4;
    if (dtype == "bfloat16" || dtype == "BF16" || dtype == "bf16" || dtype == "float16" || dtype == "F16" ||
        dtype == "f16" || dtype == "half") return 2;
    if (dtype == "float64" || dtype == "F64" || dtype == "double") return 8;
    throw Error("dtype", "unknown dtype '" + dtype + "' (float32, bfloat16, float16)");
}

int64_t estimateModelBytes(const ModelConfig& config, const std::string& dtype) {
    const int64_t e = bytesPerElement(dtype);
    const int64_t largest = std::max(config.vocab_size * config.hidden_size,
                                     3 * config.intermediate_size * config.hidden_size);
    // Largest tensor converted from a float32 (worst case) on-disk copy.
    return config.numParameters() * e + largest * 4;
}

int64_t estimateCaptureBytes(const ModelConfig& config, int64_t tokens, int64_t batch, const std::string& dtype) {
    const int64_t e = bytesPerElement(dtype);
    const int64_t B = std::max<int64_t>(1, batch), T = std::max<int64_t>(1, tokens);
    const int64_t D = config.hidden_size, S = config.numHiddenStates() + 1;   // + final_normed
    const int64_t hd = config.head_dim > 0 ? config.head_dim : (config.num_heads ? D / config.num_heads : 0);
    const int64_t states = B * T * D * S * (e + 4);   // compute dtype + float32 copy
    const int64_t qkv = B * T * (config.num_heads + 2 * config.num_kv_heads) * hd * e;
    const int64_t mlp = B * T * 2 * config.intermediate_size * e;
    const int64_t scores = B * config.num_heads * T * T * 4;   // attention probabilities, float32
    const int64_t logits = B * std::min<int64_t>(T, 256) * config.vocab_size * 4;
    return states + qkv + mlp + scores + logits;
}

int64_t availableMemoryBytes(const std::string& meminfo_path) {
    std::ifstream in(meminfo_path);
    if (!in) return -1;
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("MemAvailable:", 0) != 0) continue;
        std::istringstream fields(line.substr(13));
        long long value = -1;
        std::string unit;
        if (!(fields >> value) || value < 0) return -1;
        fields >> unit;
        if (unit == "kB" || unit == "KB" || unit.empty()) return unit.empty() ? value : value * 1024;
        return -1;
    }
    return -1;
}

int64_t availableMemoryBytes() {
    int64_t available = availableMemoryBytes("/proc/meminfo");
    if (const char* limit = std::getenv("WAVELAB_MEMORY_LIMIT_MB"); limit && *limit) {
        char* end = nullptr;
        const long long mb = std::strtoll(limit, &end, 10);
        if (end == limit || *end != '\0' || mb < 0)
            throw Error("WAVELAB_MEMORY_LIMIT_MB", std::string("not a number of MiB: '") + limit + "'");
        const int64_t cap = static_cast<int64_t>(mb) << 20;
        available = available < 0 ? cap : std::min(available, cap);
    }
    return available;
}

std::string formatByteCount(int64_t bytes) {
    char buf[64];
    const double b = static_cast<double>(bytes);
    if (bytes >= (int64_t{1} << 30)) std::snprintf(buf, sizeof buf, "%.2f GiB", b / (1 << 30));
    else if (bytes >= (int64_t{1} << 20)) std::snprintf(buf, sizeof buf, "%.0f MiB", b / (1 << 20));
    else if (bytes >= 1024) std::snprintf(buf, sizeof buf, "%.0f KiB", b / 1024);
    else std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(bytes));
    return buf;
}

void checkFits(int64_t required_bytes, int64_t available_bytes, const std::string& source, const std::string& what) {
    if (available_bytes < 0 || required_bytes <= available_bytes) return;
    throw Error(source, what + " needs about " + formatByteCount(required_bytes) + " but only " +
                            formatByteCount(available_bytes) + " are available (MemAvailable); use a smaller model, "
                            "bfloat16, fewer tokens per prompt or a smaller batch");
}

}  // namespace wl
