#pragma once
// The torch-level trainer behind runDraftTraining: takes an already loaded target and
// tokenised prompts (tests use a small fake target). Includes torch.
#include <vector>

#include "draft/eagle3_draft.h"
#include "draft/training_task.h"

namespace wl {

class CausalLM;

// Trains a draft for `target` on `prompts` (token ids, BOS included if wanted) and writes
// it to options.out_dir. Model/tokenizer/data paths in `options` are only recorded.
DraftTrainResult trainDraft(CausalLM& target, const std::vector<std::vector<int64_t>>& prompts,
                            const DraftTrainOptions& options, CancelToken* cancel = nullptr,
                            const DraftTrainProgressFn& progress = {});

// The target's token embeddings [vocab, d] and LM head [vocab, d] (float32), read through
// CausalLM::embed / lmHead so any loader works.
torch::Tensor targetEmbeddings(CausalLM& target);
torch::Tensor targetLmHead(CausalLM& target);

// A fresh draft for `target`: embeddings copied (frozen), optionally lm_head from the target.
Eagle3Draft makeDraft(CausalLM& target, const DraftConfig& config, const DraftVocab& vocab,
                      bool init_lm_head_from_target);

// The target's next-token distribution restricted to the draft vocabulary (renormalised)
// [..., Vd], and whether the target's argmax token is in the draft vocabulary [...].
std::pair<torch::Tensor, torch::Tensor> targetDistribution(Eagle3Draft& draft, const torch::Tensor& target_logits);

// One TTT loss evaluation (exposed for tests): aux [B,T,m*d], ids [B,T], lengths [B],
// target_p [B,T,Vd] and in_vocab [B,T] from targetDistribution. Returns the weighted loss,
// per-step losses and accuracies.
struct TTTLoss {
    torch::Tensor loss;
    std::vector<double> step_loss, step_accuracy;
    int64_t positions = 0;   // positions contributing at step 0
};
TTTLoss computeTTTLoss(Eagle3Draft& draft, const torch::Tensor& aux, const torch::Tensor& ids,
                       const torch::Tensor& lengths, const torch::Tensor& target_p, const torch::Tensor& in_vocab,
                       int64_t ttt_steps, double step_weight_decay);

}  // namespace wl
