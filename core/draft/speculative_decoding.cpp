#include "draft/speculative_decoding.h"

#include <ATen/CPUGeneratorImpl.h>

#include <algorithm>
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
    verify_tokens += o.verify_tokens;
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

namespace {

// What chain and tree drafting share. Invariant at the top of each round, with L = seq.size():
// the target has processed positions 0..L-2 (seq[L-1] is pending) and the draft holds step-0
// entries for 0..L-2 except the `pending` ones (features f_t of positions pending_start..,
// token seq[t+1]).
struct SpecSession {
    CausalLM& target;
    Eagle3Draft& draft;
    const torch::Device device;
    const int64_t eos, max_pos, max_new;
    const bool stop_at_eos;
    ForwardOptions capture;
    KVCache target_cache;
    DraftKVCache draft_cache;
    std::vector<int64_t> seq;
    torch::Tensor pending_aux;
    int64_t pending_start = 0;
    bool done = false;
    SpecDecodeOutput result;

    SpecSession(CausalLM& t, Eagle3Draft& d, int64_t positions, int64_t max_new_tokens, bool stop)
        : target(t), draft(d), device(t.device()), eos(t.config().eos_token_id),
          max_pos(t.config().max_position_embeddings), max_new(max_new_tokens), stop_at_eos(stop) {
        capture.capture_hidden = true;
        result.stats.accepted_at.assign(static_cast<size_t>(positions), 0);
        done = max_new <= 0;
    }

    // The target's prefill of the prompt; its greedy token is committed.
    void prefill(const std::vector<int64_t>& prompt) {
        if (done) return;
        seq = prompt;
        auto out = target.forward(idsTensor(prompt, device), {}, &target_cache, capture);
        const int64_t first = out.logits[0][out.logits.size(1) - 1].argmax(-1).item<int64_t>();
        seq.push_back(first);
        result.tokens.push_back(first);
        pending_aux = auxStates(out, draft->config().aux_layers);
        pending_start = 0;
        done = isEos(first, eos, stop_at_eos) || max_new <= 1;
    }

    // Draft step-0 entries for the pending positions (EAGLE: feature f_t with token seq[t+1]);
    // returns the output [1, 1, d] that drafts the token after seq.back().
    torch::Tensor feedPending() {
        const int64_t n = pending_aux.size(1);
        std::vector<int64_t> ids(seq.begin() + pending_start + 1, seq.begin() + pending_start + 1 + n);
        auto h = draft->forwardCached(draft->project(pending_aux.to(torch::kFloat32)), idsTensor(ids, device),
                                      torch::arange(pending_start, pending_start + n, torch::kInt64), draft_cache);
        return h.narrow(1, n - 1, 1);
    }

    // After a verify pass `out` over T rows (row 0 = seq[L-1]): `path` lists the verify rows
    // of the root and of each accepted draft token, `commit` the accepted tokens plus the
    // target's own next one. Commits them (up to EOS / max_new), keeps only the path in the
    // target's cache, drops the draft's speculative entries, and makes the path's aux states
    // pending for the next round.
    void finishRound(const ForwardOutput& out, int64_t verify_rows, const std::vector<int64_t>& path,
                     const std::vector<int64_t>& commit, int64_t draft_base) {
        const int64_t L = static_cast<int64_t>(seq.size());
        const int64_t accepted = static_cast<int64_t>(path.size()) - 1;
        for (int64_t j = 0; j < accepted; ++j) result.stats.accepted_at[static_cast<size_t>(j)] += 1;
        result.stats.rounds += 1;
        result.stats.verify_tokens += verify_rows;
        for (size_t j = 0; j < commit.size() && !done; ++j) {
            seq.push_back(commit[j]);
            result.tokens.push_back(commit[j]);
            result.stats.round_tokens += 1;
            if (isEos(commit[j], eos, stop_at_eos) || static_cast<int64_t>(result.tokens.size()) >= max_new) done = true;
        }
        const bool chain = path.back() == accepted;   // rows 0..accepted: a prefix of the verify pass
        if (chain) {
            target_cache.truncate(L + accepted);
        } else {
            std::vector<int64_t> keep;
            for (int64_t row : path) keep.push_back(L - 1 + row);
            target_cache.keepRows(L - 1, keep);
        }
        draft_cache.truncate(draft_base);
        auto aux = auxStates(out, draft->config().aux_layers);
        pending_aux = chain ? aux.narrow(1, 0, accepted + 1) : aux.index_select(1, torch::tensor(path, torch::kInt64).to(device));
        pending_start = L - 1;
        if (L + accepted + 1 >= max_pos) done = true;
    }
};

}  // namespace

SpecDecodeOutput speculativeGenerate(CausalLM& target, Eagle3Draft& draft, const std::vector<int64_t>& prompt,
                                     int64_t k, int64_t max_new, bool stop_at_eos) {
    if (prompt.empty()) throw Error("speculative decoding", "empty prompt");
    if (k < 0) throw Error("--k", "must be >= 0");
    const auto t0 = Clock::now();
    torch::NoGradGuard no_grad;
    SpecSession s(target, draft, k, max_new, stop_at_eos);
    s.prefill(prompt);
    while (!s.done) {
        const int64_t L = static_cast<int64_t>(s.seq.size());
        auto last = s.feedPending();
        const int64_t draft_base = s.draft_cache.length();   // = L - 1
        // Chain drafting: k tokens, each feeding the draft's own hidden state forward.
        const int64_t k_round = std::min<int64_t>(k, std::max<int64_t>(0, s.max_pos - L));
        std::vector<int64_t> drafts;
        for (int64_t j = 0; j < k_round; ++j) {
            auto draft_id = draft->logits(last).argmax(-1);   // [1,1] draft vocab
            const int64_t token = draft->draftToTarget(draft_id).item<int64_t>();
            drafts.push_back(token);
            if (j + 1 < k_round)
                last = draft->forwardCached(last, idsTensor({token}, s.device), torch::full({1}, L - 1 + j, torch::kInt64),
                                            s.draft_cache);
        }
        // Verify seq[L-1] + drafts in one target pass; greedy acceptance.
        std::vector<int64_t> verify{s.seq.back()};
        verify.insert(verify.end(), drafts.begin(), drafts.end());
        auto out = target.forward(idsTensor(verify, s.device), {}, &s.target_cache, s.capture);
        auto greedy = out.logits[0].argmax(-1).to(torch::kCPU);   // [k_round+1]
        const int64_t* g = greedy.data_ptr<int64_t>();
        int64_t accepted = 0;
        while (accepted < k_round && drafts[static_cast<size_t>(accepted)] == g[accepted]) ++accepted;
        std::vector<int64_t> path, commit(drafts.begin(), drafts.begin() + accepted);
        for (int64_t j = 0; j <= accepted; ++j) path.push_back(j);
        commit.push_back(g[accepted]);
        s.finishRound(out, static_cast<int64_t>(verify.size()), path, commit, draft_base);
    }
    s.result.stats.seconds = since(t0);
    return s.result;
}

SpecDecodeOutput speculativeGenerateTree(CausalLM& target, Eagle3Draft& draft, const std::vector<int64_t>& prompt,
                                         int64_t depth, int64_t top_k, int64_t max_new, bool stop_at_eos) {
    if (prompt.empty()) throw Error("speculative decoding", "empty prompt");
    if (depth < 0) throw Error("--k", "must be >= 0");
    if (top_k < 1) throw Error("--tree-topk", "must be >= 1");
    const auto t0 = Clock::now();
    torch::NoGradGuard no_grad;
    SpecSession s(target, draft, depth, max_new, stop_at_eos);
    s.prefill(prompt);

    struct Node {
        int64_t token = 0;       // target vocabulary
        int parent = -1;         // index into nodes, -1 = the root (seq.back())
        int64_t level = 0;       // 1-based depth: the token lands at sequence position L - 1 + level
        double logp = 0;         // cumulative draft log-probability
        int64_t cache_row = -1;  // draft cache row of its step (when it was expanded)
        torch::Tensor hidden;    // draft output after feeding this node ([1,1,d]), drafts its children
    };
    while (!s.done) {
        const int64_t L = static_cast<int64_t>(s.seq.size());
        const torch::Tensor root_hidden = s.feedPending();
        const int64_t draft_base = s.draft_cache.length();   // = L - 1
        const int64_t depth_round = std::min<int64_t>(depth, std::max<int64_t>(0, s.max_pos - L));

        // 1. Grow the tree level by level: the top_k children of every frontier node compete
        //    on cumulative log-probability, and the best top_k become the next frontier.
        std::vector<Node> nodes;
        std::vector<int> frontier = {-1};
        for (int64_t level = 1; level <= depth_round; ++level) {
            std::vector<torch::Tensor> hidden;
            for (int f : frontier) hidden.push_back(f < 0 ? root_hidden : nodes[static_cast<size_t>(f)].hidden);
            auto logp = torch::log_softmax(draft->logits(torch::cat(hidden, 1)).to(torch::kFloat32), -1);   // [1,F,V]
            const int64_t k = std::min<int64_t>(top_k, logp.size(-1));
            auto [values, ids] = logp.topk(k, -1);
            values = values.to(torch::kCPU, torch::kFloat64).contiguous();
            auto targets = draft->draftToTarget(ids).to(torch::kCPU).contiguous();
            struct Candidate {
                int parent;
                int64_t token;
                double logp;
            };
            std::vector<Candidate> candidates;
            for (size_t fi = 0; fi < frontier.size(); ++fi) {
                const double base = frontier[fi] < 0 ? 0.0 : nodes[static_cast<size_t>(frontier[fi])].logp;
                for (int64_t r = 0; r < k; ++r)
                    candidates.push_back({frontier[fi], targets[0][static_cast<int64_t>(fi)][r].item<int64_t>(),
                                          base + values[0][static_cast<int64_t>(fi)][r].item<double>()});
            }
            std::stable_sort(candidates.begin(), candidates.end(),
                             [](const Candidate& a, const Candidate& b) { return a.logp > b.logp; });
            candidates.resize(std::min<size_t>(candidates.size(), static_cast<size_t>(top_k)));
            std::vector<int> level_nodes;
            for (const Candidate& c : candidates) {
                level_nodes.push_back(static_cast<int>(nodes.size()));
                nodes.push_back({c.token, c.parent, level, c.logp, -1, {}});
            }
            frontier = level_nodes;
            if (level == depth_round) break;   // the deepest level is verified, not expanded
            // Feed the new nodes to the draft: each sees the committed prefix and its ancestors.
            const int64_t m = static_cast<int64_t>(level_nodes.size());
            const int64_t before = s.draft_cache.length();
            auto visible = torch::zeros({m, before + m}, torch::kBool);
            visible.narrow(1, 0, draft_base).fill_(true);
            std::vector<torch::Tensor> parent_hidden;
            std::vector<int64_t> tokens;
            for (int64_t r = 0; r < m; ++r) {
                Node& node = nodes[static_cast<size_t>(level_nodes[static_cast<size_t>(r)])];
                node.cache_row = before + r;
                visible[r][before + r] = true;
                for (int a = node.parent; a >= 0; a = nodes[static_cast<size_t>(a)].parent)
                    visible[r][nodes[static_cast<size_t>(a)].cache_row] = true;
                parent_hidden.push_back(node.parent < 0 ? root_hidden : nodes[static_cast<size_t>(node.parent)].hidden);
                tokens.push_back(node.token);
            }
            auto fed = draft->forwardCached(torch::cat(parent_hidden, 1), idsTensor(tokens, s.device),
                                            torch::full({m}, L - 2 + level, torch::kInt64), s.draft_cache, visible);
            for (int64_t r = 0; r < m; ++r) nodes[static_cast<size_t>(level_nodes[static_cast<size_t>(r)])].hidden = fed.narrow(1, r, 1);
        }

        // 2. Verify the root (seq[L-1]) and every node in one target pass with a tree mask.
        const int64_t T = 1 + static_cast<int64_t>(nodes.size());
        std::vector<int64_t> verify{s.seq.back()};
        auto tree_mask = torch::zeros({T, T}, torch::kBool);
        auto tree_depth = torch::zeros({T}, torch::kInt64);
        tree_mask[0][0] = true;
        for (int64_t i = 0; i < T - 1; ++i) {
            const Node& node = nodes[static_cast<size_t>(i)];
            verify.push_back(node.token);
            tree_depth[i + 1] = node.level;
            tree_mask[i + 1][0] = true;
            tree_mask[i + 1][i + 1] = true;
            for (int a = node.parent; a >= 0; a = nodes[static_cast<size_t>(a)].parent) tree_mask[i + 1][a + 1] = true;
        }
        ForwardOptions verify_options = s.capture;
        verify_options.tree_mask = tree_mask;
        verify_options.tree_depth = tree_depth;
        auto out = target.forward(idsTensor(verify, s.device), {}, &s.target_cache, verify_options);
        auto greedy = out.logits[0].argmax(-1).to(torch::kCPU);   // [T]
        const int64_t* g = greedy.data_ptr<int64_t>();
        // 3. Follow the target's greedy choice down the tree as far as a node matches it; the
        //    target's own token ends the round.
        std::vector<int64_t> path{0};
        std::vector<int64_t> commit;
        for (int current = -1;;) {
            const int64_t want = g[path.back()];
            commit.push_back(want);
            int next = -1;
            for (size_t i = 0; i < nodes.size() && next < 0; ++i)
                if (nodes[i].parent == current && nodes[i].token == want) next = static_cast<int>(i);
            if (next < 0) break;
            path.push_back(next + 1);
            current = next;
        }
        s.finishRound(out, T, path, commit, draft_base);
    }
    s.result.stats.seconds = since(t0);
    return s.result;
}

DraftEvalResult evaluateDraft(CausalLM& target, Eagle3Draft& draft, const std::vector<std::vector<int64_t>>& prompts,
                              int64_t k, int64_t max_new, bool run_baseline, bool stop_at_eos, CancelToken* cancel,
                              const std::function<void(int64_t, int64_t)>& progress, int64_t tree_top_k) {
    DraftEvalResult r;
    r.k = k;
    r.tree_top_k = tree_top_k;
    draft->eval();
    SpecDecodeStats total;
    total.accepted_at.assign(static_cast<size_t>(k), 0);
    const int64_t n = static_cast<int64_t>(prompts.size());
    for (int64_t i = 0; i < n; ++i) {
        if (cancel) cancel->checkpoint();
        auto spec = tree_top_k > 1
                        ? speculativeGenerateTree(target, draft, prompts[static_cast<size_t>(i)], k, tree_top_k, max_new, stop_at_eos)
                        : speculativeGenerate(target, draft, prompts[static_cast<size_t>(i)], k, max_new, stop_at_eos);
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
    r.verify_tokens_per_round = total.rounds ? double(total.verify_tokens) / double(total.rounds) : 0.0;
    for (int64_t j = 0; j < k; ++j)
        r.acceptance.push_back(total.rounds ? double(total.accepted_at[static_cast<size_t>(j)]) / double(total.rounds) : 0.0);
    r.spec_seconds = total.seconds;
    r.lossless_checked = run_baseline;
    if (run_baseline && r.spec_seconds > 0) r.speedup = r.baseline_seconds / r.spec_seconds;
    return r;
}

}  // namespace wl
