// Draft training (TTT, checkpoint/resume) and speculative decoding (lossless, tau) on a
// small fake target, so these run in seconds without the real loaders.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdio>
#include <filesystem>
#include <random>

#include "draft/draft_io.h"
#include "draft/draft_trainer.h"
#include "draft/eval_task.h"
#include "draft/speculative_decoding.h"
#include "test_draft_fake_target.h"
#include "util/error.h"

namespace fs = std::filesystem;
using wl::testing::FakeTarget;

namespace {
std::string workDir(const std::string& name) {
    auto dir = fs::path(WAVELAB_TEST_WORK_DIR) / "draft_training" / name;
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir.string();
}

std::vector<std::vector<int64_t>> prompts(int64_t n, int64_t len, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<std::vector<int64_t>> out;
    for (int64_t i = 0; i < n; ++i) {
        std::vector<int64_t> p{1};
        for (int64_t t = 1; t < len; ++t) p.push_back(static_cast<int64_t>(2 + rng() % 38));
        out.push_back(p);
    }
    return out;
}

wl::DraftTrainOptions smallRun(const std::string& out, int64_t steps) {
    wl::DraftTrainOptions o;
    o.out_dir = out;
    o.layers = {1, 2, 3};
    o.steps = steps;
    o.batch_size = 4;
    o.ttt_steps = 3;
    o.max_new_tokens = 24;
    o.learning_rate = 1e-2;
    o.checkpoint_every = 2;
    o.threads = 1;
    o.seed = 5;
    return o;
}
// A randomly initialised draft on hidden states 1 and 3 with a 30-token draft vocabulary.
wl::Eagle3Draft untrainedDraft(FakeTarget& target, uint64_t seed) {
    torch::manual_seed(seed);
    std::vector<int64_t> counts(40, 1);
    auto config = wl::draftConfigForTarget(target.config(), {1, 3}, 30);
    return wl::makeDraft(target, config, wl::buildDraftVocab(counts, 30), true);
}
}  // namespace

TEST(SpeculativeDecoding, IsLosslessForAnyDraft) {
    FakeTarget target;
    auto draft = untrainedDraft(target, 11);
    for (const auto& p : prompts(4, 6, 1)) {
        auto plain = wl::decodeWithTarget(target, p, 30);
        // Independent of the KV cache: the fake target's own full-prefix greedy loop.
        EXPECT_EQ(plain, target.generateGreedy(p, static_cast<int64_t>(p.size()) + 30, true, {}));
        for (int64_t k : {0, 1, 3, 6}) {
            auto spec = wl::speculativeGenerate(target, draft, p, k, 30);
            EXPECT_EQ(spec.tokens, plain) << "k=" << k;
            // Every committed token after the prefill one comes from a verify round.
            EXPECT_EQ(spec.stats.round_tokens, static_cast<int64_t>(spec.tokens.size()) - 1);
            EXPECT_GE(spec.stats.tau(), 1.0);
            EXPECT_LE(spec.stats.tau(), k + 1.0);
            for (size_t j = 1; j < spec.stats.accepted_at.size(); ++j)
                EXPECT_LE(spec.stats.accepted_at[j], spec.stats.accepted_at[j - 1]);
        }
    }
}

// Tree drafting: lossless for any draft and any tree shape; with top_k = 1 the tree is the
// chain, so it must reproduce chain drafting's tokens and statistics exactly.
TEST(SpeculativeDecoding, TreeIsLosslessAndTopOneIsTheChain) {
    FakeTarget target;
    auto draft = untrainedDraft(target, 12);
    for (const auto& p : prompts(3, 6, 4)) {
        const auto plain = wl::decodeWithTarget(target, p, 30);
        for (int64_t depth : {1, 3, 5}) {
            const auto chain = wl::speculativeGenerate(target, draft, p, depth, 30);
            const auto top1 = wl::speculativeGenerateTree(target, draft, p, depth, 1, 30);
            EXPECT_EQ(top1.tokens, chain.tokens) << "depth " << depth;
            EXPECT_EQ(top1.stats.rounds, chain.stats.rounds);
            EXPECT_EQ(top1.stats.round_tokens, chain.stats.round_tokens);
            EXPECT_EQ(top1.stats.accepted_at, chain.stats.accepted_at);
            EXPECT_EQ(top1.stats.verify_tokens, chain.stats.verify_tokens);
            for (int64_t top_k : {2, 4}) {
                const auto tree = wl::speculativeGenerateTree(target, draft, p, depth, top_k, 30);
                EXPECT_EQ(tree.tokens, plain) << "depth " << depth << " top_k " << top_k;
                EXPECT_EQ(tree.stats.round_tokens, static_cast<int64_t>(tree.tokens.size()) - 1);
                EXPECT_GE(tree.stats.tau(), 1.0);
                EXPECT_LE(tree.stats.tau(), depth + 1.0);
                EXPECT_LE(tree.stats.verify_tokens, tree.stats.rounds * (top_k * depth + 1));
                EXPECT_GT(tree.stats.verify_tokens, tree.stats.rounds * (depth + 1) - 1);   // wider than a chain
                for (size_t j = 1; j < tree.stats.accepted_at.size(); ++j)
                    EXPECT_LE(tree.stats.accepted_at[j], tree.stats.accepted_at[j - 1]);
            }
        }
    }
    EXPECT_THROW(wl::speculativeGenerateTree(target, draft, {1, 2}, 3, 0, 10), wl::Error);
}

TEST(DraftTraining, LearnsTheTargetAndSpeedsUpVerification) {
    FakeTarget target;
    const auto dir = workDir("learn");
    auto o = smallRun(dir, 120);
    o.checkpoint_every = 0;
    o.ttt_steps = 4;
    std::vector<double> losses;
    auto result = wl::trainDraft(target, prompts(16, 6, 2), o, nullptr, [&](const wl::DraftTrainProgress& p) {
        if (p.phase == "training") {
            losses.push_back(p.loss);
            EXPECT_EQ(p.step_loss.size(), 4u);
            EXPECT_GT(p.tokens_per_second, 0.0);
        }
    });
    ASSERT_EQ(losses.size(), 120u);
    double first = 0, last = 0;
    for (int i = 0; i < 10; ++i) first += losses[i] / 10, last += losses[losses.size() - 1 - i] / 10;
    EXPECT_LT(last, 0.5 * first) << "first " << first << " last " << last;
    EXPECT_GT(result.final_step_accuracy[0], 0.5);
    EXPECT_TRUE(fs::exists(fs::path(dir) / "config.json"));
    EXPECT_TRUE(fs::exists(fs::path(dir) / "model.safetensors"));

    auto draft = wl::loadDraft(dir, wl::targetEmbeddings(target));
    auto eval = wl::evaluateDraft(target, draft, prompts(6, 6, 2), 4, 24, true);
    EXPECT_EQ(eval.lossless_mismatches, 0);
    EXPECT_GT(eval.tau, 1.5) << "acceptance[0] " << eval.acceptance[0];
    ASSERT_EQ(eval.acceptance.size(), 4u);
    EXPECT_NEAR(eval.tau, 1.0 + eval.acceptance[0] + eval.acceptance[1] + eval.acceptance[2] + eval.acceptance[3], 0.2);
    // A tree of the same depth verifies more candidates per round and stays lossless.
    auto tree = wl::evaluateDraft(target, draft, prompts(6, 6, 2), 4, 24, true, true, nullptr, {}, 3);
    EXPECT_EQ(tree.lossless_mismatches, 0);
    EXPECT_EQ(tree.tree_top_k, 3);
    EXPECT_GT(tree.tau, 1.5);
    EXPECT_GT(tree.verify_tokens_per_round, eval.verify_tokens_per_round);
    std::printf("fake target, depth 4: tau chain %.3f, tree top-3 %.3f\n", eval.tau, tree.tau);
}

TEST(DraftTraining, CancelAndResumeEqualsOneRun) {
    FakeTarget target;
    auto data = prompts(6, 5, 3);
    const auto once = workDir("once");
    auto full = wl::trainDraft(target, data, smallRun(once, 8));

    const auto split = workDir("split");
    wl::CancelToken cancel;
    EXPECT_THROW(wl::trainDraft(target, data, smallRun(split, 8), &cancel,
                                [&](const wl::DraftTrainProgress& p) {
                                    if (p.phase == "training" && p.step == 5) cancel.cancel();
                                }),
                 wl::Cancelled);
    EXPECT_TRUE(fs::exists(fs::path(split) / "checkpoint" / "train_state.pt"));
    EXPECT_FALSE(fs::exists(fs::path(split) / "model.safetensors"));
    auto o = smallRun(split, 8);
    o.resume = true;
    auto resumed = wl::trainDraft(target, data, o);
    EXPECT_EQ(resumed.start_step, 5);
    EXPECT_EQ(resumed.steps, 8);
    EXPECT_DOUBLE_EQ(resumed.final_loss, full.final_loss);
    auto emb = wl::targetEmbeddings(target);
    auto a = wl::loadDraft(once, emb), b = wl::loadDraft(split, emb);
    for (const auto& item : a->named_parameters())
        EXPECT_TRUE(torch::equal(item.value(), b->named_parameters()[item.key()])) << item.key();

    // A crash (an exception that is not a cancel) loses at most one checkpoint interval:
    // the step-4 checkpoint survives and resuming from it gives the same result.
    const auto crash = workDir("crash");
    EXPECT_THROW(wl::trainDraft(target, data, smallRun(crash, 8), nullptr,
                                [&](const wl::DraftTrainProgress& p) {
                                    if (p.phase == "training" && p.step == 5) throw std::runtime_error("simulated crash");
                                }),
                 std::runtime_error);
    auto o2 = smallRun(crash, 8);
    o2.resume = true;
    auto after_crash = wl::trainDraft(target, data, o2);
    EXPECT_EQ(after_crash.start_step, 4);
    EXPECT_DOUBLE_EQ(after_crash.final_loss, full.final_loss);
    auto c = wl::loadDraft(crash, emb);
    for (const auto& item : a->named_parameters())
        EXPECT_TRUE(torch::equal(item.value(), c->named_parameters()[item.key()])) << item.key();
}

TEST(DraftTraining, DiskCacheGivesTheSameResult) {
    FakeTarget target;
    auto data = prompts(5, 5, 4);
    auto plain = wl::trainDraft(target, data, smallRun(workDir("nocache"), 6));
    const auto cache = workDir("cache");
    auto o = smallRun(workDir("withcache"), 6);
    o.cache_dir = cache;
    auto first = wl::trainDraft(target, data, o);    // fills the cache
    int64_t files = 0;
    for (const auto& e : fs::directory_iterator(cache)) files += e.path().extension() == ".pt" ? 1 : 0;
    EXPECT_EQ(files, 5);
    o.out_dir = workDir("withcache2");
    auto second = wl::trainDraft(target, data, o);   // reads it back
    EXPECT_NEAR(first.final_loss, plain.final_loss, 1e-5);
    EXPECT_NEAR(second.final_loss, plain.final_loss, 1e-5);
    // 5 sequences of 29 tokens, 3 aux states of 32, draft vocab 40: (96 + 40) * 4 bytes each.
    EXPECT_EQ(wl::estimateDraftCacheBytes(5, 29, 32, 3, 40), 5 * 29 * (96 + 40) * 4);
    // A cache from another run (different layers) is rejected, not silently used.
    o.layers = {1, 2};
    o.out_dir = workDir("withcache3");
    EXPECT_THROW(wl::trainDraft(target, data, o), wl::Error);
}
