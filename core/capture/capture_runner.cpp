#include "capture/capture_runner.h"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "model/causal_lm.h"
#include "model/memory_guard.h"
#include "tokenizer/tokenizer.h"
#include "util/error.h"

namespace wl {

namespace {

// Logits for a big vocabulary are [T, V] float32 per prompt: compute entropy in slices so a
// batch never holds more than this many positions' logits at once.
constexpr int64_t kEntropyChunk = 256;

std::vector<int64_t> tokenizePrompt(const Tokenizer& tok, const CalibrationPrompt& p, const CaptureOptions& o) {
    std::string text = p.text;
    if (o.chat_template != "none" && !o.chat_template.empty()) {
        std::vector<ChatMessage> messages = p.messages;
        if (messages.empty()) messages.push_back({"user", p.text});
        text = tok.applyChatTemplate(messages, o.chat_template == "auto" ? "" : o.chat_template);
    }
    std::vector<int64_t> ids = tok.encode(text, false);
    // A chat template may already start with BOS; never add a second one.
    if (o.add_bos && tok.bosId() >= 0 && (ids.empty() || ids[0] != tok.bosId())) ids.insert(ids.begin(), tok.bosId());
    return ids;
}

}  // namespace

CaptureProgress runCapture(CausalLM& model, const Tokenizer& tokenizer, const CalibrationSet& data,
                           const CaptureOptions& options, const CaptureSink& sink, CancelToken* cancel,
                           const CaptureProgressFn& progress) {
    torch::NoGradGuard no_grad;
    const auto t0 = std::chrono::steady_clock::now();
    const ModelConfig& cfg = model.config();
    int64_t total = static_cast<int64_t>(data.prompts.size());
    if (options.max_prompts > 0) total = std::min(total, options.max_prompts);
    int64_t max_tokens = options.max_tokens_per_prompt > 0 ? options.max_tokens_per_prompt : cfg.max_position_embeddings;
    max_tokens = std::min(max_tokens, cfg.max_position_embeddings);
    const int64_t batch_size = std::max<int64_t>(1, options.batch_size);
    if (tokenizer.vocabSize() > cfg.vocab_size)
        throw Error(data.source, "tokenizer has " + std::to_string(tokenizer.vocabSize()) + " tokens but the model expects " +
                                     std::to_string(cfg.vocab_size));

    if (options.check_memory && model.device().is_cpu() && total > 0) {
        // Upper bound: every batch padded to the longest allowed prompt.
        const int64_t B = std::min(batch_size, total);
        const std::string dtype = model.dtype() == torch::kBFloat16 ? "bfloat16"
                                  : model.dtype() == torch::kFloat16 ? "float16" : "float32";
        checkFits(estimateCaptureBytes(cfg, max_tokens, B, dtype), availableMemoryBytes(), data.source,
                  "capturing batches of " + std::to_string(B) + " prompts x " + std::to_string(max_tokens) +
                      " tokens from " + std::to_string(cfg.numHiddenStates()) + " hidden states");
    }

    CaptureProgress prog;
    prog.prompts_total = total;
    const int64_t S = cfg.numHiddenStates(), D = cfg.hidden_size;
    for (int64_t start = 0; start < total; start += batch_size) {
        if (cancel) cancel->checkpoint();
        const int64_t B = std::min(batch_size, total - start);
        std::vector<std::vector<int64_t>> ids(B);
        int64_t T = 0;
        for (int64_t b = 0; b < B; ++b) {
            ids[b] = tokenizePrompt(tokenizer, data.prompts[start + b], options);
            if (ids[b].empty())
                throw Error(data.source, "prompt " + std::to_string(start + b) + " is empty after tokenization");
            if (static_cast<int64_t>(ids[b].size()) > max_tokens) ids[b].resize(max_tokens);
            for (auto id : ids[b])
                if (id < 0 || id >= cfg.vocab_size)
                    throw Error(data.source, "prompt " + std::to_string(start + b) + " has token id " + std::to_string(id) +
                                                 " outside the model vocabulary (" + std::to_string(cfg.vocab_size) + ")");
            T = std::max<int64_t>(T, ids[b].size());
        }
        // Right padding: real tokens occupy [0, T_b) of each row, so stripping is a narrow.
        auto input = torch::zeros({B, T}, torch::kLong);
        auto mask = torch::zeros({B, T}, torch::kLong);
        for (int64_t b = 0; b < B; ++b) {
            const int64_t n = ids[b].size();
            std::memcpy(input[b].data_ptr<int64_t>(), ids[b].data(), n * sizeof(int64_t));
            mask[b].narrow(0, 0, n).fill_(1);
        }
        ForwardOptions fo;
        fo.capture_hidden = true;
        fo.compute_logits = false;
        ForwardOutput out = model.forward(input, B > 1 ? mask : torch::Tensor(), nullptr, fo);
        // [S, B, T, D] float32 on the CPU, one copy per batch.
        auto states = torch::stack(out.hidden_states, 0).to(torch::kCPU, torch::kFloat32).contiguous();
        out.hidden_states.clear();
        torch::Tensor final_cpu;
        if (options.keep_final_normed) final_cpu = out.final_normed.to(torch::kCPU, torch::kFloat32).contiguous();

        for (int64_t b = 0; b < B; ++b) {
            const int64_t n = ids[b].size();
            const int64_t index = start + b;
            auto real = states.select(1, b).narrow(1, 0, n);   // [S, n, D]
            auto finite = torch::isfinite(real).view({S, -1}).all(1);
            if (!finite.all().item<bool>()) {
                int64_t layer = 0;
                while (layer < S && finite[layer].item<bool>()) ++layer;
                throw Error(data.source, "prompt " + std::to_string(index) + ": NaN/Inf in hidden state " +
                                             std::to_string(layer) + " (layer " + std::to_string(layer) + " of " +
                                             std::to_string(S - 1) + ")");
            }
            CapturedPrompt cp;
            cp.prompt_index = index;
            cp.num_tokens = n;
            cp.num_states = S;
            cp.hidden_size = D;
            cp.token_ids = ids[b];
            cp.has_bos = tokenizer.bosId() >= 0 && ids[b][0] == tokenizer.bosId();
            cp.states.resize(static_cast<size_t>(S * n * D));
            auto dst = torch::from_blob(cp.states.data(), {S, n, D}, torch::kFloat32);
            dst.copy_(real);
            if (options.keep_final_normed) {
                cp.final_normed.resize(static_cast<size_t>(n * D));
                torch::from_blob(cp.final_normed.data(), {n, D}, torch::kFloat32).copy_(final_cpu[b].narrow(0, 0, n));
            }
            // Entropy (nats) of softmax(logits) from float32 log-softmax, in position chunks.
            cp.token_entropy.resize(n);
            for (int64_t c0 = 0; c0 < n; c0 += kEntropyChunk) {
                const int64_t len = std::min(kEntropyChunk, n - c0);
                auto logits = model.lmHead(out.final_normed[b].narrow(0, c0, len)).to(torch::kFloat32);
                auto logp = torch::log_softmax(logits, -1);
                auto ent = -(logp.exp() * logp).sum(-1).to(torch::kCPU).contiguous();
                if (!torch::isfinite(ent).all().item<bool>())
                    throw Error(data.source, "prompt " + std::to_string(index) + ": NaN/Inf in the logits (final layer)");
                std::memcpy(cp.token_entropy.data() + c0, ent.data_ptr<float>(), len * sizeof(float));
            }
            prog.tokens_done += n;
            sink(std::move(cp));
        }
        prog.prompts_done += B;
        prog.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (progress) progress(prog);
    }
    prog.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return prog;
}

}  // namespace wl
