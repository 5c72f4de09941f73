// wavelab-cli info / generate / convert / capture / make-synthetic, end to end on stories260K
// and a synthetic checkpoint. Capture output is checked with numpy (independent reader):
// hidden_states.0 must equal the checkpoint's embedding rows for the captured token ids.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_runner.h"
#include "util/atomic_file.h"

namespace fs = std::filesystem;

namespace {

const std::string kModels = WAVELAB_MODELS_DIR;
const std::string kCheckpoint = kModels + "/stories260K/stories260K.bin";
const std::string kTokenizer = kModels + "/stories260K/tok512.bin";

fs::path workDir(const std::string& name) {
    fs::path d = fs::path(WAVELAB_TEST_WORK_DIR) / "cli_model" / name;
    fs::remove_all(d);
    fs::create_directories(d);
    return d;
}

wl::test::CliResult run(const std::string& args) { return wl::test::runCli(args, wl::test::Stderr::Separate); }

bool contains(const std::string& s, const std::string& what) { return s.find(what) != std::string::npos; }

}  // namespace

TEST(CliModel, InfoOnLlama2cCheckpoint) {
    auto r = run("info --model " + kCheckpoint);
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_TRUE(contains(r.out, "LlamaForCausalLM")) << r.out;
    EXPECT_TRUE(contains(r.out, "layers:            5")) << r.out;
    EXPECT_TRUE(contains(r.out, "hidden size:       64")) << r.out;
    EXPECT_TRUE(contains(r.out, "heads:             8 (kv heads 4, head dim 8)")) << r.out;
    EXPECT_TRUE(contains(r.out, "vocab:             512")) << r.out;
    EXPECT_TRUE(contains(r.out, "llama2.c")) << r.out;
    // 260,032 weights besides the RoPE tables in the file: file size 1056540 = 28 + 4 * (260032 + 512*8).
    EXPECT_TRUE(contains(r.out, "parameters:        260,032")) << r.out;
}

TEST(CliModel, GenerateConvertAndGenerateAgain) {
    auto dir = workDir("convert");
    auto g = run("generate --model " + kCheckpoint + " --prompt 'Once upon a time' --max-tokens 40 --greedy");
    ASSERT_EQ(g.code, 0) << g.err;
    // Documented in ../shared/models/README.md.
    EXPECT_EQ(g.out.rfind("Once upon a time, there was a little girl named Lily.", 0), 0u) << g.out;

    auto c = run("convert --model " + kCheckpoint + " --out " + (dir / "hf").string());
    ASSERT_EQ(c.code, 0) << c.err;
    EXPECT_TRUE(contains(c.out, "tok512.bin")) << c.out;
    EXPECT_TRUE(fs::exists(dir / "hf" / "model.safetensors"));
    auto info = run("info --model " + (dir / "hf").string());
    ASSERT_EQ(info.code, 0) << info.err;
    EXPECT_TRUE(contains(info.out, "Hugging Face safetensors")) << info.out;
    EXPECT_TRUE(contains(info.out, "rotate-half")) << info.out;
    auto g2 = run("generate --model " + (dir / "hf").string() + " --tokenizer " + kTokenizer +
                  " --prompt 'Once upon a time' --max-tokens 40 --greedy");
    ASSERT_EQ(g2.code, 0) << g2.err;
    EXPECT_EQ(g2.out, g.out);
}

TEST(CliModel, CaptureWritesStatesManifestAndEmbeddingRows) {
    auto dir = workDir("capture");
    const std::string data = (dir / "prompts.txt").string();
    wl::writeFileAtomic(data, "Once upon a time there was a cat.\nThe dog ran fast.\nLily and Ben played in the sun all day.\nA fourth prompt.\n");
    auto r = run("capture --model " + kCheckpoint + " --data " + data + " --out " + (dir / "out").string() +
                 " --max-prompts 3 --max-tokens 8 --batch-size 2");
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_TRUE(contains(r.out, "captured 3 prompts")) << r.out;
    auto manifest = nlohmann::json::parse(wl::readFile((dir / "out" / "manifest.json").string()));
    EXPECT_EQ(manifest["num_prompts"], 3);
    EXPECT_EQ(manifest["num_states"], 6);
    EXPECT_EQ(manifest["hidden_size"], 64);
    EXPECT_EQ(manifest["model"]["architecture"], "LlamaForCausalLM");
    EXPECT_TRUE(contains(manifest["convention"].get<std::string>(), "BEFORE the final RMSNorm"));
    const int64_t ntok = manifest["num_tokens"];
    EXPECT_LE(ntok, 24);
    EXPECT_GT(ntok, 10);
    // numpy: shapes, offsets, BOS, entropy range, hidden_states.0 == embedding rows of the checkpoint.
    const std::string script = (dir / "check.py").string();
    wl::writeFileAtomic(script, R"PY(
import json, struct, sys, numpy as np
cap, ckpt, ntok = sys.argv[1], sys.argv[2], int(sys.argv[3])
b = open(cap, 'rb').read(); n = struct.unpack('<Q', b[:8])[0]; h = json.loads(b[8:8+n]); d = b[8+n:]
def get(name, dt):
    e = h[name]; s, t = e['data_offsets']; return np.frombuffer(d[s:t], dtype=dt).reshape(e['shape'])
ids = get('token_ids', np.int64); off = get('prompt_offsets', np.int64); ent = get('token_entropy', np.float32)
assert ids.shape == (ntok,), ids.shape
assert off[0] == 0 and off[-1] == ntok and len(off) == 4 and all(np.diff(off) <= 8), off
assert all(ids[off[:-1]] == 1), 'every prompt starts with BOS'
assert (ent >= 0).all() and (ent <= np.log(512) + 1e-4).all()
for k in range(6): assert get('hidden_states.%d' % k, np.float32).shape == (ntok, 64)
raw = open(ckpt, 'rb').read(); emb = np.frombuffer(raw[28:28 + 4 * 512 * 64], dtype=np.float32).reshape(512, 64)
assert np.abs(get('hidden_states.0', np.float32) - emb[ids]).max() < 1e-6
assert np.abs(get('hidden_states.5', np.float32) - get('hidden_states.4', np.float32)).max() > 1e-3
print('ok')
)PY");
    const std::string cmd = std::string(WAVELAB_PYTHON) + " " + script + " " + (dir / "out" / "hidden_states.safetensors").string() +
                            " " + kCheckpoint + " " + std::to_string(ntok);
    EXPECT_EQ(std::system(cmd.c_str()), 0);
}

TEST(CliModel, MakeSyntheticThenInfoAndCapture) {
    auto dir = workDir("synthetic");
    const std::string out = (dir / "qwen3").string();
    auto r = run("make-synthetic --preset qwen3-0.6b --out " + out + " --layers 2 --vocab 512 --dtype bf16 --shards 2 --seed 3");
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_TRUE(fs::exists(dir / "qwen3" / "model.safetensors.index.json"));
    auto info = run("info --model " + out);
    ASSERT_EQ(info.code, 0) << info.err;
    EXPECT_TRUE(contains(info.out, "SYNTHETIC")) << info.out;
    EXPECT_TRUE(contains(info.out, "Qwen3ForCausalLM")) << info.out;
    EXPECT_TRUE(contains(info.out, "hidden size:       1024")) << info.out;
    EXPECT_TRUE(contains(info.out, "heads:             16 (kv heads 8, head dim 128)")) << info.out;
    EXPECT_TRUE(contains(info.out, "dtype on disk:     bfloat16")) << info.out;
    const std::string data = (dir / "p.txt").string();
    wl::writeFileAtomic(data, "hello world\nsecond prompt here\n");
    auto cap = run("capture --model " + out + " --tokenizer " + kTokenizer + " --data " + data + " --out " +
                   (dir / "cap").string());
    ASSERT_EQ(cap.code, 0) << cap.err;
    auto manifest = nlohmann::json::parse(wl::readFile((dir / "cap" / "manifest.json").string()));
    EXPECT_EQ(manifest["num_states"], 3);
    EXPECT_EQ(manifest["hidden_size"], 1024);
    EXPECT_EQ(manifest["model"]["synthetic"], true);
}

TEST(CliModel, ErrorsAreOneLineAndNonZero) {
    auto dir = workDir("errors");
    auto missing = run("info --model " + (dir / "nope.bin").string());
    EXPECT_EQ(missing.code, 1);
    EXPECT_TRUE(contains(missing.err, (dir / "nope.bin").string() + ": no such file")) << missing.err;
    EXPECT_EQ(std::count(missing.err.begin(), missing.err.end(), '\n'), 1) << missing.err;

    const std::string cut = (dir / "cut.bin").string();
    wl::writeFileAtomic(cut, wl::readFile(kCheckpoint).substr(0, 5000));
    auto trunc = run("generate --model " + cut + " --prompt hi");
    EXPECT_EQ(trunc.code, 1);
    EXPECT_TRUE(contains(trunc.err, cut + ": file has 5000 bytes")) << trunc.err;
    EXPECT_TRUE(contains(trunc.err, "truncated")) << trunc.err;
    EXPECT_EQ(std::count(trunc.err.begin(), trunc.err.end(), '\n'), 1) << trunc.err;

    auto typo = run("info --model " + kCheckpoint + " --modle x");
    EXPECT_EQ(typo.code, 1);
    EXPECT_TRUE(contains(typo.err, "--modle")) << typo.err;

    auto preset = run("make-synthetic --preset gpt-9 --out " + (dir / "x").string());
    EXPECT_EQ(preset.code, 1);
    EXPECT_TRUE(contains(preset.err, "unknown preset 'gpt-9'")) << preset.err;

    auto notok = run("capture --model " + (dir / "x").string() + " --out " + (dir / "y").string());
    EXPECT_EQ(notok.code, 1);
}
