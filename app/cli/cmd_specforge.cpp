// wavelab-cli specforge: a SpecForge (sgl-project/SpecForge) training set-up for the chosen
// layers: draft config json, calibration prompts as SpecForge JSONL, torchrun launch script.
#include <filesystem>
#include <iostream>

#include "command.h"
#include "data/calibration_set.h"
#include "draft/draft_config.h"
#include "draft/specforge_export.h"
#include "draft/training_task.h"
#include "model/hf_config.h"
#include "util/error.h"

namespace wl::cli {
namespace {

int runSpecForge(const Args& args) {
    args.allowOnly({"model", "config", "layers", "data", "out", "epochs", "batch-size", "lr", "max-length", "ttt",
                    "chat-template", "nproc", "draft-vocab", "specforge-dir"});
    SpecForgeOptions o;
    o.target_model = args.get("model");
    o.layers = parseLayerList(args.get("layers"), "--layers");
    o.out_dir = args.get("out");
    o.num_epochs = args.getInt("epochs", o.num_epochs);
    o.batch_size = args.getInt("batch-size", o.batch_size);
    o.learning_rate = args.getDouble("lr", o.learning_rate);
    o.max_length = args.getInt("max-length", o.max_length);
    o.ttt_length = args.getInt("ttt", o.ttt_length);
    o.chat_template = args.get("chat-template", o.chat_template);
    o.nproc_per_node = args.getInt("nproc", o.nproc_per_node);
    o.draft_vocab_size = args.getInt("draft-vocab", o.draft_vocab_size);
    o.specforge_dir = args.get("specforge-dir", o.specforge_dir);
    // The draft config mirrors the target's shapes: read them locally (a path, or --config
    // with the config.json of a hub id that is not on this machine).
    ModelConfig mc;
    if (args.has("config")) {
        mc = parseHfConfig(args.get("config"));
    } else if (std::filesystem::exists(o.target_model)) {
        mc = readTargetConfig(o.target_model);
    } else {
        throw Error("--model", "'" + o.target_model + "' is not a local path: pass --config path/to/config.json of that model");
    }
    const std::string data_path = args.get("data", defaultCalibrationPath());
    const auto data = loadCalibrationSet(data_path);
    const auto files = writeSpecForgeSetup(mc, data, o);
    std::cout << "wrote " << files.draft_config << "\n      " << files.train_data << " (" << data.prompts.size()
              << " conversations)\n      " << files.launch_script << "\nlaunch:";
    for (const auto& a : files.command) std::cout << " " << shellQuote(a);
    std::cout << "\n";
    return 0;
}

Registrar reg{"specforge",
              "--model HF_ID_OR_PATH --layers 1,3,4 --out DIR [--data F] [--config config.json] [--epochs N] "
              "[--chat-template T]: write a SpecForge EAGLE3 training config + launch script",
              runSpecForge};

}  // namespace
}  // namespace wl::cli
