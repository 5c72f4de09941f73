// SpecForge set-up: the launch command only uses flags SpecForge's training script accepts,
// the draft config carries eagle_aux_hidden_state_layer_ids in SpecForge's convention, and
// the prompts convert to SpecForge's JSONL conversations.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "data/calibration_set.h"
#include "draft/draft_config.h"
#include "draft/specforge_export.h"
#include "util/atomic_file.h"
#include "util/error.h"

namespace fs = std::filesystem;

namespace {
// argparse flags of scripts/train_eagle3_online.py in sgl-project/SpecForge
// (commit 0168a5978d8b48deaf9328b6c46d123d8db7a713, parse_args()), copied by hand:
const std::set<std::string> kTrainEagle3OnlineFlags = {
    "--target-model-path", "--draft-model-config", "--embedding-key", "--train-data-path", "--eval-data-path",
    "--num-epochs", "--batch-size", "--learning-rate", "--max-length", "--warmup-ratio", "--ttt-length",
    "--chat-template", "--tp-size", "--cache-key", "--cache-dir", "--output-dir", "--eval-interval",
    "--save-interval", "--seed", "--dist-timeout", "--attention-backend", "--resume", "--wandb", "--wandb-project",
    "--wandb-name", "--wandb-key", "--build-dataset-num-proc"};
// Required there: --target-model-path, --draft-model-config, --train-data-path, --output-dir.
const std::set<std::string> kRequired = {"--target-model-path", "--draft-model-config", "--train-data-path", "--output-dir"};
// torchrun's own flags used before the script.
const std::set<std::string> kTorchrunFlags = {"--standalone", "--nproc_per_node"};

wl::ModelConfig llamaLike(int64_t layers) {
    wl::ModelConfig c;
    c.architecture = "LlamaForCausalLM";
    c.name = "tiny-llama";
    c.vocab_size = 1000;
    c.hidden_size = 64;
    c.intermediate_size = 172;
    c.num_layers = layers;
    c.num_heads = 8;
    c.num_kv_heads = 4;
    c.head_dim = 8;
    c.rms_norm_eps = 1e-6;
    c.rope_theta = 500000;
    return c;
}

std::string workDir(const std::string& name) {
    auto dir = fs::path(WAVELAB_TEST_WORK_DIR) / "draft_specforge" / name;
    fs::remove_all(dir);
    return dir.string();
}
}  // namespace

TEST(SpecForge, LaunchCommandUsesOnlyKnownFlags) {
    wl::SpecForgeOptions o;
    o.target_model = "meta-llama/Llama-3.1-8B-Instruct";
    o.layers = {2, 16, 29};
    auto cmd = wl::specForgeCommand(o, "/x/draft_config.json", "/x/train.jsonl", "/x/out");
    ASSERT_GE(cmd.size(), 6u);
    EXPECT_EQ(cmd[0], "torchrun");
    size_t script = 0;
    for (size_t i = 0; i < cmd.size(); ++i)
        if (cmd[i] == "scripts/train_eagle3_online.py") script = i;
    ASSERT_GT(script, 0u);
    for (size_t i = 1; i < script; ++i)
        if (cmd[i].rfind("--", 0) == 0) EXPECT_TRUE(kTorchrunFlags.count(cmd[i])) << cmd[i];
    std::set<std::string> used;
    for (size_t i = script + 1; i < cmd.size(); ++i) {
        if (cmd[i].rfind("--", 0) != 0) continue;
        EXPECT_TRUE(kTrainEagle3OnlineFlags.count(cmd[i])) << "SpecForge does not accept " << cmd[i];
        EXPECT_TRUE(used.insert(cmd[i]).second) << cmd[i] << " twice";
        ASSERT_LT(i + 1, cmd.size()) << cmd[i] << " has no value";
        EXPECT_NE(cmd[i + 1].rfind("--", 0), 0u) << cmd[i] << " has no value";
    }
    for (const auto& r : kRequired) EXPECT_TRUE(used.count(r)) << "missing required " << r;
    for (const auto& f : {"--num-epochs", "--batch-size", "--learning-rate", "--max-length", "--chat-template"})
        EXPECT_TRUE(used.count(f)) << f;
}

TEST(SpecForge, WritesConfigDataAndScript) {
    wl::CalibrationSet data;
    data.source = "mem";
    data.prompts.push_back({"Once upon a time", {}});
    data.prompts.push_back({"hi", {{"user", "hi \"there\""}, {"assistant", "hello\nworld"}}});
    wl::SpecForgeOptions o;
    o.target_model = "/models/tiny llama";
    o.layers = {1, 3, 4};
    o.out_dir = workDir("setup");
    o.draft_vocab_size = 500;
    auto files = wl::writeSpecForgeSetup(llamaLike(6), data, o);

    auto cfg = nlohmann::json::parse(wl::readFile(files.draft_config));
    EXPECT_EQ(cfg["architectures"][0], "LlamaForCausalLMEagle3");
    // HF hidden_states 1,3,4 = outputs of decoder layers 0,2,3.
    EXPECT_EQ(cfg["eagle_config"]["eagle_aux_hidden_state_layer_ids"], nlohmann::json::array({0, 2, 3}));
    EXPECT_EQ(cfg["draft_vocab_size"], 500);
    EXPECT_EQ(cfg["vocab_size"], 1000);
    EXPECT_EQ(cfg["num_hidden_layers"], 1);
    EXPECT_EQ(cfg["rope_theta"], 500000.0);
    EXPECT_EQ(cfg["wavelab"]["target_model_path"], "/models/tiny llama");

    std::istringstream lines(wl::readFile(files.train_data));
    std::vector<nlohmann::json> rows;
    for (std::string line; std::getline(lines, line);) rows.push_back(nlohmann::json::parse(line));
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(rows[0]["conversations"], nlohmann::json::parse(R"([{"role":"user","content":"Once upon a time"}])"));
    EXPECT_EQ(rows[1]["conversations"][1]["content"], "hello\nworld");
    EXPECT_EQ(rows[1]["conversations"][0]["content"], "hi \"there\"");
    EXPECT_TRUE(rows[0].contains("id"));

    const std::string script = wl::readFile(files.launch_script);
    EXPECT_NE(script.find("scripts/train_eagle3_online.py"), std::string::npos);
    EXPECT_NE(script.find("--target-model-path '/models/tiny llama'"), std::string::npos) << script;
    EXPECT_NE(script.find("--draft-model-config " + files.draft_config), std::string::npos) << script;
    EXPECT_TRUE((fs::status(files.launch_script).permissions() & fs::perms::owner_exec) != fs::perms::none);
    // The script is valid shell.
    EXPECT_EQ(std::system(("bash -n " + files.launch_script).c_str()), 0);
}

TEST(SpecForge, RejectsLayersWithoutASpecForgeId) {
    wl::CalibrationSet data;
    data.source = "mem";
    data.prompts.push_back({"x", {}});
    wl::SpecForgeOptions o;
    o.target_model = "m";
    o.out_dir = workDir("bad");
    o.layers = {0, 2};
    EXPECT_THROW(wl::writeSpecForgeSetup(llamaLike(6), data, o), wl::Error);
    o.layers = {2, 7};
    EXPECT_THROW(wl::writeSpecForgeSetup(llamaLike(6), data, o), wl::Error);
    EXPECT_EQ(wl::shellQuote("a b'c"), "'a b'\\''c'");
    EXPECT_EQ(wl::shellQuote("--x=1,2"), "--x=1,2");
}
