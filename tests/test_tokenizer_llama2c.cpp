// llama2.c tokenizer (stories260K's tok512.bin) against an independent Python re-reading of
// run.c's encode (tests/data/llama2c_reference.py).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "tokenizer/llama2c_tokenizer.h"
#include "tokenizer/tokenizer.h"
#include "util/atomic_file.h"
#include "util/error.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const std::string kTok = std::string(WAVELAB_MODELS_DIR) + "/stories260K/tok512.bin";

std::string workDir(const std::string& name) {
    const std::string dir = std::string(WAVELAB_TEST_WORK_DIR) + "/tokenizer_llama2c_" + name;
    wl::makeDirectories(dir);
    return dir;
}

const std::vector<std::string>& sampleTexts() {
    static const std::vector<std::string> texts = {
        "Once upon a time",
        "Once upon a time, there was a little girl named Lily. She loved to play outside!",
        "Hello, world? (yes) -- 42 + 7 = 49; \"quoted\" 'single'",
        "  leading and trailing spaces  ",
        "tabs\tand\nnewlines\r\n",
        "Caf\xC3\xA9 na\xC3\xAFve \xE6\x97\xA5\xE6\x9C\xAC\xE8\xAA\x9E \xF0\x9F\x98\x80 emoji",
        "",
        "a",
        "The cat sat on the mat. The dog ran. The bird sang a happy song.",
        "zzzz qqqq xxxx 0123456789",
    };
    return texts;
}

}  // namespace

class Llama2cTokenizerTest : public ::testing::Test {
protected:
    void SetUp() override {
        if (!fs::exists(kTok)) GTEST_SKIP() << "shared model tokenizer missing: " << kTok;
        tok_ = std::make_unique<wl::Llama2cTokenizer>(kTok);
    }
    std::unique_ptr<wl::Llama2cTokenizer> tok_;
};

TEST_F(Llama2cTokenizerTest, HeaderAndSpecialIds) {
    EXPECT_EQ(tok_->kind(), "llama2c");
    EXPECT_EQ(tok_->vocabSize(), 512);
    EXPECT_EQ(tok_->bosId(), 1);
    EXPECT_EQ(tok_->eosId(), 2);
    // Byte tokens sit at byte + 3, as llama2.c's byte fallback assumes.
    EXPECT_EQ(tok_->piece(3), "<0x00>");
    EXPECT_EQ(tok_->piece(3 + 'A'), "<0x41>");
    EXPECT_EQ(tok_->piece(258), "<0xFF>");
}

TEST_F(Llama2cTokenizerTest, MatchesIndependentReferenceEncoder) {
    const std::string dir = workDir("reference");
    json cases = json::array();
    for (const auto& t : sampleTexts()) {
        cases.push_back({{"text", t}, {"bos", true}});
        cases.push_back({{"text", t}, {"bos", false}});
    }
    wl::writeFileAtomic(dir + "/cases.json", cases.dump());
    const std::string cmd = std::string(WAVELAB_PYTHON) + " " + WAVELAB_TEST_DATA_DIR + "/llama2c_reference.py " + kTok +
                            " " + dir + "/cases.json " + dir + "/expected.json";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    const json expected = json::parse(wl::readFile(dir + "/expected.json"));
    ASSERT_EQ(expected.size(), cases.size());
    for (size_t i = 0; i < cases.size(); ++i) {
        const std::string text = cases[i]["text"];
        const auto ids = tok_->encode(text, cases[i]["bos"].get<bool>());
        EXPECT_EQ(ids, expected[i].get<std::vector<int64_t>>()) << "text: '" << text << "'";
    }
}

TEST_F(Llama2cTokenizerTest, KnownStructure) {
    // BOS, then the dummy-prefix merge gives " Once" as one token: every id is a real piece.
    const auto ids = tok_->encode("Once upon a time", true);
    ASSERT_GE(ids.size(), 2u);
    EXPECT_EQ(ids[0], 1);
    EXPECT_EQ(tok_->piece(ids[1]).substr(0, 2), " O");
    EXPECT_TRUE(tok_->encode("", false).empty());
    EXPECT_EQ(tok_->encode("", true), std::vector<int64_t>{1});
}

TEST_F(Llama2cTokenizerTest, UnknownCodePointsFallBackToBytes) {
    // U+1F600 is certainly not among 512 pieces: its 4 UTF-8 bytes appear as byte + 3.
    const auto ids = tok_->encode("\xF0\x9F\x98\x80", false);
    const std::vector<int64_t> bytes = {0xF0 + 3, 0x9F + 3, 0x98 + 3, 0x80 + 3};
    ASSERT_GE(ids.size(), 4u);
    EXPECT_EQ(std::vector<int64_t>(ids.end() - 4, ids.end()), bytes);
}

TEST_F(Llama2cTokenizerTest, DecodeRoundTrips) {
    for (const auto& t : sampleTexts()) {
        EXPECT_EQ(tok_->decode(tok_->encode(t, true)), t) << "text: '" << t << "'";
        EXPECT_EQ(tok_->decode(tok_->encode(t, false)), t) << "text: '" << t << "'";
    }
    // EOS prints nothing.
    auto ids = tok_->encode("The end.", true);
    ids.push_back(tok_->eosId());
    EXPECT_EQ(tok_->decode(ids), "The end.");
}

TEST_F(Llama2cTokenizerTest, LongTextMatchesPieceByPiece) {
    // The heap-based merge must agree with the reference on long inputs too; checked against
    // the reference on a 2k-character text (the naive reference is quadratic).
    std::string text;
    for (int i = 0; i < 40; ++i) text += "Tom and Sue went to the park to play ball. ";
    const std::string dir = workDir("long");
    json cases = json::array({{{"text", text}, {"bos", true}}});
    wl::writeFileAtomic(dir + "/cases.json", cases.dump());
    const std::string cmd = std::string(WAVELAB_PYTHON) + " " + WAVELAB_TEST_DATA_DIR + "/llama2c_reference.py " + kTok +
                            " " + dir + "/cases.json " + dir + "/expected.json";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    const json expected = json::parse(wl::readFile(dir + "/expected.json"));
    EXPECT_EQ(tok_->encode(text, true), expected[0].get<std::vector<int64_t>>());
}

TEST(Llama2cTokenizerErrors, TruncatedAndCorruptFilesNameTheFile) {
    if (!fs::exists(kTok)) GTEST_SKIP() << "shared model tokenizer missing: " << kTok;
    const std::string dir = workDir("corrupt");
    const std::string good = wl::readFile(kTok);
    const std::string truncated = dir + "/truncated.bin";
    wl::writeFileAtomic(truncated, good.substr(0, good.size() - 3));
    try {
        wl::Llama2cTokenizer t(truncated);
        FAIL() << "truncated file accepted";
    } catch (const wl::Error& e) {
        EXPECT_EQ(e.source(), truncated);
        EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
    }
    std::string bad_len = good;
    const int32_t huge = 1 << 20;
    std::memcpy(bad_len.data() + 4 + 4, &huge, 4);  // first token's length
    const std::string corrupt = dir + "/badlen.bin";
    wl::writeFileAtomic(corrupt, bad_len);
    EXPECT_THROW(wl::Llama2cTokenizer{corrupt}, wl::Error);
    const std::string tiny = dir + "/tiny.bin";
    wl::writeFileAtomic(tiny, "ab");
    EXPECT_THROW(wl::Llama2cTokenizer{tiny}, wl::Error);
}
