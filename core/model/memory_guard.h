#pragma once
// Memory estimates before loading a model or starting a capture, so WaveLab refuses with the
// numbers ("needs about X, Y available") instead of being killed by the OOM killer halfway.
// Plain C++ (no torch): safe for GUI code. Estimates are deliberately simple upper-bound-ish
// sums of the big buffers; they are meant to catch "does not fit at all", not to budget
// to the last megabyte.
#include <cstdint>
#include <string>

#include "model/model_config.h"

namespace wl {

// Bytes per element of a compute/storage dtype name ("float32", "bfloat16", "float16",
// also "F32"/"BF16"/"F16"). Throws wl::Error("dtype", ...) for other names.
int64_t bytesPerElement(const std::string& dtype);

// Weights in memory at `dtype` (numParameters x element size) plus the transient peak of
// loading: the loader converts one tensor at a time from the on-disk dtype, so the largest
// single tensor (embedding or LM head, vocab x hidden) exists twice for a moment.
int64_t estimateModelBytes(const ModelConfig& config, const std::string& dtype);

// Working set of one capture forward pass of `batch` prompts x `tokens` tokens at `dtype`:
// every hidden state of the batch (num_layers + 1 + final_normed) in the compute dtype and
// again as the float32 copy handed to the analysis, one layer's activations (q/k/v, MLP
// intermediate, B x heads x T x T attention scores), and the float32 logits of one
// entropy chunk (min(tokens, 256) positions x vocab) per prompt.
int64_t estimateCaptureBytes(const ModelConfig& config, int64_t tokens, int64_t batch,
                             const std::string& dtype = "float32");

// MemAvailable from /proc/meminfo in bytes, capped by $WAVELAB_MEMORY_LIMIT_MB when set (a
// budget on a shared machine, and how tests exercise the refusals); -1 when unknown.
int64_t availableMemoryBytes();
// Same, reading a meminfo-format file (for tests).
int64_t availableMemoryBytes(const std::string& meminfo_path);

// Throws wl::Error(source, "<what> needs about X GiB but only Y GiB are available ...")
// when required > available (available < 0 = unknown: never throws).
void checkFits(int64_t required_bytes, int64_t available_bytes, const std::string& source,
               const std::string& what);

// "1.50 GiB", "320 MiB", "12 KiB", "17 B".
std::string formatByteCount(int64_t bytes);

}  // namespace wl
