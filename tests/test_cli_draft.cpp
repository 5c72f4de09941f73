// wavelab-cli train / eval / compare / specforge on stories260K, run as a user would.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "cli_runner.h"
#include "util/atomic_file.h"

namespace fs = std::filesystem;

namespace {
const std::string kModel = std::string(WAVELAB_MODELS_DIR) + "/stories260K/stories260K.bin";

wl::test::CliResult cli(const std::string& args) { return wl::test::runCli(args); }

std::string work(const std::string& name) {
    auto d = fs::path(WAVELAB_TEST_WORK_DIR) / "cli_draft" / name;
    fs::remove_all(d);
    return d.string();
}
}  // namespace

TEST(CliDraft, TrainThenEvalPrintsTauAndIsLossless) {
    if (!fs::exists(kModel)) GTEST_SKIP() << "stories260K missing";
    const auto out = work("train");
    auto t = cli("train --model " + kModel + " --layers 1,3,4 --steps 30 --max-prompts 24 --max-new 32 --ttt 3 --lr 1e-2 "
                 "--threads 1 --checkpoint-every 10 --out " + out);
    ASSERT_EQ(t.code, 0) << t.out;
    EXPECT_NE(t.out.find("trained 30 steps"), std::string::npos) << t.out;
    EXPECT_TRUE(fs::exists(fs::path(out) / "checkpoint" / "train_state.pt"));
    auto cfg = nlohmann::json::parse(wl::readFile((fs::path(out) / "config.json").string()));
    EXPECT_EQ(cfg["eagle_config"]["eagle_aux_hidden_state_layer_ids"], nlohmann::json::array({0, 2, 3}));

    // Resuming a finished run trains nothing more and rewrites the same draft.
    auto again = cli("train --model " + kModel + " --layers 1,3,4 --steps 30 --max-prompts 24 --max-new 32 --ttt 3 --lr 1e-2 "
                     "--threads 1 --resume --out " + out);
    ASSERT_EQ(again.code, 0) << again.out;
    EXPECT_NE(again.out.find("resumed at step 30"), std::string::npos) << again.out;

    auto e = cli("eval --model " + kModel + " --draft " + out + " --offset 64 --max-prompts 6 --k 4 --max-new 32 --threads 1");
    ASSERT_EQ(e.code, 0) << e.out;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(e.out, m, std::regex("tau ([0-9.]+)"))) << e.out;
    EXPECT_GT(std::stod(m[1]), 1.0) << e.out;
    EXPECT_NE(e.out.find("lossless: yes"), std::string::npos) << e.out;

    // Tree drafting: depth 4, three nodes per level; still identical to greedy decoding.
    auto tree = cli("eval --model " + kModel + " --draft " + out +
                 " --offset 64 --max-prompts 6 --k 4 --tree-topk 3 --max-new 32 --threads 1");
    ASSERT_EQ(tree.code, 0) << tree.out;
    EXPECT_NE(tree.out.find("tree depth 4 x top-3"), std::string::npos) << tree.out;
    ASSERT_TRUE(std::regex_search(tree.out, m, std::regex("tau ([0-9.]+)"))) << tree.out;
    EXPECT_GT(std::stod(m[1]), 1.0) << tree.out;
    EXPECT_NE(tree.out.find("lossless: yes"), std::string::npos) << tree.out;
    ASSERT_TRUE(std::regex_search(tree.out, m, std::regex("tokens verified per round ([0-9.]+)"))) << tree.out;
    EXPECT_GT(std::stod(m[1]), 5.0) << tree.out;   // more than a chain's k + 1
}

TEST(CliDraft, BadInputGivesOneLineErrors) {
    if (!fs::exists(kModel)) GTEST_SKIP() << "stories260K missing";
    auto r = cli("train --model " + kModel + " --layers 1,9 --steps 2 --out " + work("bad"));
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.out.find("--layers"), std::string::npos) << r.out;
    r = cli("train --model " + kModel + " --layers 1,x --out " + work("bad2"));
    EXPECT_EQ(r.code, 1);
    r = cli("eval --model " + kModel + " --draft " + work("nothing"));
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.out.find("config.json"), std::string::npos) << r.out;
    r = cli("eval --model " + kModel + " --draft " + work("nothing") + " --tree-topk 0");
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.out.find("--tree-topk"), std::string::npos) << r.out;
    r = cli("eval --model " + kModel + " --draft " + work("nothing"));
    EXPECT_NE(r.out.find("config.json"), std::string::npos) << r.out;
    r = cli("compare --model " + kModel + " --sets elsi,eagle3 --steps 1");
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.out.find("--result"), std::string::npos) << r.out;
    r = cli("train --model " + kModel + " --layers 1 --steps 2 --out x --bogus 1");
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.out.find("--bogus"), std::string::npos) << r.out;
}

TEST(CliDraft, CompareTrainsOneDraftPerSet) {
    if (!fs::exists(kModel)) GTEST_SKIP() << "stories260K missing";
    const auto out = work("compare");
    auto r = cli("compare --model " + kModel + " --sets \"mine=1,3,4;eagle3\" --steps 6 --batch 2 --max-prompts 8 --max-new 16 "
                 "--ttt 2 --eval-prompts 2 --eval-max-new 16 --threads 1 --out " + out);
    ASSERT_EQ(r.code, 0) << r.out;
    EXPECT_NE(r.out.find("mine"), std::string::npos) << r.out;
    // stories260K has N = 5 layers: EAGLE3's [2, N//2, N-3] = hidden_states 2,2,2 -> {2}.
    EXPECT_TRUE(std::regex_search(r.out, std::regex("eagle3 +2 "))) << r.out;
    EXPECT_TRUE(fs::exists(fs::path(out) / "mine" / "model.safetensors"));
    EXPECT_TRUE(fs::exists(fs::path(out) / "eagle3" / "model.safetensors"));
}

TEST(CliDraft, SpecForgeSetup) {
    if (!fs::exists(kModel)) GTEST_SKIP() << "stories260K missing";
    const auto out = work("specforge");
    auto r = cli("specforge --model " + kModel + " --layers 1,3,4 --chat-template llama3 --out " + out);
    ASSERT_EQ(r.code, 0) << r.out;
    auto cfg = nlohmann::json::parse(wl::readFile((fs::path(out) / "draft_config.json").string()));
    EXPECT_EQ(cfg["eagle_config"]["eagle_aux_hidden_state_layer_ids"], nlohmann::json::array({0, 2, 3}));
    EXPECT_EQ(cfg["hidden_size"], 64);
    EXPECT_EQ(cfg["draft_vocab_size"], 512);   // min(vocab, 32000)
    EXPECT_TRUE(fs::exists(fs::path(out) / "launch_specforge.sh"));
    EXPECT_TRUE(fs::exists(fs::path(out) / "train_data.jsonl"));
    r = cli("specforge --model org/not-here --layers 1,3 --out " + out);
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.out.find("--config"), std::string::npos) << r.out;
}
