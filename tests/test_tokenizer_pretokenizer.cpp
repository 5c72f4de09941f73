// The hand-rolled regex pre-tokenizers against Python's `re` running the same patterns with
// \p{L}, \p{N}, \s expanded from unicodedata (tests/data/hf_bpe_reference.py --split), on
// hand-picked corner cases and seeded random strings over a tricky alphabet.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <random>

#include "tokenizer/pretokenizer.h"
#include "tokenizer/unicode.h"
#include "tokenizer/utf8.h"
#include "util/atomic_file.h"

using nlohmann::json;

namespace {

std::vector<std::string> testTexts() {
    std::vector<std::string> texts = {
        "Hello world", "I'm", "I'M", "it's", "IT'S", "we'Re", "'ll'", "don'tdo", "x'\xC5\xBF",  // 'ſ folds to 's
        "  two spaces", "trailing  ", "a\n\nb", "a \n b", " \n\n  x", "\r\n\r\n", "\t\ttabs",
        "12345", "1 22 333 4444 55555", "3.14", "\xD9\xA3\xD9\xA4\xD9\xA5", "\xC2\xBD\xE2\x85\xAB",
        "!!!\n\nok", " ?!", "...\r\n", "a.b", "(x)", "\xE4\xBD\xA0\xE5\xA5\xBD\xEF\xBC\x8C\xE4\xB8\x96\xE7\x95\x8C",
        "\xF0\x9F\x98\x80\xF0\x9F\x98\x80 smile", "e\xCC\x81", "\xC2\xA0nbsp", "\xE3\x80\x80ideographic",
        "\x1C\x1D not white space", "\x0B\x0Cvt ff", "", " ", "\n",
    };
    // Seeded random strings over letters, digits, spaces, newlines, apostrophes, contraction
    // letters, punctuation, non-ASCII letters/numbers, combining marks and emoji.
    const std::vector<std::string> alphabet = {
        "a", "Z", "s", "S", "t", "r", "e", "v", "m", "l", "L", "d", "D", "'", "'", " ", " ", " ", "\t", "\n", "\r",
        "0", "7", "9", "!", ".", ",", "-", "_", "\"", "\xC3\xA9", "\xC5\xBF", "\xE4\xBD\xA0", "\xF0\x9F\x98\x80",
        "\xCC\x81", "\xD9\xA3", "\xC2\xBD", "\xC2\xA0", "\xE3\x80\x80", "\x1C", "\x0B", "\xE2\x80\xA8"};
    std::mt19937 rng(12345);
    std::uniform_int_distribution<size_t> pick(0, alphabet.size() - 1), len(1, 24);
    for (int i = 0; i < 400; ++i) {
        std::string s;
        for (size_t k = len(rng); k > 0; --k) s += alphabet[pick(rng)];
        texts.push_back(s);
    }
    return texts;
}

void compareWithPython(wl::SplitPattern pattern, const std::string& name) {
    const auto texts = testTexts();
    const std::string dir = std::string(WAVELAB_TEST_WORK_DIR) + "/tokenizer_pretokenizer_" + name;
    wl::makeDirectories(dir);
    wl::writeFileAtomic(dir + "/texts.json", json(texts).dump());
    const std::string cmd = std::string(WAVELAB_PYTHON) + " " + WAVELAB_TEST_DATA_DIR + "/hf_bpe_reference.py --split " +
                            name + " " + dir + "/texts.json " + dir + "/pieces.json";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    const auto expected = json::parse(wl::readFile(dir + "/pieces.json")).get<std::vector<std::vector<std::string>>>();
    ASSERT_EQ(expected.size(), texts.size());
    int failures = 0;
    for (size_t i = 0; i < texts.size() && failures < 10; ++i) {
        std::vector<std::string> pieces;
        for (const auto& [b, e] : wl::preTokenize(texts[i], pattern)) pieces.push_back(texts[i].substr(b, e - b));
        EXPECT_EQ(pieces, expected[i]) << "text #" << i << ": '" << texts[i] << "'";
        failures += pieces != expected[i];
    }
}

}  // namespace

TEST(PreTokenizer, Gpt2MatchesPythonRegex) { compareWithPython(wl::SplitPattern::Gpt2, "gpt2"); }
TEST(PreTokenizer, Qwen2MatchesPythonRegex) { compareWithPython(wl::SplitPattern::Qwen2, "qwen2"); }
TEST(PreTokenizer, Llama3MatchesPythonRegex) { compareWithPython(wl::SplitPattern::Llama3, "llama3"); }

TEST(PreTokenizer, KnownSplits) {
    const auto split = [](const std::string& text, wl::SplitPattern p) {
        std::vector<std::string> out;
        for (const auto& [b, e] : wl::preTokenize(text, p)) out.push_back(text.substr(b, e - b));
        return out;
    };
    using V = std::vector<std::string>;
    EXPECT_EQ(split("Hello world", wl::SplitPattern::Qwen2), (V{"Hello", " world"}));
    EXPECT_EQ(split("12345", wl::SplitPattern::Qwen2), (V{"1", "2", "3", "4", "5"}));
    EXPECT_EQ(split("12345", wl::SplitPattern::Llama3), (V{"123", "45"}));
    EXPECT_EQ(split("12345", wl::SplitPattern::Gpt2), (V{"12345"}));
    EXPECT_EQ(split("a   b", wl::SplitPattern::Gpt2), (V{"a", "  ", " b"}));
    EXPECT_EQ(split("I'LL go", wl::SplitPattern::Qwen2), (V{"I", "'LL", " go"}));
    EXPECT_EQ(split("I'LL go", wl::SplitPattern::Gpt2), (V{"I", "'", "LL", " go"}));
    std::string regex = wl::splitPatternRegex(wl::SplitPattern::Llama3);
    wl::SplitPattern p;
    EXPECT_TRUE(wl::splitPatternFromRegex(regex, p));
    EXPECT_EQ(p, wl::SplitPattern::Llama3);
    EXPECT_FALSE(wl::splitPatternFromRegex("\\w+", p));
}

TEST(Unicode, NfcMatchesPython) {
    // Composition, canonical reordering, blocked marks, Hangul, singletons, exclusions.
    const std::vector<std::string> inputs = {
        "e\xCC\x81", "A\xCC\x8A", "\xE2\x84\xAB" /* Angstrom sign -> Å */, "o\xCC\x88\xCC\x81", "a\xCC\xA3\xCC\x82",
        "a\xCC\x82\xCC\xA3", "\xE1\x84\x80\xE1\x85\xA1\xE1\x86\xA8" /* Hangul jamo -> 각 */, "\xEA\xB0\x81",
        "\xE0\xA4\xA8\xE0\xA4\xBC" /* excluded composition */, "\xCC\x81start", "plain ascii", "\xE1\xBE\x87",
    };
    const std::string dir = std::string(WAVELAB_TEST_WORK_DIR) + "/tokenizer_nfc";
    wl::makeDirectories(dir);
    wl::writeFileAtomic(dir + "/in.json", json(inputs).dump());
    const std::string cmd = std::string(WAVELAB_PYTHON) +
                            " -c \"import json,sys,unicodedata; t=json.load(open(sys.argv[1]));"
                            " json.dump([unicodedata.normalize('NFC', s) for s in t], open(sys.argv[2],'w'))\" " +
                            dir + "/in.json " + dir + "/out.json";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    const auto expected = json::parse(wl::readFile(dir + "/out.json")).get<std::vector<std::string>>();
    for (size_t i = 0; i < inputs.size(); ++i) EXPECT_EQ(wl::unicode::nfc(inputs[i]), expected[i]) << "input #" << i;
}

TEST(Unicode, Utf8Validation) {
    EXPECT_TRUE(wl::utf8::isValid("ascii \xC3\xA9 \xF0\x9F\x98\x80"));
    EXPECT_EQ(wl::utf8::firstInvalid("ab\xC3"), 2u);            // truncated
    EXPECT_EQ(wl::utf8::firstInvalid("\xC0\xAF"), 0u);          // overlong
    EXPECT_EQ(wl::utf8::firstInvalid("x\xED\xA0\x80"), 1u);     // surrogate
    EXPECT_EQ(wl::utf8::firstInvalid("\xF4\x90\x80\x80"), 0u);  // above U+10FFFF
    EXPECT_EQ(wl::utf8::firstInvalid("ok\x80"), 2u);            // stray continuation byte
}
