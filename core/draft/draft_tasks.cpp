// runDraftTraining / runDraftEval: the file-level entry points (load target, tokenizer and
// prompts, then call the torch-level trainer / evaluator).
#include "draft/training_task.h"

#include "data/calibration_set.h"
#include "draft/draft_io.h"
#include "draft/draft_trainer.h"
#include "draft/eval_task.h"
#include "draft/prompt_tokens.h"
#include "draft/speculative_decoding.h"
#include "model/causal_lm.h"
#include "tokenizer/tokenizer.h"
#include "util/error.h"

namespace wl {

namespace {

// What training and evaluation both need: the target, and the data set's prompts tokenised
// with the target's tokenizer.
std::unique_ptr<CausalLM> loadTarget(const std::string& model_path, const std::string& device, int64_t threads) {
    LoadOptions lo;
    lo.device = device;
    lo.threads = static_cast<int>(threads);
    return CausalLM::load(model_path, lo);
}

std::string dataPathOrDefault(const std::string& data_path) {
    return data_path.empty() ? defaultCalibrationPath() : data_path;
}

std::vector<std::vector<int64_t>> targetPrompts(const CausalLM& target, const std::string& model_path,
                                                const std::string& tokenizer_path, const std::string& data_path,
                                                const PromptTokenOptions& options) {
    auto tokenizer = findTokenizerForModel(model_path, target.config().vocab_size, tokenizer_path);
    return tokenizePrompts(*tokenizer, loadCalibrationSet(data_path), options);
}

}  // namespace

DraftTrainResult runDraftTraining(const DraftTrainOptions& options, CancelToken* cancel, const DraftTrainProgressFn& progress) {
    if (options.model_path.empty()) throw Error("--model", "is required");
    if (options.layers.empty()) throw Error("--layers", "is required (HF hidden_states indices, e.g. 1,3,4)");
    auto target = loadTarget(options.model_path, options.device, options.threads);
    const std::string data_path = dataPathOrDefault(options.data_path);
    PromptTokenOptions po;
    po.max_prompts = options.max_prompts;
    po.max_tokens = options.max_prompt_tokens;
    po.add_bos = options.add_bos;
    po.chat_template = options.chat_template;
    auto prompts = targetPrompts(*target, options.model_path, options.tokenizer_path, data_path, po);
    DraftTrainOptions o = options;
    o.data_path = data_path;
    return trainDraft(*target, prompts, o, cancel, progress);
}

ModelConfig readTargetConfig(const std::string& model_path) { return CausalLM::readConfig(model_path); }

int64_t estimateDraftCacheBytes(const DraftTrainOptions& options) {
    const ModelConfig mc = CausalLM::readConfig(options.model_path);
    int64_t n = static_cast<int64_t>(loadCalibrationSet(dataPathOrDefault(options.data_path)).prompts.size());
    if (options.max_prompts > 0) n = std::min(n, options.max_prompts);
    const int64_t vocab = options.draft_vocab_size > 0 ? std::min(options.draft_vocab_size, mc.vocab_size)
                                                       : std::min<int64_t>(mc.vocab_size, 32000);
    return estimateDraftCacheBytes(n, options.max_prompt_tokens + options.max_new_tokens, mc.hidden_size,
                                   static_cast<int64_t>(options.layers.size()), vocab);
}

DraftEvalResult runDraftEval(const DraftEvalOptions& options, CancelToken* cancel,
                             const std::function<void(int64_t, int64_t)>& progress) {
    if (options.model_path.empty()) throw Error("--model", "is required");
    if (options.draft_dir.empty()) throw Error("--draft", "is required");
    auto target = loadTarget(options.model_path, options.device, options.threads);
    const DraftConfig dc = readDraftConfig(options.draft_dir);
    if (dc.vocab_size != target->config().vocab_size || dc.hidden_size != target->config().hidden_size)
        throw Error(options.draft_dir, "draft was made for a target with vocab " + std::to_string(dc.vocab_size) + " and hidden " +
                                           std::to_string(dc.hidden_size) + ", this target has " +
                                           std::to_string(target->config().vocab_size) + " and " +
                                           std::to_string(target->config().hidden_size));
    for (int64_t h : dc.aux_layers)
        if (h > target->config().num_layers)
            throw Error(options.draft_dir, "draft reads layer " + std::to_string(h) + " but the target has only " +
                                               std::to_string(target->config().num_layers) + " layers");
    auto draft = loadDraft(options.draft_dir, targetEmbeddings(*target));
    draft->to(target->device());
    PromptTokenOptions po;
    po.offset = options.prompt_offset;
    po.max_prompts = options.max_prompts;
    po.max_tokens = options.max_prompt_tokens;
    po.add_bos = options.add_bos;
    po.chat_template = options.chat_template;
    auto prompts = targetPrompts(*target, options.model_path, options.tokenizer_path,
                                 dataPathOrDefault(options.data_path), po);
    if (options.tree_top_k < 1) throw Error("--tree-topk", "must be >= 1");
    return evaluateDraft(*target, draft, prompts, options.k, options.max_new_tokens, options.run_baseline,
                         options.stop_at_eos, cancel, progress, options.tree_top_k);
}

}  // namespace wl
