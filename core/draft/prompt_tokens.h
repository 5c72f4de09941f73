#pragma once
// Calibration prompts -> token ids for draft training and evaluation. Plain C++.
#include <cstdint>
#include <string>
#include <vector>

#include "data/calibration_set.h"
#include "tokenizer/tokenizer.h"

namespace wl {

struct PromptTokenOptions {
    int64_t offset = 0;            // skip this many prompts
    int64_t max_prompts = 0;       // 0 = all remaining
    int64_t max_tokens = 64;       // truncate each prompt (0 = no limit)
    bool add_bos = true;
    std::string chat_template = "none";   // "none" = raw text, else Tokenizer::applyChatTemplate family
};

// Prompts that tokenise to nothing are skipped. Throws wl::Error(data.source, ...) when no
// prompt is left.
std::vector<std::vector<int64_t>> tokenizePrompts(const Tokenizer& tokenizer, const CalibrationSet& data,
                                                  const PromptTokenOptions& options);

}  // namespace wl
