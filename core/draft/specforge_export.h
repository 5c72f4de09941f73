#pragma once
// Scaling draft training beyond one machine with SpecForge (github.com/sgl-project/SpecForge):
// writes the draft config json (LlamaForCausalLMEagle3 with
// eagle_config.eagle_aux_hidden_state_layer_ids in SpecForge's layer-output convention), the
// calibration prompts as SpecForge JSONL conversations, and a torchrun launch script for
// scripts/train_eagle3_online.py. Plain C++.
#include <cstdint>
#include <string>
#include <vector>

#include "data/calibration_set.h"
#include "model/model_config.h"

namespace wl {

struct SpecForgeOptions {
    std::string target_model;         // HF id or local path, passed to --target-model-path
    std::vector<int64_t> layers;      // WaveLab/HF hidden_states indices (>= 1)
    std::string out_dir;
    int64_t draft_vocab_size = 32000;
    int64_t num_epochs = 10;
    int64_t batch_size = 1;
    double learning_rate = 1e-4;
    int64_t max_length = 2048;
    int64_t ttt_length = 7;
    double warmup_ratio = 0.02;
    std::string chat_template = "llama3";
    int64_t nproc_per_node = 8;
    std::string specforge_dir = "SpecForge";   // checkout the script cds into
};

struct SpecForgeFiles {
    std::string draft_config;   // <out>/draft_config.json
    std::string train_data;     // <out>/train_data.jsonl
    std::string launch_script;  // <out>/launch_specforge.sh
    std::vector<std::string> command;   // the torchrun argv, for display and tests
};

// The argv of the launch command (torchrun ... scripts/train_eagle3_online.py --flag value ...).
std::vector<std::string> specForgeCommand(const SpecForgeOptions& options, const std::string& draft_config_path,
                                          const std::string& train_data_path, const std::string& output_dir);

// SpecForge JSONL: one {"id": "...", "conversations": [{"role": "user", "content": ...}, ...]}
// per prompt (ShareGPT turns are kept; plain prompts become one user turn).
std::string calibrationToSpecForgeJsonl(const CalibrationSet& data);

// Writes the three files atomically into options.out_dir.
SpecForgeFiles writeSpecForgeSetup(const ModelConfig& target, const CalibrationSet& data, const SpecForgeOptions& options);

// Shell-quotes one argument for a POSIX shell.
std::string shellQuote(const std::string& arg);

}  // namespace wl
