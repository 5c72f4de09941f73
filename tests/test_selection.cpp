// selection: ELSI beam search vs exhaustive search, ELSI-C on block-structured data with
// known boundaries, EAGLE baselines, JSON of results and reports.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <set>

#include "analysis/layer_analyzer.h"
#include "selection/baselines.h"
#include "selection/elsi.h"
#include "selection/selection_json.h"
#include "selection/selection_report.h"
#include "util/atomic_file.h"
#include "util/error.h"

namespace fs = std::filesystem;

namespace {

// L states in blocks: every state of a block is the block's base signal plus small noise,
// bases of different blocks independent. block_of[h] gives the block.
std::vector<wl::CapturedPrompt> blockPrompts(const std::vector<int>& block_of, int64_t d, int prompts, int64_t tokens,
                                             uint64_t seed, float noise = 0.05f) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> g(0.0f, 1.0f);
    const int L = static_cast<int>(block_of.size());
    const int blocks = *std::max_element(block_of.begin(), block_of.end()) + 1;
    std::vector<wl::CapturedPrompt> out;
    for (int p = 0; p < prompts; ++p) {
        wl::CapturedPrompt c;
        c.prompt_index = p;
        c.num_states = L;
        c.num_tokens = tokens;
        c.hidden_size = d;
        c.token_ids.assign(tokens, 0);
        c.token_entropy.assign(tokens, 1.0f);
        std::vector<float> base(static_cast<size_t>(blocks * tokens * d));
        for (auto& x : base) x = g(rng);
        c.states.resize(static_cast<size_t>(L * tokens * d));
        for (int h = 0; h < L; ++h)
            for (int64_t i = 0; i < tokens * d; ++i)
                c.states[h * tokens * d + i] = base[block_of[h] * tokens * d + i] + noise * (h + 1) * g(rng);
        out.push_back(std::move(c));
    }
    return out;
}

std::unique_ptr<wl::LayerAnalyzer> analyse(const std::vector<wl::CapturedPrompt>& ps, int64_t batch = 64) {
    wl::AnalysisOptions o;
    o.filter.mode = wl::TokenFilterMode::None;
    o.filter.drop_bos = false;
    o.cka_batch_tokens = batch;
    auto an = std::make_unique<wl::LayerAnalyzer>(o);
    for (const auto& p : ps) an->add(p);
    an->finish();
    return an;
}

}  // namespace

TEST(Baselines, Eagle3AndEagle2InHfIndices) {
    EXPECT_EQ(wl::eagle3DefaultStates(36), (std::vector<int>{2, 18, 33}));
    EXPECT_EQ(wl::eagle2DefaultStates(36), (std::vector<int>{36}));
    EXPECT_EQ(wl::eagle3DefaultStates(32), (std::vector<int>{2, 16, 29}));
    std::vector<std::string> warnings;
    EXPECT_EQ(wl::eagle3DefaultStates(5, &warnings), (std::vector<int>{2}));
    EXPECT_EQ(warnings.size(), 1u);
    // Layer-output ids (SGLang/TRT-LLM/ModelOpt default [1, N//2-1, N-4]) map to the same states.
    const int n = 36;
    std::vector<int> output_ids = {1, n / 2 - 1, n - 4};
    std::vector<int> states;
    for (int k : output_ids) states.push_back(wl::hfStateFromOutputId(k));
    EXPECT_EQ(states, wl::eagle3DefaultStates(n));
}

TEST(Elsi, WideBeamEqualsExhaustiveSearch) {
    std::vector<int> blocks = {0, 1, 2, 3, 4, 5, 6};  // 7 distinct-ish states
    auto ps = blockPrompts(blocks, 6, 3, 10, 77, 0.0f);
    // Mix states so set entropies are not all equal.
    for (auto& p : ps)
        for (int h = 1; h < 7; ++h)
            for (int64_t i = 0; i < 60; ++i) p.states[h * 60 + i] += 0.5f * h * p.states[(h - 1) * 60 + i];
    auto an = analyse(ps);
    auto model = an->setEntropyModel();
    auto snap = an->snapshot(true);
    for (auto obj : {wl::SetObjective::Concat, wl::SetObjective::Hadamard})
        for (int m = 1; m <= 4; ++m) {
            wl::SelectionOptions o;
            o.m = m;
            o.beam_width = 20;  // >= C(6, k) for every k: the beam keeps every set
            o.objective = obj;
            wl::SetEntropyFn fn = [&](const std::vector<int>& s) { return model->entropy(s, obj); };
            int steps = 0;
            auto r = wl::selectLayers(fn, 7, snap.cka, o, [&](const wl::BeamStep& st) {
                EXPECT_EQ(st.step, ++steps);
                EXPECT_LE(st.kept.size(), 20u);
                for (size_t i = 1; i < st.candidates.size(); ++i) EXPECT_GE(st.candidates[i - 1].score, st.candidates[i].score);
            });
            EXPECT_EQ(steps, m);
            auto all = wl::exhaustiveSearch(fn, 7, snap.cka, o);
            ASSERT_FALSE(all.empty());
            EXPECT_EQ(r.chosen.states, all.front().states) << "m=" << m;
            EXPECT_NEAR(r.chosen.entropy, all.front().entropy, 1e-12);
            EXPECT_EQ(all.size(), static_cast<size_t>(m == 1 ? 6 : m == 2 ? 15 : m == 3 ? 20 : 15));
            for (int h : r.chosen.states) EXPECT_NE(h, 0) << "embedding excluded by default";
            EXPECT_EQ(r.trace.size(), static_cast<size_t>(m));
            ASSERT_EQ(r.baselines.size(), 2u);
            EXPECT_EQ(r.baselines[0].name, "EAGLE2");
            EXPECT_EQ(r.baselines[0].set.states, (std::vector<int>{6}));
            EXPECT_NEAR(r.baselines[0].set.entropy, fn({6}), 1e-12);
        }
}

TEST(ElsiC, SegmentsFromKnownBlocksAndOnePerSegment) {
    // Blocks by construction: states 0-2 | 3-6 | 7-9 -> boundaries at 3 and 7.
    std::vector<int> blocks = {0, 0, 0, 1, 1, 1, 1, 2, 2, 2};
    auto ps = blockPrompts(blocks, 8, 4, 32, 99);
    auto an = analyse(ps);
    auto snap = an->snapshot(true);
    EXPECT_EQ(snap.boundaries, (std::vector<int>{3, 7}));
    auto model = an->setEntropyModel();
    wl::SetEntropyFn fn = [&](const std::vector<int>& s) { return model->entropy(s, wl::SetObjective::Concat); };
    wl::SelectionOptions o;
    o.method = wl::SelectionMethod::ElsiC;
    o.diversity = wl::DiversityRule::OnePerSegment;
    o.m = 3;
    o.beam_width = 4;
    auto r = wl::selectLayers(fn, 10, snap.cka, o);
    ASSERT_EQ(r.chosen.states.size(), 3u);
    std::set<int> used;
    for (int h : r.chosen.states) used.insert(blocks[h]);
    EXPECT_EQ(used.size(), 3u) << "one state per segment";
    EXPECT_EQ(r.boundaries, (std::vector<int>{3, 7}));
    // A wide beam equals exhaustive search under the same rule.
    o.beam_width = 200;
    auto wide = wl::selectLayers(fn, 10, snap.cka, o);
    auto all = wl::exhaustiveSearch(fn, 10, snap.cka, o);
    EXPECT_EQ(wide.chosen.states, all.front().states);
    for (const auto& s : all) {
        std::set<int> u;
        for (int h : s.states) u.insert(blocks[h]);
        EXPECT_EQ(u.size(), 3u);
    }
    // m larger than the segment count, automatic threshold: one more cut at the largest
    // remaining adjacent drop, still one state per segment.
    o.m = 4;
    auto more = wl::selectLayers(fn, 10, snap.cka, o);
    EXPECT_EQ(more.boundaries.size(), 3u);
    EXPECT_EQ(more.segments.size(), 4u);
    ASSERT_EQ(more.chosen.states.size(), 4u);
    std::set<int> segs;
    for (int h : more.chosen.states)
        for (size_t k = 0; k < more.segments.size(); ++k)
            if (h >= more.segments[k].first && h <= more.segments[k].last) segs.insert(static_cast<int>(k));
    EXPECT_EQ(segs.size(), 4u);
    EXPECT_FALSE(more.warnings.empty());
    // Explicit threshold: the boundaries stay, the per-segment cap is relaxed with a warning.
    o.boundaries.threshold = 0.6;
    auto relaxed = wl::selectLayers(fn, 10, snap.cka, o);
    EXPECT_EQ(relaxed.boundaries, (std::vector<int>{3, 7}));
    EXPECT_EQ(relaxed.chosen.states.size(), 4u);
    ASSERT_FALSE(relaxed.warnings.empty());
    EXPECT_NE(relaxed.warnings.front().find("allowing up to 2"), std::string::npos);
}

TEST(ElsiC, CkaPenaltyScoreAndPreferenceForDiverseStates) {
    std::vector<int> blocks = {0, 0, 0, 1, 1, 1, 1, 2, 2, 2};
    auto ps = blockPrompts(blocks, 8, 4, 32, 5);
    auto an = analyse(ps);
    auto snap = an->snapshot(true);
    auto model = an->setEntropyModel();
    wl::SetEntropyFn fn = [&](const std::vector<int>& s) { return model->entropy(s, wl::SetObjective::Concat); };
    wl::SelectionOptions o;
    o.method = wl::SelectionMethod::ElsiC;
    o.diversity = wl::DiversityRule::CkaPenalty;
    o.penalty_lambda = 1.0;
    o.m = 2;
    o.beam_width = 100;
    auto r = wl::selectLayers(fn, 10, snap.cka, o);
    const auto& s = r.chosen.states;
    EXPECT_NEAR(r.chosen.score, r.chosen.entropy - 1.0 * snap.cka[s[0] * 10 + s[1]], 1e-12);
    EXPECT_NE(blocks[s[0]], blocks[s[1]]);
    auto all = wl::exhaustiveSearch(fn, 10, snap.cka, o);
    EXPECT_EQ(all.front().states, s);
}

TEST(Elsi, ImpossibleOptionsAreClearErrors) {
    wl::SetEntropyFn fn = [](const std::vector<int>& s) { return double(s.size()); };
    wl::SelectionOptions o;
    o.m = 9;
    EXPECT_THROW(wl::selectLayers(fn, 12, {}, o), wl::Error);
    o.m = 5;
    EXPECT_THROW(wl::selectLayers(fn, 4, {}, o), wl::Error);  // 3 candidates
    o.m = 2;
    o.method = wl::SelectionMethod::ElsiC;
    EXPECT_THROW(wl::selectLayers(fn, 6, {}, o), wl::Error);  // no CKA
    o.method = wl::SelectionMethod::Elsi;
    o.candidates = {1, 9};
    EXPECT_THROW(wl::selectLayers(fn, 6, {}, o), wl::Error);
    wl::CancelToken cancel;
    cancel.cancel();
    o.candidates.clear();
    EXPECT_THROW(wl::selectLayers(fn, 6, {}, o, {}, &cancel), wl::Cancelled);
}

TEST(SelectionReport, JsonRoundTripAndMalformedInput) {
    std::vector<int> blocks = {0, 0, 1, 1, 2, 2};
    auto ps = blockPrompts(blocks, 4, 2, 16, 3);
    auto an = analyse(ps, 8);
    wl::SelectionOptions o;
    o.m = 2;
    wl::SelectionReport rep;
    rep.model.name = "toy";
    rep.model.num_layers = 5;
    rep.model.hidden_size = 4;
    rep.analysis_options = an->options();
    rep.analysis = an->snapshot(true);
    rep.selection = wl::selectLayers(*an, o);
    const fs::path dir = fs::path(WAVELAB_TEST_WORK_DIR) / "selection";
    fs::create_directories(dir);
    const std::string path = (dir / "result.json").string();
    wl::saveSelectionReport(rep, path);
    auto back = wl::loadSelectionReport(path);
    EXPECT_EQ(back.selection.chosen.states, rep.selection.chosen.states);
    EXPECT_EQ(back.selection.trace.size(), rep.selection.trace.size());
    EXPECT_EQ(back.selection.baselines.size(), 2u);
    EXPECT_EQ(back.analysis.cka.size(), 36u);
    EXPECT_EQ(back.model.num_layers, 5);

    wl::writeFileAtomic((dir / "bad.json").string(), "{\"schema\": \"wavelab.selection\", ");
    try {
        wl::loadSelectionReport((dir / "bad.json").string());
        FAIL();
    } catch (const wl::Error& e) {
        EXPECT_NE(std::string(e.what()).find("bad.json"), std::string::npos);
    }
    auto j = wl::toJson(rep);
    j["selection"]["chosen"]["states"] = {1, 17};
    EXPECT_THROW(wl::selectionReportFromJson(j, "x.json"), wl::Error);
    j = wl::toJson(rep);
    j["selection"]["options"]["method"] = "magic";
    EXPECT_THROW(wl::selectionReportFromJson(j, "x.json"), wl::Error);
    j = wl::toJson(rep);
    j["schema_version"] = 99;
    EXPECT_THROW(wl::selectionReportFromJson(j, "x.json"), wl::Error);
}
