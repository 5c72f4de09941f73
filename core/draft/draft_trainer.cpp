#include "draft/draft_trainer.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/autocast_mode.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <numeric>
#include <random>
#include <sstream>

#include "draft/draft_io.h"
#include "draft/speculative_decoding.h"
#include "model/causal_lm.h"
#include "util/atomic_file.h"
#include "util/error.h"

namespace wl {

namespace fs = std::filesystem;

namespace {
using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Sequences of epoch e are visited in a permutation seeded by (seed, e): the batch of any
// step is a pure function of the step, so a resumed run sees the same data.
std::vector<int64_t> batchIndices(int64_t step, int64_t batch, int64_t n, uint64_t seed) {
    std::vector<int64_t> idx;
    int64_t cached_epoch = -1;
    std::vector<int64_t> perm;
    for (int64_t b = 0; b < batch; ++b) {
        const int64_t pos = step * batch + b;
        const int64_t epoch = pos / n;
        if (epoch != cached_epoch) {
            perm.resize(static_cast<size_t>(n));
            std::iota(perm.begin(), perm.end(), 0);
            std::mt19937_64 rng(seed * 1000003ULL + static_cast<uint64_t>(epoch));
            std::shuffle(perm.begin(), perm.end(), rng);
            cached_epoch = epoch;
        }
        idx.push_back(perm[static_cast<size_t>(pos % n)]);
    }
    return idx;
}

double learningRate(const DraftTrainOptions& o, int64_t step) {
    const int64_t warmup = std::max<int64_t>(1, static_cast<int64_t>(std::llround(o.warmup_ratio * double(o.steps))));
    if (step < warmup) return o.learning_rate * double(step + 1) / double(warmup);
    const double progress = o.steps > warmup ? double(step - warmup) / double(o.steps - warmup) : 1.0;
    const double cosine = 0.5 * (1.0 + std::cos(M_PI * std::min(1.0, progress)));
    return o.learning_rate * (o.min_lr_ratio + (1.0 - o.min_lr_ratio) * cosine);
}

struct Batch {
    torch::Tensor ids, lengths, mask;   // [B,T], [B], [B,T]
};

Batch makeBatch(const std::vector<std::vector<int64_t>>& seqs, const std::vector<int64_t>& which, int64_t pad_id) {
    int64_t T = 0;
    for (auto i : which) T = std::max<int64_t>(T, static_cast<int64_t>(seqs[static_cast<size_t>(i)].size()));
    const int64_t B = static_cast<int64_t>(which.size());
    auto ids = torch::full({B, T}, pad_id, torch::kInt64);
    auto mask = torch::zeros({B, T}, torch::kInt64);
    auto lengths = torch::zeros({B}, torch::kInt64);
    for (int64_t b = 0; b < B; ++b) {
        const auto& s = seqs[static_cast<size_t>(which[static_cast<size_t>(b)])];
        const int64_t n = static_cast<int64_t>(s.size());
        ids[b].narrow(0, 0, n).copy_(torch::tensor(s, torch::kInt64));
        mask[b].narrow(0, 0, n).fill_(1);
        lengths[b] = n;
    }
    return {ids, lengths, mask};
}

std::string checkpointPath(const std::string& out_dir) { return (fs::path(out_dir) / "checkpoint" / "train_state.pt").string(); }

void saveCheckpoint(const std::string& path, Eagle3Draft& draft, torch::optim::AdamW& optimizer, int64_t step,
                    const DraftTrainOptions& o, int64_t num_sequences) {
    torch::serialize::OutputArchive archive;
    torch::serialize::OutputArchive model_archive, optim_archive;
    draft->save(model_archive);
    optimizer.save(optim_archive);
    archive.write("model", model_archive);
    archive.write("optimizer", optim_archive);
    archive.write("step", torch::tensor(step, torch::kInt64));
    archive.write("layers", torch::tensor(draft->config().aux_layers, torch::kInt64));
    archive.write("seed", torch::tensor(static_cast<int64_t>(o.seed), torch::kInt64));
    archive.write("num_sequences", torch::tensor(num_sequences, torch::kInt64));
    // Data position: the batch of a step is a function of (seed, step); kept for inspection.
    archive.write("data_position", torch::tensor(step * o.batch_size, torch::kInt64));
    archive.write("cpu_rng_state", at::detail::getDefaultCPUGenerator().get_state());
    std::ostringstream bytes;
    archive.save_to(bytes);
    makeDirectories(fs::path(path).parent_path().string());
    writeFileAtomic(path, bytes.str());
}

// Returns the step the checkpoint was taken at.
int64_t loadCheckpoint(const std::string& path, Eagle3Draft& draft, torch::optim::AdamW& optimizer, int64_t num_sequences) {
    torch::serialize::InputArchive archive;
    try {
        std::istringstream bytes(readFile(path));
        archive.load_from(bytes);
        torch::serialize::InputArchive model_archive, optim_archive;
        archive.read("model", model_archive);
        archive.read("optimizer", optim_archive);
        torch::Tensor step, layers, nseq, rng;
        archive.read("step", step);
        archive.read("layers", layers);
        archive.read("num_sequences", nseq);
        archive.read("cpu_rng_state", rng);
        std::vector<int64_t> saved_layers(layers.data_ptr<int64_t>(), layers.data_ptr<int64_t>() + layers.numel());
        if (saved_layers != draft->config().aux_layers)
            throw Error(path, "checkpoint was trained on layers " + formatLayerList(saved_layers) + ", not " +
                                  formatLayerList(draft->config().aux_layers));
        if (nseq.item<int64_t>() != num_sequences)
            throw Error(path, "checkpoint saw " + std::to_string(nseq.item<int64_t>()) + " training sequences, now there are " +
                                  std::to_string(num_sequences) + " (different data or options)");
        draft->load(model_archive);
        optimizer.load(optim_archive);
        at::Generator cpu_gen = at::detail::getDefaultCPUGenerator();
        cpu_gen.set_state(rng);
        return step.item<int64_t>();
    } catch (const Error&) {
        throw;
    } catch (const std::exception& e) {
        throw Error(path, std::string("unreadable training checkpoint: ") + e.what());
    }
}

// Optional on-disk cache of one sequence's captured tensors.
std::string cacheFile(const std::string& dir, int64_t i) { return (fs::path(dir) / ("seq_" + std::to_string(i) + ".pt")).string(); }
}  // namespace

int64_t estimateDraftCacheBytes(int64_t num_sequences, int64_t tokens_per_sequence, int64_t hidden_size, int64_t num_aux,
                                int64_t draft_vocab_size) {
    return num_sequences * tokens_per_sequence * (num_aux * hidden_size + draft_vocab_size) * 4;
}

torch::Tensor targetEmbeddings(CausalLM& target) {
    torch::NoGradGuard no_grad;
    auto ids = torch::arange(target.config().vocab_size, torch::kInt64).to(target.device());
    return target.embed(ids).to(torch::kCPU, torch::kFloat32).contiguous();
}

torch::Tensor targetLmHead(CausalLM& target) {
    torch::NoGradGuard no_grad;
    const int64_t d = target.config().hidden_size;
    // lmHead is linear without bias on normed states: lmHead(I) = W^T.
    auto eye = torch::eye(d, torch::TensorOptions().dtype(target.dtype())).to(target.device());
    return target.lmHead(eye).to(torch::kCPU, torch::kFloat32).t().contiguous();
}

Eagle3Draft makeDraft(CausalLM& target, const DraftConfig& config, const DraftVocab& vocab, bool init_lm_head_from_target) {
    Eagle3Draft draft(config, vocab);
    draft->setEmbeddings(targetEmbeddings(target));
    if (init_lm_head_from_target) {
        torch::NoGradGuard no_grad;
        auto head = targetLmHead(target).index_select(0, torch::tensor(vocab.targetIds(), torch::kInt64));
        draft->lm_head->weight.copy_(head);
    }
    return draft;
}

std::pair<torch::Tensor, torch::Tensor> targetDistribution(Eagle3Draft& draft, const torch::Tensor& target_logits) {
    auto draft_targets =
        draft->draftToTarget(torch::arange(draft->config().draft_vocab_size, torch::kInt64).to(target_logits.device()));
    // Target distribution restricted to the draft vocabulary (renormalised), as SpecForge's
    // _compute_target_p; positions whose target argmax lies outside the vocab carry no loss.
    auto target_p = torch::softmax(target_logits.to(torch::kFloat32).index_select(-1, draft_targets), -1);
    auto top = target_logits.argmax(-1);
    auto in_vocab = draft->t2d.to(target_logits.device()).index_select(0, top.flatten()).view(top.sizes());
    return {target_p, in_vocab};
}

TTTLoss computeTTTLoss(Eagle3Draft& draft, const torch::Tensor& aux, const torch::Tensor& ids, const torch::Tensor& lengths,
                       const torch::Tensor& target_p, const torch::Tensor& in_vocab, int64_t ttt_steps,
                       double step_weight_decay) {
    const int64_t T = ids.size(1);
    auto target_top = target_p.argmax(-1);
    auto step_logits = draft->forwardTTT(aux, ids, ttt_steps);
    auto pos = torch::arange(T, torch::kInt64).to(ids.device()).view({1, T});
    TTTLoss r;
    torch::Tensor total;
    for (int64_t i = 0; i < ttt_steps; ++i) {
        // Step i at position t predicts token t+2+i: the target's distribution at t+1+i.
        auto shift = [&](const torch::Tensor& x, double fill) {
            auto y = torch::full_like(x, fill);
            if (1 + i < T) y.narrow(1, 0, T - 1 - i).copy_(x.narrow(1, 1 + i, T - 1 - i));
            return y;
        };
        auto valid = (pos + 1 + i < lengths.view({-1, 1})) & shift(in_vocab.to(torch::kFloat32), 0).to(torch::kBool);
        auto p = torch::zeros_like(target_p);
        if (1 + i < T) p.narrow(1, 0, T - 1 - i).copy_(target_p.narrow(1, 1 + i, T - 1 - i));
        auto logp = torch::log_softmax(step_logits[static_cast<size_t>(i)].to(torch::kFloat32), -1);
        auto per_pos = -(p * logp).sum(-1);
        auto validf = valid.to(torch::kFloat32);
        const double count = validf.sum().item<double>();
        auto loss_i = (per_pos * validf).sum() / std::max(1.0, count);
        auto hit = (logp.argmax(-1) == shift(target_top.to(torch::kFloat32), -1).to(torch::kInt64)) & valid;
        r.step_loss.push_back(loss_i.item<double>());
        r.step_accuracy.push_back(count > 0 ? hit.to(torch::kFloat32).sum().item<double>() / count : 0.0);
        if (i == 0) r.positions = static_cast<int64_t>(count);
        auto weighted = loss_i * std::pow(step_weight_decay, double(i));
        total = total.defined() ? total + weighted : weighted;
    }
    r.loss = total;
    return r;
}

DraftTrainResult trainDraft(CausalLM& target, const std::vector<std::vector<int64_t>>& prompts, const DraftTrainOptions& o,
                            CancelToken* cancel, const DraftTrainProgressFn& progress) {
    const auto t0 = Clock::now();
    if (prompts.empty()) throw Error(o.data_path.empty() ? "training data" : o.data_path, "no prompts to train on");
    if (o.out_dir.empty()) throw Error("--out", "is required");
    if (o.steps <= 0 || o.batch_size <= 0 || o.ttt_steps <= 0)
        throw Error("draft training", "steps, batch size and TTT steps must be positive");
    if (o.threads > 0) at::set_num_threads(static_cast<int>(o.threads));
    const ModelConfig& mc = target.config();
    const torch::Device device = target.device();
    // Check the layers before the (possibly long) generation phase.
    draftConfigForTarget(mc, o.layers, o.draft_vocab_size);
    DraftTrainProgress prog;
    prog.total_steps = o.steps;

    // 1. Continuations by the target (kept in memory as token ids only).
    std::vector<std::vector<int64_t>> seqs;
    prog.phase = "generating";
    prog.items_total = static_cast<int64_t>(prompts.size());
    for (size_t i = 0; i < prompts.size(); ++i) {
        if (cancel) cancel->checkpoint();
        std::vector<int64_t> p = prompts[i];
        if (o.max_prompt_tokens > 0 && static_cast<int64_t>(p.size()) > o.max_prompt_tokens) p.resize(static_cast<size_t>(o.max_prompt_tokens));
        if (p.empty()) continue;
        auto cont = decodeWithTarget(target, p, o.max_new_tokens, true, o.sample ? o.temperature : 0.0,
                                     o.seed * 7919ULL + static_cast<uint64_t>(i));
        p.insert(p.end(), cont.begin(), cont.end());
        if (p.size() >= 2) seqs.push_back(std::move(p));
        prog.items_done = static_cast<int64_t>(i + 1);
        prog.seconds = since(t0);
        if (progress) progress(prog);
    }
    if (seqs.empty()) throw Error(o.data_path.empty() ? "training data" : o.data_path, "every prompt was empty");
    const int64_t N = static_cast<int64_t>(seqs.size());

    // 2. Draft vocabulary from token frequencies of the training sequences.
    std::vector<int64_t> counts(static_cast<size_t>(mc.vocab_size), 0);
    int64_t total_tokens = 0;
    for (const auto& s : seqs)
        for (auto t : s) {
            if (t < 0 || t >= mc.vocab_size) throw Error("training data", "token id " + std::to_string(t) + " outside the vocabulary");
            ++counts[static_cast<size_t>(t)];
            ++total_tokens;
        }
    DraftConfig config = draftConfigForTarget(mc, o.layers, o.draft_vocab_size);
    DraftVocab vocab = buildDraftVocab(counts, config.draft_vocab_size);
    int64_t covered = 0;
    for (int64_t t = 0; t < mc.vocab_size; ++t) covered += vocab.t2d[static_cast<size_t>(t)] ? counts[static_cast<size_t>(t)] : 0;

    // 3. Draft, optimizer, optional resume.
    torch::manual_seed(o.seed);
    Eagle3Draft draft = makeDraft(target, config, vocab, o.init_lm_head_from_target);
    draft->to(device);
    std::vector<torch::Tensor> params;
    for (auto& p : draft->parameters())
        if (p.requires_grad()) params.push_back(p);
    torch::optim::AdamW optimizer(params, torch::optim::AdamWOptions(o.learning_rate).weight_decay(o.weight_decay));
    const std::string ckpt = checkpointPath(o.out_dir);
    int64_t step = 0;
    DraftTrainResult result;
    if (o.resume && fs::exists(ckpt)) {
        step = std::min(loadCheckpoint(ckpt, draft, optimizer, N), o.steps);
        prog.resumed = true;
    }
    result.start_step = step;

    // Optional disk cache of captured states (aux + restricted target logits + mask).
    const bool use_cache = !o.cache_dir.empty();
    if (use_cache) makeDirectories(o.cache_dir);

    // 4. Training loop.
    prog.phase = "training";
    const bool autocast = device.is_cuda();
    int64_t positions_done = 0;
    const auto train_t0 = Clock::now();
    // Captured tensors of one sequence: aux [len, m*d], target_p [len, Vd], in_vocab [len].
    struct Captured {
        torch::Tensor aux, target_p, in_vocab;
    };
    auto capture = [&](const std::vector<int64_t>& which) {
        std::vector<Captured> got(which.size());
        std::vector<int64_t> missing_pos, missing;
        for (size_t b = 0; b < which.size(); ++b) {
            const std::string file = use_cache ? cacheFile(o.cache_dir, which[b]) : "";
            if (use_cache && fs::exists(file)) {
                try {
                    torch::serialize::InputArchive a;
                    std::istringstream bytes(readFile(file));
                    a.load_from(bytes);
                    a.read("aux", got[b].aux);
                    a.read("target_p", got[b].target_p);
                    a.read("in_vocab", got[b].in_vocab);
                } catch (const std::exception& e) {
                    throw Error(file, std::string("unreadable cache entry: ") + e.what());
                }
                const int64_t len = static_cast<int64_t>(seqs[static_cast<size_t>(which[b])].size());
                if (got[b].aux.size(0) != len || got[b].aux.size(1) != config.numAux() * config.hidden_size ||
                    got[b].target_p.size(1) != config.draft_vocab_size)
                    throw Error(file, "cache entry does not match this run (other model, layers or data): delete the cache directory");
                continue;
            }
            missing_pos.push_back(static_cast<int64_t>(b));
            missing.push_back(which[b]);
        }
        if (!missing.empty()) {
            Batch mb = makeBatch(seqs, missing, 0);
            torch::NoGradGuard no_grad;
            ForwardOptions fo;
            fo.capture_hidden = true;
            auto out = target.forward(mb.ids.to(device), mb.mask.to(device), nullptr, fo);
            std::vector<torch::Tensor> parts;
            for (int64_t h : config.aux_layers) parts.push_back(out.hidden_states[static_cast<size_t>(h)].to(torch::kFloat32));
            auto aux = torch::cat(parts, -1);
            auto logits = out.logits.to(torch::kFloat32);
            if (!torch::isfinite(aux).all().item<bool>() || !torch::isfinite(logits).all().item<bool>())
                throw Error(mc.source_path.empty() ? "target" : mc.source_path, "the target produced NaN/Inf hidden states or logits");
            auto [target_p, in_vocab] = targetDistribution(draft, logits);
            for (size_t m = 0; m < missing.size(); ++m) {
                const int64_t len = mb.lengths[static_cast<int64_t>(m)].item<int64_t>();
                Captured c{aux[static_cast<int64_t>(m)].narrow(0, 0, len), target_p[static_cast<int64_t>(m)].narrow(0, 0, len),
                           in_vocab[static_cast<int64_t>(m)].narrow(0, 0, len)};
                if (use_cache) {
                    torch::serialize::OutputArchive a;
                    a.write("aux", c.aux.to(torch::kCPU).contiguous());
                    a.write("target_p", c.target_p.to(torch::kCPU).contiguous());
                    a.write("in_vocab", c.in_vocab.to(torch::kCPU).contiguous());
                    std::ostringstream bytes;
                    a.save_to(bytes);
                    writeFileAtomic(cacheFile(o.cache_dir, missing[m]), bytes.str());
                }
                got[static_cast<size_t>(missing_pos[m])] = c;
            }
        }
        return got;
    };
    try {
        while (step < o.steps) {
            if (cancel) cancel->checkpoint();
            auto which = batchIndices(step, o.batch_size, N, o.seed);
            Batch batch = makeBatch(seqs, which, 0);
            auto got = capture(which);
            const int64_t B = batch.ids.size(0), T = batch.ids.size(1);
            auto aux = torch::zeros({B, T, config.numAux() * config.hidden_size}, torch::kFloat32).to(device);
            auto target_p = torch::zeros({B, T, config.draft_vocab_size}, torch::kFloat32).to(device);
            auto in_vocab = torch::zeros({B, T}, torch::kBool).to(device);
            for (int64_t b = 0; b < B; ++b) {
                const auto& c = got[static_cast<size_t>(b)];
                const int64_t len = c.aux.size(0);
                aux[b].narrow(0, 0, len).copy_(c.aux);
                target_p[b].narrow(0, 0, len).copy_(c.target_p);
                in_vocab[b].narrow(0, 0, len).copy_(c.in_vocab);
            }
            const double lr = learningRate(o, step);
            for (auto& group : optimizer.param_groups())
                static_cast<torch::optim::AdamWOptions&>(group.options()).lr(lr);
            draft->train();
            optimizer.zero_grad();
            if (autocast) {
                at::autocast::set_enabled(true);
                at::autocast::set_autocast_gpu_dtype(at::kBFloat16);
            }
            TTTLoss loss;
            try {
                loss = computeTTTLoss(draft, aux, batch.ids.to(device), batch.lengths.to(device), target_p, in_vocab,
                                      o.ttt_steps, o.step_weight_decay);
            } catch (...) {
                if (autocast) at::autocast::set_enabled(false);
                throw;
            }
            if (autocast) {
                at::autocast::set_enabled(false);
                at::autocast::clear_cache();
            }
            const double loss_value = loss.loss.item<double>();
            if (!std::isfinite(loss_value)) throw Error("draft training", "loss became NaN/Inf at step " + std::to_string(step + 1) + " (try a lower --lr)");
            loss.loss.backward();
            if (o.grad_clip > 0) torch::nn::utils::clip_grad_norm_(params, o.grad_clip);
            optimizer.step();
            ++step;
            positions_done += loss.positions;
            if (o.checkpoint_every > 0 && step % o.checkpoint_every == 0 && step < o.steps)
                saveCheckpoint(ckpt, draft, optimizer, step, o, N);
            prog.step = step;
            prog.loss = loss_value;
            prog.step_loss = loss.step_loss;
            prog.step_accuracy = loss.step_accuracy;
            prog.learning_rate = lr;
            prog.seconds = since(t0);
            const double train_s = since(train_t0);
            prog.tokens_per_second = train_s > 0 ? double(positions_done) / train_s : 0.0;
            result.final_loss = loss_value;
            result.final_step_accuracy = loss.step_accuracy;
            if (progress) progress(prog);
        }
    } catch (const Cancelled&) {
        // The state between steps is consistent: keep it so --resume loses nothing.
        saveCheckpoint(ckpt, draft, optimizer, step, o, N);
        throw;
    }

    // 5. Final draft directory + a last checkpoint (so a longer --steps run can resume).
    saveCheckpoint(ckpt, draft, optimizer, step, o, N);
    draft->to(torch::kCPU);
    saveDraft(draft, o.out_dir);
    result.steps = step;
    result.seconds = since(t0);
    result.trained_positions = positions_done;
    result.num_sequences = N;
    result.draft_vocab_size = config.draft_vocab_size;
    result.draft_vocab_coverage = total_tokens ? double(covered) / double(total_tokens) : 0.0;
    result.out_dir = o.out_dir;
    prog.phase = "done";
    if (progress) progress(prog);
    return result;
}

}  // namespace wl
