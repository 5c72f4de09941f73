#include "draft/speculative_decoding.h"

#include <ATen/CPUGeneratorImpl.h>

#include <chrono>

#include "draft/eval_task.h"
#include "model/causal_lm.h"
#include "util/error.h"

namespace wl {

namespace {
using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

torch::Tensor idsTensor(const std::vector<int64_t>& ids, torch::Device device) {
    return torch::tensor(ids, torch::kInt64).view({1, static_cast<int64_t>(ids.size())}).to(device);
}

// Aux states for the draft: the chosen hidden_states concatenated (ascending), float32.
torch::Tensor auxStates(const ForwardOutput& out, const std::vector<int64_t>& layers) {
    std::vector<torch::Tensor> parts;
    for (int64_t h : layers) {
        if (h < 0 || h >= static_cast<int64_t>(out.hidden_states.size()))
            throw Error("draft", "layer " + std::to_string(h) + " is not captured by the target (it has " +
                                     std::to_string(out.hidden_states.size()) + " hidden states)");
        parts.push_back(out.hidden_states[static_cast<size_t>(h)].to(torch::kFloat32));
    }
    return torch::cat(parts, -1);
}

bool isEos(int64_t token, int64_t eos, bool stop_at_eos) { return stop_at_eos && eos >= 0 && token == eos; }
}  // namespace

void SpecDecodeStats::add(const SpecDecodeStats& o) {
    rounds += o.rounds;
    round_tokens += o.round_tokens;
    if (accepted_at.size() < o.accepted_at.size()) accepted_at.resize(o.accepted_at.size(), 0);
    for (size_t j = 0; j < o.accepted_at.size(); ++j) accepted_at[j] += o.accepted_at[j];
    seconds += o.seconds;
}

std::vector<int64_t> decodeWithTarget(CausalLM& target, const std::vector<int64_t>& prompt, int64_t max_new,
                                      bool stop_at_eos, double temperature, uint64_t seed) {
    if (prompt.empty()) throw Error("decode", "empty prompt");
    torch::NoGradGuard no_grad;
    const int64_t eos = target.config().eos_token_id;
    torch::Generator gen = at::detail::createCPUGenerator(seed);
    auto pick = [&](const torch::Tensor& logits_row) -> int64_t {
        if (temperature <= 0) return logits_row.argmax(-1).item<int64_t>();
        auto probs = torch::softmax(logits_row.to(torch::kCPU, torch::kFloat64) / temperature, -1);
        return torch::multinomial(probs, 1, false, gen).item<int64_t>();
    };
    KVCache cache;
    ForwardOptions fo;
    auto out = target.forward(idsTensor(prompt, target.device()), {}, &cache, fo);
    std::vector<int64_t> generated;
    int64_t next = pick(out.logits[0][out.logits.size(1) - 1]);
    while (true) {
        generated.push_back(next);
        if (static_cast<int64_t>(generated.size()) >= max_new || isEos(next, eos, stop_at_eos)) break;
        out = target.forward(idsTensor({next}, target.device()), {}, &cache, fo);
        next = pick(out.logits[0][0]);
    }
    return generated;
}

SpecDecodeOutput speculativeGenerate(CausalLM& target, Eagle3Draft& draft, const std::vector<int64_t>& prompt,
                                     int64_t k, int64_t max_new, bool stop_at_eos) {
    if (prompt.empty()) throw Error("speculative decoding", "empty prompt");
    if (k < 0) throw Error("--k", "must be >= 0");
    const auto t0 = Clock::now();
    torch::NoGradGuard no_grad;
    const torch::Device device = target.device();
    const int64_t eos = target.config().eos_token_id;
    const int64_t max_pos = target.config().max_position_embeddings;
    const auto& layers = draft->config().aux_layers;
    SpecDecodeOutput result;
    result.stats.accepted_at.assign(static_cast<size_t>(k), 0);
    if (max_new <= 0) return result;

    ForwardOptions capture;
    capture.capture_hidden = true;
    KVCache target_cache;
    DraftKVCache draft_cache;

    // Invariant at the top of each round, with L = seq.size(): the target has processed
    // positions 0..L-2 (seq[L-1] is pending) and the draft holds step-0 entries for 0..L-2
    // except the `pending` ones (features f_t of positions pending_start.., token seq[t+1]).
    std::vector<int64_t> seq = prompt;
    auto out = target.forward(idsTensor(prompt, device), {}, &target_cache, capture);
    int64_t first = out.logits[0][out.logits.size(1) - 1].argmax(-1).item<int64_t>();
    seq.push_back(first);
    result.tokens.push_back(first);
    torch::Tensor pending_aux = auxStates(out, layers);
    int64_t pending_start = 0;
    bool done = isEos(first, eos, stop_at_eos) || max_new <= 1;

    while (!done) {
        const int64_t L = static_cast<int64_t>(seq.size());
        // 1. Draft step-0 entries for the pending positions (EAGLE: feature f_t + token t+1).
        const int64_t n = pending_aux.size(1);
        std::vector<int64_t> step0_ids(seq.begin() + pending_start + 1, seq.begin() + pending_start + 1 + n);
        auto h = draft->forwardCached(draft->project(pending_aux.to(torch::kFloat32)), idsTensor(step0_ids, device),
                                      torch::arange(pending_start, pending_start + n, torch::kInt64), draft_cache);
        const int64_t draft_base = draft_cache.length();   // = L - 1
        // 2. Chain drafting: k tokens, each feeding the draft's own hidden state forward.
        int64_t k_round = std::min<int64_t>(k, std::max<int64_t>(0, max_pos - L));
        std::vector<int64_t> drafts;
        auto last = h.narrow(1, n - 1, 1);
        for (int64_t j = 0; j < k_round; ++j) {
            auto draft_id = draft->logits(last).argmax(-1);   // [1,1] draft vocab
            int64_t token = draft->draftToTarget(draft_id).item<int64_t>();
            drafts.push_back(token);
            if (j + 1 < k_round)
                last = draft->forwardCached(last, idsTensor({token}, device),
                                            torch::full({1}, L - 1 + j, torch::kInt64), draft_cache);
        }
        // 3. Verify seq[L-1] + drafts in one target pass; greedy acceptance.
        std::vector<int64_t> verify{seq.back()};
        verify.insert(verify.end(), drafts.begin(), drafts.end());
        out = target.forward(idsTensor(verify, device), {}, &target_cache, capture);
        auto greedy = out.logits[0].argmax(-1).to(torch::kCPU);   // [k_round+1]
        const int64_t* g = greedy.data_ptr<int64_t>();
        int64_t accepted = 0;
        while (accepted < k_round && drafts[static_cast<size_t>(accepted)] == g[accepted]) ++accepted;
        for (int64_t j = 0; j < accepted; ++j) result.stats.accepted_at[static_cast<size_t>(j)] += 1;
        result.stats.rounds += 1;
        // 4. Commit accepted drafts + the target's own next token, respecting max_new / EOS.
        int64_t committed = 0;
        for (int64_t j = 0; j <= accepted && !done; ++j) {
            const int64_t token = j < accepted ? drafts[static_cast<size_t>(j)] : g[accepted];
            seq.push_back(token);
            result.tokens.push_back(token);
            ++committed;
            if (isEos(token, eos, stop_at_eos) || static_cast<int64_t>(result.tokens.size()) >= max_new) done = true;
        }
        result.stats.round_tokens += committed;
        // 5. Roll both caches back to the accepted prefix.
        target_cache.truncate(L + accepted);
        draft_cache.truncate(draft_base);
        pending_aux = auxStates(out, layers).narrow(1, 0, accepted + 1);
        pending_start = L - 1;
        if (L + accepted + 1 >= max_pos) done = true;
    }
    result.stats.seconds = since(t0);
    return result;
}

DraftEvalResult evaluateDraft(CausalLM& target, Eagle3Draft& draft, const std::vector<std::vector<int64_t>>& prompts,
                              int64_t k, int64_t max_new, bool run_baseline, bool stop_at_eos, CancelToken* cancel,
                              const std::function<void(int64_t, int64_t)>& progress) {
    DraftEvalResult r;
    r.k = k;
    draft->eval();
    SpecDecodeStats total;
    total.accepted_at.assign(static_cast<size_t>(k), 0);
    const int64_t n = static_cast<int64_t>(prompts.size());
    for (int64_t i = 0; i < n; ++i) {
        if (cancel) cancel->checkpoint();
        auto spec = speculativeGenerate(target, draft, prompts[static_cast<size_t>(i)], k, max_new, stop_at_eos);
        total.add(spec.stats);
        r.generated_tokens += static_cast<int64_t>(spec.tokens.size());
        if (run_baseline) {
            const auto t0 = Clock::now();
            auto plain = decodeWithTarget(target, prompts[static_cast<size_t>(i)], max_new, stop_at_eos);
            r.baseline_seconds += since(t0);
            if (plain != spec.tokens) ++r.lossless_mismatches;
        }
        if (progress) progress(i + 1, n);
    }
    r.prompts = n;
    r.rounds = total.rounds;
    r.round_tokens = total.round_tokens;
    r.tau = total.tau();
    for (int64_t j = 0; j < k; ++j)
        r.acceptance.push_back(total.rounds ? double(total.accepted_at[static_cast<size_t>(j)]) / double(total.rounds) : 0.0);
    r.spec_seconds = total.seconds;
    r.lossless_checked = run_baseline;
    if (run_baseline && r.spec_seconds > 0) r.speedup = r.baseline_seconds / r.spec_seconds;
    return r;
}

}  // namespace wl
