// loadTokenizer format detection and findTokenizerForModel's search and vocab-size checks.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>

#include "tokenizer/tokenizer.h"
#include "util/atomic_file.h"
#include "util/error.h"

namespace fs = std::filesystem;

namespace {

const std::string kStories = std::string(WAVELAB_MODELS_DIR) + "/stories260K";
const std::string kLlama2Model = std::string(WAVELAB_MODELS_DIR) + "/llama2-tokenizer/tokenizer.model";
const std::string kQwenJson = std::string(WAVELAB_TEST_DATA_DIR) + "/generated/tokenizer-qwen3/models/tokenizer.json";

std::string freshDir(const std::string& name) {
    const std::string dir = std::string(WAVELAB_TEST_WORK_DIR) + "/tokenizer_factory/" + name;
    fs::remove_all(dir);
    wl::makeDirectories(dir);
    return dir;
}

std::string errorOf(const std::function<void()>& f) {
    try {
        f();
    } catch (const wl::Error& e) {
        return e.what();
    }
    return "<no error>";
}

}  // namespace

TEST(TokenizerFactory, FindsTokBinBesideLlama2cCheckpoint) {
    if (!fs::exists(kStories + "/stories260K.bin")) GTEST_SKIP() << "stories260K missing";
    const auto tok = wl::findTokenizerForModel(kStories + "/stories260K.bin", 512);
    EXPECT_EQ(tok->kind(), "llama2c");
    EXPECT_EQ(tok->vocabSize(), 512);
}

TEST(TokenizerFactory, Llama2cVocabMustMatchExactly) {
    if (!fs::exists(kStories + "/stories260K.bin")) GTEST_SKIP() << "stories260K missing";
    const std::string msg = errorOf([] { wl::findTokenizerForModel(kStories + "/stories260K.bin", 513); });
    EXPECT_NE(msg.find("tokenizer has 512 tokens but the model expects 513"), std::string::npos) << msg;
}

TEST(TokenizerFactory, PrefersTokenizerBinAndExplicitPathWins) {
    if (!fs::exists(kStories + "/tok512.bin") || !fs::exists(kLlama2Model)) GTEST_SKIP() << "shared models missing";
    const std::string dir = freshDir("llama2c");
    wl::writeFileAtomic(dir + "/model.bin", "not read here");
    fs::copy_file(kStories + "/tok512.bin", dir + "/tokenizer.bin");
    EXPECT_EQ(wl::findTokenizerForModel(dir + "/model.bin", 512)->vocabSize(), 512);
    const auto explicit_tok = wl::findTokenizerForModel(dir + "/model.bin", 32000, kLlama2Model);
    EXPECT_EQ(explicit_tok->kind(), "sentencepiece");
}

TEST(TokenizerFactory, MissingTokenizerNamesModelAndPlaces) {
    const std::string dir = freshDir("missing");
    wl::writeFileAtomic(dir + "/model.bin", "x");
    const std::string msg = errorOf([&] { wl::findTokenizerForModel(dir + "/model.bin", 512); });
    EXPECT_NE(msg.find(dir + "/model.bin"), std::string::npos) << msg;
    EXPECT_NE(msg.find("tokenizer.bin"), std::string::npos) << msg;
    EXPECT_NE(msg.find("tok*.bin"), std::string::npos) << msg;
    const std::string hf = freshDir("missing_hf");
    const std::string msg2 = errorOf([&] { wl::findTokenizerForModel(hf, 1000); });
    EXPECT_NE(msg2.find("tokenizer.json"), std::string::npos) << msg2;
    EXPECT_NE(msg2.find("tokenizer.model"), std::string::npos) << msg2;
}

TEST(TokenizerFactory, HfDirectoryAllowsPaddedModelVocab) {
    if (!fs::exists(kQwenJson)) GTEST_SKIP() << "Qwen3 tokenizer.json absent: run scripts/fetch-test-data";
    const std::string dir = freshDir("hf");
    fs::create_symlink(kQwenJson, dir + "/tokenizer.json");
    const auto tok = wl::findTokenizerForModel(dir, 151936);  // Qwen3 pads the embedding to 151936
    EXPECT_EQ(tok->kind(), "hf-bpe");
    EXPECT_EQ(tok->vocabSize(), 151669);
    // Without tokenizer_config.json the EOS falls back to <|endoftext|>.
    EXPECT_EQ(tok->eosId(), 151643);
    const std::string msg = errorOf([&] { wl::findTokenizerForModel(dir, 151000); });
    EXPECT_NE(msg.find("tokenizer has 151669 tokens but the model expects 151000"), std::string::npos) << msg;
    // A file inside the HF directory works as the model path too.
    wl::writeFileAtomic(dir + "/config.json", "{}");
    EXPECT_EQ(wl::findTokenizerForModel(dir + "/config.json", 151936)->vocabSize(), 151669);
}

TEST(TokenizerFactory, HfDirectoryFallsBackToTokenizerModel) {
    if (!fs::exists(kLlama2Model)) GTEST_SKIP() << "Llama-2 tokenizer.model missing";
    const std::string dir = freshDir("hf_sp");
    fs::create_symlink(kLlama2Model, dir + "/tokenizer.model");
    EXPECT_EQ(wl::findTokenizerForModel(dir, 32000)->kind(), "sentencepiece");
    EXPECT_EQ(wl::loadTokenizer(dir)->kind(), "sentencepiece");
}

TEST(TokenizerFactory, DetectsFormatByContent) {
    if (!fs::exists(kStories + "/tok512.bin") || !fs::exists(kLlama2Model)) GTEST_SKIP() << "shared models missing";
    const std::string dir = freshDir("detect");
    fs::copy_file(kStories + "/tok512.bin", dir + "/tok_renamed");
    fs::copy_file(kLlama2Model, dir + "/sp_renamed");
    EXPECT_EQ(wl::loadTokenizer(dir + "/tok_renamed")->kind(), "llama2c");
    EXPECT_EQ(wl::loadTokenizer(dir + "/sp_renamed")->kind(), "sentencepiece");
}

TEST(TokenizerFactory, BadFilesGiveOneLineErrorsNamingTheFile) {
    const std::string dir = freshDir("bad");
    wl::writeFileAtomic(dir + "/empty.bin", "");
    wl::writeFileAtomic(dir + "/notes.txt", "hello, I am not a tokenizer at all\n");
    wl::writeFileAtomic(dir + "/bad.json", "{ this is not json");
    for (const std::string name : {"empty.bin", "notes.txt", "bad.json", "does_not_exist.bin"}) {
        const std::string path = dir + "/" + name;
        try {
            wl::loadTokenizer(path);
            ADD_FAILURE() << name << " accepted";
        } catch (const wl::Error& e) {
            EXPECT_EQ(e.source(), path) << e.what();
            EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
        }
    }
    EXPECT_NE(errorOf([&] { wl::loadTokenizer(dir + "/notes.txt"); }).find("unrecognised tokenizer format"),
              std::string::npos);
}
