#include "draft/specforge_export.h"

#include <cctype>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "draft/draft_config.h"
#include "util/atomic_file.h"
#include "util/error.h"

namespace wl {

namespace fs = std::filesystem;

std::string shellQuote(const std::string& arg) {
    bool plain = !arg.empty();
    for (char c : arg)
        plain = plain && (std::isalnum(static_cast<unsigned char>(c)) || std::string("-_./=:,+@%").find(c) != std::string::npos);
    if (plain) return arg;
    std::string out = "'";
    for (char c : arg) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

namespace {
std::string num(double v) {
    std::ostringstream s;
    s << v;
    return s.str();
}
}  // namespace

std::vector<std::string> specForgeCommand(const SpecForgeOptions& o, const std::string& draft_config_path,
                                          const std::string& train_data_path, const std::string& output_dir) {
    // Flags of scripts/train_eagle3_online.py (SpecForge), see tests/test_draft_specforge.cpp.
    return {"torchrun",
            "--standalone",
            "--nproc_per_node",
            std::to_string(o.nproc_per_node),
            "scripts/train_eagle3_online.py",
            "--target-model-path",
            o.target_model,
            "--draft-model-config",
            draft_config_path,
            "--train-data-path",
            train_data_path,
            "--output-dir",
            output_dir,
            "--num-epochs",
            std::to_string(o.num_epochs),
            "--batch-size",
            std::to_string(o.batch_size),
            "--learning-rate",
            num(o.learning_rate),
            "--max-length",
            std::to_string(o.max_length),
            "--warmup-ratio",
            num(o.warmup_ratio),
            "--ttt-length",
            std::to_string(o.ttt_length),
            "--chat-template",
            o.chat_template,
            "--cache-dir",
            output_dir + "/cache"};
}

std::string calibrationToSpecForgeJsonl(const CalibrationSet& data) {
    std::string out;
    for (size_t i = 0; i < data.prompts.size(); ++i) {
        const auto& p = data.prompts[i];
        nlohmann::ordered_json row;
        row["id"] = "wavelab-" + std::to_string(i);
        nlohmann::ordered_json turns = nlohmann::ordered_json::array();
        if (p.messages.empty()) {
            turns.push_back({{"role", "user"}, {"content", p.text}});
        } else {
            for (const auto& m : p.messages) turns.push_back({{"role", m.role}, {"content", m.content}});
        }
        row["conversations"] = turns;
        out += row.dump() + "\n";
    }
    return out;
}

SpecForgeFiles writeSpecForgeSetup(const ModelConfig& target, const CalibrationSet& data, const SpecForgeOptions& o) {
    if (o.target_model.empty()) throw Error("--model", "is required");
    if (o.out_dir.empty()) throw Error("--out", "is required");
    DraftConfig dc = draftConfigForTarget(target, o.layers, o.draft_vocab_size);
    toEagleAuxLayerIds(dc.aux_layers, "--layers");   // throws for layer 0 (no SpecForge id)
    dc.target_path = o.target_model;
    makeDirectories(o.out_dir);
    const fs::path out = fs::absolute(o.out_dir);
    SpecForgeFiles f;
    f.draft_config = (out / "draft_config.json").string();
    f.train_data = (out / "train_data.jsonl").string();
    f.launch_script = (out / "launch_specforge.sh").string();
    writeFileAtomic(f.draft_config, draftConfigToJson(dc));
    writeFileAtomic(f.train_data, calibrationToSpecForgeJsonl(data));
    f.command = specForgeCommand(o, f.draft_config, f.train_data, (out / "outputs").string());
    std::string script =
        "#!/usr/bin/env bash\n"
        "# Written by wavelab-cli specforge. Trains an EAGLE3 draft for " + o.target_model + "\n"
        "# on WaveLab-selected layers (HF hidden_states " + formatLayerList(dc.aux_layers) +
        " = SpecForge eagle_aux_hidden_state_layer_ids " + formatLayerList(toEagleAuxLayerIds(dc.aux_layers, "--layers")) +
        ").\n"
        "# Needs a SpecForge checkout (pip install -e .) and GPUs. Plain prompts carry no\n"
        "# assistant turn: regenerate responses with the target first for best results.\n"
        "set -euo pipefail\n"
        "cd \"${SPECFORGE_DIR:-" + o.specforge_dir + "}\"\n";
    for (size_t i = 0; i < f.command.size(); ++i) {
        script += shellQuote(f.command[i]);
        const bool next_is_flag = i + 1 < f.command.size() && f.command[i + 1].rfind("--", 0) == 0;
        script += i + 1 == f.command.size() ? "\n" : (next_is_flag ? " \\\n    " : " ");
    }
    writeFileAtomic(f.launch_script, script);
    fs::permissions(f.launch_script, fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec,
                    fs::perm_options::add);
    return f;
}

}  // namespace wl
