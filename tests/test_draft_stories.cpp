// Draft training and speculative decoding on the real stories260K model (llama2.c, 5 layers):
// speculative output equals the loader's own greedy decoding token for token, and a briefly
// trained draft is accepted more than once per round.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>

#include "data/calibration_set.h"
#include "draft/draft_io.h"
#include "draft/draft_trainer.h"
#include "draft/eval_task.h"
#include "draft/prompt_tokens.h"
#include "draft/speculative_decoding.h"
#include "model/causal_lm.h"
#include "tokenizer/tokenizer.h"

namespace fs = std::filesystem;

namespace {
const std::string kModel = std::string(WAVELAB_MODELS_DIR) + "/stories260K/stories260K.bin";

struct Stories {
    std::unique_ptr<wl::CausalLM> model;
    std::vector<std::vector<int64_t>> prompts;
};

Stories& stories() {
    static Stories s = [] {
        Stories st;
        wl::LoadOptions lo;
        lo.device = "cpu";
        st.model = wl::CausalLM::load(kModel, lo);
        at::set_num_threads(1);   // tiny model: threads only add overhead
        auto tok = wl::findTokenizerForModel(kModel, st.model->config().vocab_size);
        wl::PromptTokenOptions po;
        po.max_tokens = 24;
        st.prompts = wl::tokenizePrompts(*tok, wl::loadCalibrationSet(wl::defaultCalibrationPath()), po);
        return st;
    }();
    return s;
}
}  // namespace

TEST(DraftStories, TrainedDraftIsLosslessAndAccepted) {
    if (!fs::exists(kModel)) GTEST_SKIP() << "stories260K not found at " << kModel;
    auto& s = stories();
    const auto dir = (fs::path(WAVELAB_TEST_WORK_DIR) / "draft_stories" / "d").string();
    fs::remove_all(dir);
    wl::DraftTrainOptions o;
    o.out_dir = dir;
    o.layers = {1, 3, 4};
    o.steps = 40;
    o.batch_size = 4;
    o.ttt_steps = 3;
    o.learning_rate = 1e-2;
    o.max_new_tokens = 32;
    o.checkpoint_every = 0;
    std::vector<std::vector<int64_t>> train(s.prompts.begin(), s.prompts.begin() + 32);
    auto r = wl::trainDraft(*s.model, train, o);
    EXPECT_EQ(r.steps, 40);
    EXPECT_GT(r.final_step_accuracy[0], 0.2);

    auto draft = wl::loadDraft(dir, wl::targetEmbeddings(*s.model));
    EXPECT_EQ(draft->config().aux_layers, (std::vector<int64_t>{1, 3, 4}));
    std::vector<std::vector<int64_t>> held_out(s.prompts.begin() + 64, s.prompts.begin() + 70);
    int64_t rounds = 0, round_tokens = 0, tree_rounds = 0, tree_tokens = 0;
    for (const auto& p : held_out) {
        // The loader's own greedy decoding (max_total_tokens counts the prompt).
        const auto reference = s.model->generateGreedy(p, static_cast<int64_t>(p.size()) + 40, true, {});
        for (int64_t k : {1, 4}) {
            auto spec = wl::speculativeGenerate(*s.model, draft, p, k, 40, true);
            EXPECT_EQ(spec.tokens, reference) << "k=" << k;
            if (k == 4) rounds += spec.stats.rounds, round_tokens += spec.stats.round_tokens;
        }
        auto tree = wl::speculativeGenerateTree(*s.model, draft, p, 4, 4, 40, true);
        EXPECT_EQ(tree.tokens, reference) << "tree depth 4 top-4";
        tree_rounds += tree.stats.rounds, tree_tokens += tree.stats.round_tokens;
    }
    const double tau = double(round_tokens) / double(rounds);
    const double tree_tau = double(tree_tokens) / double(tree_rounds);
    std::printf("stories260K, 40 steps: tau(k=4) = %.3f over %lld rounds; tree depth 4 top-4 tau = %.3f\n", tau,
                (long long)rounds, tree_tau);
    EXPECT_GT(tau, 1.2);
    EXPECT_GT(tree_tau, 1.2);
}
