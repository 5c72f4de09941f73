// export: every framework format maps back to the same HF hidden states; conventions,
// warnings and CSV tables.
#include <gtest/gtest.h>

#include <sstream>

#include "export/framework_export.h"
#include "selection/baselines.h"
#include "util/error.h"

namespace {

wl::SelectionReport toyReport(std::vector<int> chosen, int64_t num_layers = 36) {
    wl::SelectionReport r;
    r.model.name = "toy-36";
    r.model.path = "/models/toy";
    r.model.num_layers = num_layers;
    r.model.hidden_size = 8;
    r.selection.num_states = num_layers + 1;
    r.selection.chosen.states = std::move(chosen);
    r.selection.chosen.entropy = 1.5;
    r.analysis.num_states = num_layers + 1;
    const int64_t L = num_layers + 1;
    r.analysis.entropy_filtered.assign(L, 0.5);
    r.analysis.cka.assign(L * L, 0.25);
    for (int64_t i = 0; i < L; ++i) r.analysis.cka[i * L + i] = 1.0;
    r.analysis.segments = {{0, 9}, {10, static_cast<int>(L - 1)}};
    return r;
}

const std::vector<wl::ExportFormat> kFrameworks = {wl::ExportFormat::Vllm, wl::ExportFormat::Sglang,
                                                   wl::ExportFormat::SpecForge, wl::ExportFormat::TrtLlm,
                                                   wl::ExportFormat::ModelOpt};

}  // namespace

TEST(Export, EveryFrameworkRoundTripsToTheSameHfStates) {
    auto rep = toyReport({3, 17, 34});
    for (auto f : kFrameworks) {
        auto out = wl::exportSelection(rep, f);
        auto j = nlohmann::json::parse(out.text);
        EXPECT_EQ(wl::statesFromExportJson(j, f), rep.selection.chosen.states) << wl::toString(f);
        EXPECT_EQ(j["wavelab"]["num_layers"], 36);
        EXPECT_EQ(j["wavelab"]["target_model"], "toy-36");
        EXPECT_FALSE(j["wavelab"]["convention"].get<std::string>().empty());
        EXPECT_TRUE(out.warnings.empty()) << wl::toString(f);
    }
}

TEST(Export, KeysAndIdConventionsPerFramework) {
    auto rep = toyReport({2, 18, 33});  // the EAGLE3 default in HF indices for N = 36
    auto j = nlohmann::json::parse(wl::exportSelection(rep, wl::ExportFormat::Vllm).text);
    EXPECT_EQ(j["eagle_aux_hidden_state_layer_ids"], (std::vector<int>{2, 18, 33}));
    // Layer-output conventions give the documented defaults [1, N//2-1, N-4].
    j = nlohmann::json::parse(wl::exportSelection(rep, wl::ExportFormat::Sglang).text);
    EXPECT_EQ(j["eagle_config"]["eagle_aux_hidden_state_layer_ids"], (std::vector<int>{1, 17, 32}));
    j = nlohmann::json::parse(wl::exportSelection(rep, wl::ExportFormat::SpecForge).text);
    EXPECT_EQ(j["eagle_config"]["eagle_aux_hidden_state_layer_ids"], (std::vector<int>{1, 17, 32}));
    j = nlohmann::json::parse(wl::exportSelection(rep, wl::ExportFormat::TrtLlm).text);
    EXPECT_EQ(j["eagle3_layers_to_capture"], (std::vector<int>{1, 17, 32}));
    j = nlohmann::json::parse(wl::exportSelection(rep, wl::ExportFormat::ModelOpt).text);
    EXPECT_EQ(j["eagle_architecture_config"]["eagle_aux_hidden_state_layer_ids"], (std::vector<int>{1, 17, 32}));
}

TEST(Export, WarnsWhenAFrameworkNeedsThreeStatesAndRejectsEmbeddingsInOutputIds) {
    auto rep = toyReport({5, 20});
    for (auto f : {wl::ExportFormat::Vllm, wl::ExportFormat::Sglang, wl::ExportFormat::SpecForge, wl::ExportFormat::TrtLlm}) {
        auto out = wl::exportSelection(rep, f);
        ASSERT_EQ(out.warnings.size(), 1u) << wl::toString(f);
        auto j = nlohmann::json::parse(out.text);
        EXPECT_EQ(j["wavelab"]["warnings"].size(), 1u);
    }
    EXPECT_TRUE(wl::exportSelection(rep, wl::ExportFormat::ModelOpt).warnings.empty());
    auto with_embedding = toyReport({0, 5, 20});
    EXPECT_NO_THROW(wl::exportSelection(with_embedding, wl::ExportFormat::Vllm));
    EXPECT_THROW(wl::exportSelection(with_embedding, wl::ExportFormat::Sglang), wl::Error);
}

TEST(Export, CsvCurveAndCka) {
    auto rep = toyReport({3, 17, 34}, 4);
    auto curve = wl::exportSelection(rep, wl::ExportFormat::CsvCurve).text;
    std::istringstream in(curve);
    std::string line;
    int rows = 0;
    std::getline(in, line);
    EXPECT_EQ(line.rfind("state,layer_output_of,entropy_filtered", 0), 0u);
    while (std::getline(in, line)) ++rows;
    EXPECT_EQ(rows, 5);
    EXPECT_NE(curve.find("\n3,2,0.5,"), std::string::npos);
    auto cka = wl::exportSelection(rep, wl::ExportFormat::CsvCka).text;
    EXPECT_EQ(cka.rfind("state,0,1,2,3,4\n0,1,0.25,", 0), 0u);
    rep.analysis.cka.clear();
    EXPECT_THROW(wl::exportSelection(rep, wl::ExportFormat::CsvCka), wl::Error);
}

TEST(Export, FormatNamesParse) {
    for (auto f : kFrameworks) EXPECT_EQ(wl::parseExportFormat(wl::toString(f)), f);
    EXPECT_EQ(wl::parseExportFormat("csv-cka"), wl::ExportFormat::CsvCka);
    EXPECT_THROW(wl::parseExportFormat("onnx", "--format"), wl::Error);
}
