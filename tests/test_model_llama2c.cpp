// model: the real stories260K llama2.c checkpoint. Forward checked against a numpy port of
// llama2.c's run.c (interleaved-pair RoPE); llama2.c -> HF conversion must reproduce every
// hidden state and the logits (< 1e-4); greedy generation gives the documented story.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <nlohmann/json.hpp>

#include "model/causal_lm.h"
#include "util/atomic_file.h"
#include "util/error.h"

namespace fs = std::filesystem;

namespace {

const std::string kModels = WAVELAB_MODELS_DIR;
const std::string kCheckpoint = kModels + "/stories260K/stories260K.bin";
const std::string kTokenizer = kModels + "/stories260K/tok512.bin";

fs::path workDir(const std::string& name) {
    fs::path d = fs::path(WAVELAB_TEST_WORK_DIR) / "model_llama2c" / name;
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
}

std::string runPython(const fs::path& dir, const std::string& script, const std::string& args) {
    const auto path = dir / "script.py";
    wl::writeFileAtomic(path.string(), script);
    const std::string cmd = std::string(WAVELAB_PYTHON) + " " + path.string() + " " + args;
    FILE* p = popen(cmd.c_str(), "r");
    std::string out;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
    EXPECT_EQ(pclose(p), 0) << out;
    return out;
}

// Numpy port of llama2.c run.c forward (reads the checkpoint itself), printing logits.
const char* kNumpyRunC = R"PY(
import sys, struct, numpy as np
path, ids = sys.argv[1], [int(x) for x in sys.argv[2].split(',')]
raw = open(path, 'rb').read()
dim, hidden, L, H, KVH, V, S = struct.unpack('7i', raw[:28])
shared = V > 0; V = abs(V)
w = np.frombuffer(raw[28:], dtype=np.float32).astype(np.float64)
hs = dim // H; kvd = KVH * hs; o = 0
def take(*shape):
    global o
    n = int(np.prod(shape)); a = w[o:o+n].reshape(shape); o += n; return a
emb = take(V, dim); rms_att = take(L, dim); wq = take(L, dim, dim); wk = take(L, kvd, dim)
wv = take(L, kvd, dim); wo = take(L, dim, dim); rms_ffn = take(L, dim); w1 = take(L, hidden, dim)
w2 = take(L, dim, hidden); w3 = take(L, hidden, dim); rms_final = take(dim)
o += S * hs  # freq_cis real + imag
wcls = emb if shared else take(V, dim)
def rms(x, g): return g * x / np.sqrt(np.mean(x * x) + 1e-5)
kc = np.zeros((L, len(ids), kvd)); vc = np.zeros((L, len(ids), kvd))
for pos, tok in enumerate(ids):
    x = emb[tok].copy()
    for l in range(L):
        xb = rms(x, rms_att[l]); q = wq[l] @ xb; k = wk[l] @ xb; v = wv[l] @ xb
        for i in range(0, dim, 2):
            hd = i % hs; f = 1.0 / 10000.0 ** (hd / hs); c, s = np.cos(pos * f), np.sin(pos * f)
            for vec in ([q, k] if i < kvd else [q]):
                a, b = vec[i], vec[i + 1]; vec[i] = a * c - b * s; vec[i + 1] = a * s + b * c
        kc[l, pos] = k; vc[l, pos] = v
        out = np.zeros(dim)
        for h in range(H):
            kh = h // (H // KVH)
            qh = q[h*hs:(h+1)*hs]
            sc = kc[l, :pos+1, kh*hs:(kh+1)*hs] @ qh / np.sqrt(hs)
            p = np.exp(sc - sc.max()); p /= p.sum()
            out[h*hs:(h+1)*hs] = p @ vc[l, :pos+1, kh*hs:(kh+1)*hs]
        x = x + wo[l] @ out
        xb = rms(x, rms_ffn[l]); a = w1[l] @ xb; b = w3[l] @ xb
        x = x + w2[l] @ (a / (1 + np.exp(-a)) * b)
    logits = wcls @ rms(x, rms_final)
    print(' '.join('%.9g' % z for z in logits))
)PY";

// llama2.c's encode (run.c): dummy-prefix space, per-character lookup with <0xNN> fallback,
// then repeatedly merge the best-scoring adjacent pair.
const char* kEncode = R"PY(
import sys, struct
raw = open(sys.argv[1], 'rb').read(); text = sys.argv[2]
o = 4; vocab = []; scores = []
while o < len(raw):
    sc, n = struct.unpack('fi', raw[o:o+8]); o += 8
    vocab.append(raw[o:o+n]); scores.append(sc); o += n
idx = {t: i for i, t in enumerate(vocab)}
toks = [idx[b' ']] if text else []
for ch in text:
    b = ch.encode('utf-8')
    toks += [idx[b]] if b in idx else [x + 3 for x in b]
while True:
    best, bi, bid = -1e10, -1, -1
    for i in range(len(toks) - 1):
        m = vocab[toks[i]] + vocab[toks[i+1]]
        if m in idx and scores[idx[m]] > best: best, bi, bid = scores[idx[m]], i, idx[m]
    if bi < 0: break
    toks[bi:bi+2] = [bid]
print(','.join(map(str, [1] + toks)))
)PY";

std::vector<std::string> readVocab(const std::string& path) {
    std::string raw = wl::readFile(path);
    std::vector<std::string> vocab;
    size_t o = 4;
    while (o + 8 <= raw.size()) {
        int32_t n;
        std::memcpy(&n, raw.data() + o + 4, 4);
        o += 8;
        vocab.push_back(raw.substr(o, n));
        o += n;
    }
    return vocab;
}

std::vector<int64_t> parseIds(const std::string& s) {
    std::vector<int64_t> ids;
    size_t i = 0;
    while (i < s.size()) {
        size_t j = s.find_first_of(",\n", i);
        if (j == std::string::npos) j = s.size();
        if (j > i) ids.push_back(std::stoll(s.substr(i, j - i)));
        i = j + 1;
    }
    return ids;
}

double maxDiff(const torch::Tensor& a, const torch::Tensor& b) {
    return (a.to(torch::kFloat64) - b.to(torch::kFloat64)).abs().max().item<double>();
}

}  // namespace

TEST(ModelLlama2c, ReadsStories260KConfig) {
    auto c = wl::CausalLM::readConfig(kCheckpoint);
    EXPECT_EQ(c.source_format, "llama2c");
    EXPECT_EQ(c.hidden_size, 64);
    EXPECT_EQ(c.intermediate_size, 172);
    EXPECT_EQ(c.num_layers, 5);
    EXPECT_EQ(c.num_heads, 8);
    EXPECT_EQ(c.num_kv_heads, 4);
    EXPECT_EQ(c.vocab_size, 512);
    EXPECT_EQ(c.max_position_embeddings, 512);
    EXPECT_TRUE(c.tie_word_embeddings);
    EXPECT_TRUE(c.rope_interleaved);
    EXPECT_EQ(c.numHiddenStates(), 6);
}

TEST(ModelLlama2c, TruncatedOrPaddedCheckpointIsAClearError) {
    auto dir = workDir("truncated");
    const std::string bytes = wl::readFile(kCheckpoint);
    const std::string cut = (dir / "cut.bin").string(), padded = (dir / "padded.bin").string(), tiny = (dir / "tiny.bin").string();
    wl::writeFileAtomic(cut, bytes.substr(0, bytes.size() - 100));
    wl::writeFileAtomic(padded, bytes + "xxxx");
    wl::writeFileAtomic(tiny, bytes.substr(0, 10));
    for (const auto& [path, fragment] : std::vector<std::pair<std::string, std::string>>{
             {cut, "implies 1056540 (truncated?)"}, {padded, "file has 1056544 bytes"}, {tiny, "too small"}}) {
        try {
            wl::CausalLM::load(path);
            FAIL() << path;
        } catch (const wl::Error& e) {
            EXPECT_EQ(e.source(), path);
            EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
        }
    }
    // A header with nonsense sizes (dim not divisible by heads).
    std::string bad = bytes;
    int32_t heads = 7;
    std::memcpy(&bad[12], &heads, 4);
    wl::writeFileAtomic(cut, bad);
    EXPECT_THROW(wl::CausalLM::readConfig(cut), wl::Error);
}

TEST(ModelLlama2c, ForwardMatchesNumpyRunC) {
    auto dir = workDir("numpy");
    auto m = wl::CausalLM::load(kCheckpoint, {"cpu", "float32"});
    std::vector<int64_t> ids = {1, 403, 407, 261, 378, 60, 259, 301, 500, 17, 88, 2, 345};
    std::string arg;
    for (auto i : ids) arg += (arg.empty() ? "" : ",") + std::to_string(i);
    std::string out = runPython(dir, kNumpyRunC, kCheckpoint + " " + arg);
    std::vector<double> ref;
    std::istringstream ss(out);
    double v;
    while (ss >> v) ref.push_back(v);
    ASSERT_EQ(ref.size(), ids.size() * 512);
    auto ref_t = torch::tensor(ref, torch::kFloat64).view({(int64_t)ids.size(), 512});
    auto logits = m->forward(torch::tensor(ids).view({1, -1})).logits[0];
    EXPECT_LT(maxDiff(logits, ref_t), 1e-4);
}

TEST(ModelLlama2c, ConvertedHfDirectoryGivesIdenticalStates) {
    auto dir = workDir("convert");
    auto m = wl::CausalLM::load(kCheckpoint, {"cpu", "float32"});
    wl::saveAsHuggingFace(*m, (dir / "hf").string());
    auto cfg = nlohmann::json::parse(wl::readFile((dir / "hf" / "config.json").string()));
    EXPECT_EQ(cfg["architectures"][0], "LlamaForCausalLM");
    EXPECT_EQ(cfg["num_key_value_heads"], 4);
    EXPECT_EQ(cfg["tie_word_embeddings"], true);
    auto hf = wl::CausalLM::load((dir / "hf").string(), {"cpu", "float32"});
    EXPECT_FALSE(hf->config().rope_interleaved);
    EXPECT_EQ(hf->config().source_format, "hf");
    // Two prompts of different length, left-padded, over many positions (RoPE must match).
    auto ids = torch::randint(3, 512, {2, 200}, torch::kLong);
    ids.index_put_({torch::indexing::Slice(), 0}, 1);
    auto mask = torch::ones({2, 200}, torch::kLong);
    mask[0].narrow(0, 0, 37).fill_(0);
    wl::ForwardOptions fo;
    fo.capture_hidden = true;
    auto a = m->forward(ids, mask, nullptr, fo);
    auto b = hf->forward(ids, mask, nullptr, fo);
    ASSERT_EQ(a.hidden_states.size(), 6u);
    for (size_t h = 0; h < 6; ++h) EXPECT_LT(maxDiff(a.hidden_states[h], b.hidden_states[h]), 1e-4) << "h=" << h;
    EXPECT_LT(maxDiff(a.final_normed, b.final_normed), 1e-4);
    EXPECT_LT(maxDiff(a.logits, b.logits), 1e-4);
}

TEST(ModelLlama2c, GreedyStoryFromOnceUponATime) {
    auto dir = workDir("greedy");
    auto prompt = parseIds(runPython(dir, kEncode, kTokenizer + " 'Once upon a time'"));
    ASSERT_GE(prompt.size(), 3u);
    EXPECT_EQ(prompt[0], 1);
    auto m = wl::CausalLM::load(kCheckpoint, {"cpu", "float32"});
    auto gen = m->generateGreedy(prompt, 64);
    ASSERT_FALSE(gen.empty());
    EXPECT_LE(prompt.size() + gen.size(), 64u);
    auto vocab = readVocab(kTokenizer);
    std::string text;
    for (auto id : gen) text += vocab.at(id);
    std::printf("continuation: %s\n", text.c_str());
    // Documented in ../shared/models/README.md: "Once upon a time, there was a little girl named Lily."
    EXPECT_NE(text.find("Lily"), std::string::npos) << text;
    EXPECT_EQ(text.rfind(", there was a little girl", 0), 0u) << text;
}
