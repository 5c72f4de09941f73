// wavelab-cli select + export end to end on the real stories260K checkpoint.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli_runner.h"

namespace fs = std::filesystem;

using wl::test::runCli;

namespace {

std::string slurp(const fs::path& p) {
    std::ifstream f(p);
    std::stringstream s;
    s << f.rdbuf();
    return s.str();
}

const fs::path kWork = fs::path(WAVELAB_TEST_WORK_DIR) / "cli_select";
const std::string kModel = std::string(WAVELAB_MODELS_DIR) + "/stories260K/stories260K.bin";

// This process's result file: ctest -j runs the tests of this file as parallel processes.
fs::path resultPath() { return kWork / ("result_" + std::to_string(getpid()) + ".json"); }

// One select run shared by the tests of a process (it is the slow part).
const nlohmann::json& selectResult() {
    static nlohmann::json result = [] {
        fs::create_directories(kWork);
        const fs::path out = resultPath();
        fs::remove(out);
        wl::test::CliResult r = runCli("select --model " + kModel +
                       " --method elsi-c --m 3 --beam 8 --max-prompts 24 --max-tokens 64 --quiet --out " +
                       out.string());
        EXPECT_EQ(r.code, 0) << r.out;
        EXPECT_NE(r.out.find("EAGLE3"), std::string::npos) << r.out;
        return nlohmann::json::parse(slurp(out));
    }();
    return result;
}

}  // namespace

TEST(CliSelect, WritesACompleteResultOnStories260K) {
    if (!fs::exists(kModel)) GTEST_SKIP() << "missing " << kModel;
    const auto& j = selectResult();
    EXPECT_EQ(j["schema"], "wavelab.selection");
    EXPECT_EQ(j["model"]["num_layers"], 5);
    EXPECT_EQ(j["model"]["hidden_size"], 64);
    EXPECT_EQ(j["capture"]["max_prompts"], 24);
    EXPECT_EQ(j["analysis"]["prompts_seen"], 24);
    const auto& a = j["analysis"];
    ASSERT_EQ(a["num_states"], 6);
    ASSERT_EQ(a["entropy_filtered"].size(), 6u);
    ASSERT_EQ(a["entropy_unfiltered"].size(), 6u);
    for (int h = 0; h < 6; ++h) {
        // Raw entropy lies in (0, ln min(N, D)] = (0, ln 64].
        const double e = a["entropy_filtered"][h];
        EXPECT_GT(e, 0.0);
        EXPECT_LE(e, std::log(64.0) + 1e-9);
        ASSERT_EQ(a["cka"][h].size(), 6u);
        EXPECT_NEAR(a["cka"][h][h].get<double>(), 1.0, 1e-12);
        for (int k = 0; k < 6; ++k) EXPECT_NEAR(a["cka"][h][k].get<double>(), a["cka"][k][h].get<double>(), 1e-9);
    }
    EXPECT_LT(a["tokens_kept"].get<int>(), a["tokens_candidates"].get<int>());  // percentile filter
    EXPECT_LT(a["tokens_candidates"].get<int>(), a["tokens_seen"].get<int>());  // BOS dropped
    const auto& s = j["selection"];
    EXPECT_EQ(s["options"]["method"], "elsi-c");
    ASSERT_EQ(s["chosen"]["states"].size(), 3u);
    for (int h : s["chosen"]["states"]) {
        EXPECT_GE(h, 1);
        EXPECT_LE(h, 5);
    }
    EXPECT_EQ(s["trace"].size(), 3u);
    ASSERT_EQ(s["baselines"].size(), 2u);
    EXPECT_EQ(s["baselines"][0]["states"], (std::vector<int>{5}));
    EXPECT_EQ(s["baselines"][1]["states"], (std::vector<int>{2}));  // [2, 5//2, 5-3] collapses
    // The chosen set was ranked best among the final beam step's candidates.
    EXPECT_EQ(s["trace"][2]["kept"][0]["states"], s["chosen"]["states"]);
}

TEST(CliSelect, ExportsToEveryFormatWithMatchingIds) {
    if (!fs::exists(kModel)) GTEST_SKIP() << "missing " << kModel;
    const auto& j = selectResult();
    const std::vector<int> chosen = j["selection"]["chosen"]["states"];
    const fs::path result = resultPath();
    struct Case {
        std::string format;
        std::vector<std::string> key;
        int offset;  // id = h - offset
    };
    for (const auto& c : std::vector<Case>{{"vllm", {"eagle_aux_hidden_state_layer_ids"}, 0},
                                           {"sglang", {"eagle_config", "eagle_aux_hidden_state_layer_ids"}, 1},
                                           {"specforge", {"eagle_config", "eagle_aux_hidden_state_layer_ids"}, 1},
                                           {"trtllm", {"eagle3_layers_to_capture"}, 1},
                                           {"modelopt", {"eagle_architecture_config", "eagle_aux_hidden_state_layer_ids"}, 1}}) {
        const fs::path out = kWork / ("export_" + c.format + ".json");
        wl::test::CliResult r = runCli("export --result " + result.string() + " --format " + c.format + " --out " + out.string());
        ASSERT_EQ(r.code, 0) << r.out;
        auto e = nlohmann::json::parse(slurp(out));
        const nlohmann::json* node = &e;
        for (const auto& k : c.key) node = &(*node)[k];
        std::vector<int> ids = *node;
        ASSERT_EQ(ids.size(), chosen.size()) << c.format;
        for (size_t i = 0; i < ids.size(); ++i) EXPECT_EQ(ids[i] + c.offset, chosen[i]) << c.format;
        EXPECT_EQ(e["wavelab"]["num_layers"], 5);
        EXPECT_EQ(e["wavelab"]["target_model"], j["model"]["name"]);
        EXPECT_FALSE(e["wavelab"]["convention"].get<std::string>().empty());
    }
    // CSV tables.
    const fs::path csv = kWork / "csv";
    wl::test::CliResult r = runCli("export --result " + result.string() + " --csv " + csv.string());
    ASSERT_EQ(r.code, 0) << r.out;
    const std::string curve = slurp(csv / "entropy_curve.csv"), cka = slurp(csv / "cka.csv");
    EXPECT_EQ(std::count(curve.begin(), curve.end(), '\n'), 7);
    EXPECT_EQ(std::count(cka.begin(), cka.end(), '\n'), 7);
    r = runCli("export --result " + result.string() + " --format csv-cka");
    EXPECT_EQ(r.code, 0);
    EXPECT_EQ(r.out.rfind("state,0,1,2,3,4,5", 0), 0u) << r.out;
}

TEST(CliSelect, BadInputGivesOneClearLine) {
    fs::create_directories(kWork);
    const fs::path bad = kWork / "broken.json";
    std::ofstream(bad) << "{\"schema\": \"wavelab.selection\", \"model\": ";
    wl::test::CliResult r = runCli("export --result " + bad.string() + " --format vllm");
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.out.find(bad.string()), std::string::npos) << r.out;
    EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << r.out;
    r = runCli("select --model " + kModel + " --m 9 --out " + (kWork / "x.json").string());
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.out.find("--m"), std::string::npos) << r.out;
    r = runCli("select --model " + kModel + " --method magic --out " + (kWork / "x.json").string());
    EXPECT_EQ(r.code, 1);
    EXPECT_NE(r.out.find("magic"), std::string::npos) << r.out;
    if (fs::exists(kModel)) {
        selectResult();
        r = runCli("export --result " + resultPath().string() + " --format onnx");
        EXPECT_EQ(r.code, 1);
        EXPECT_NE(r.out.find("onnx"), std::string::npos);
    }
}
