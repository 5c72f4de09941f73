#pragma once
// Plain C++ (no torch) access to CausalLM::readConfig, for GUI code and light CLI commands:
// an HF directory (or a file in it) or a llama2.c checkpoint; reads no weights.
#include <string>

#include "model/model_config.h"

namespace wl {

ModelConfig readModelConfig(const std::string& path);   // throws wl::Error naming the file

}  // namespace wl
