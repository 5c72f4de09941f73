#pragma once
// Calibration prompts: plain text (one prompt per line), JSONL ({"text": ...} or
// {"prompt": ...} per line), ShareGPT JSON ([{"conversations": [{"from","value"}...]}...]).
#include <string>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace wl {

struct CalibrationPrompt {
    std::string text;                     // plain text, or the first human turn
    std::vector<ChatMessage> messages;    // filled for ShareGPT; empty for plain prompts
};

struct CalibrationSet {
    std::string source;                   // file path
    std::string format;                   // "text", "jsonl", "sharegpt"
    std::vector<CalibrationPrompt> prompts;
};

// Detects the format from content. Throws wl::Error naming the file (and line) on malformed
// input, an empty set, or non-UTF-8 text.
CalibrationSet loadCalibrationSet(const std::string& path);

// The bundled default set in resources/calibration/ (>= 64 varied prompts).
std::string defaultCalibrationPath();
// Root of resources/ (source tree in development, or next to the installed binary).
std::string resourcesDir();

}  // namespace wl
