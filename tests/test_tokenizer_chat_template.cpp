// Chat templates, checked against strings written out by hand from each family's official
// Jinja template (Qwen3's tokenizer_config.json, Meta's Llama-3 and Llama-2 chat formats).
#include <gtest/gtest.h>

#include <filesystem>

#include "tokenizer/chat_template.h"
#include "tokenizer/tokenizer.h"
#include "util/error.h"

namespace fs = std::filesystem;
using wl::ChatMessage;

TEST(ChatTemplate, Qwen3SingleTurnWithSystem) {
    const std::vector<ChatMessage> m = {{"system", "You are helpful."}, {"user", "Hi"}};
    EXPECT_EQ(wl::applyChatTemplate(m, "qwen3"),
              "<|im_start|>system\nYou are helpful.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
}

TEST(ChatTemplate, Qwen3ThinkingDisabledAddsEmptyThinkBlock) {
    const std::vector<ChatMessage> m = {{"user", "2+2?"}};
    const std::string expected = "<|im_start|>user\n2+2?<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n";
    wl::ChatTemplateOptions o;
    o.disable_thinking = true;
    EXPECT_EQ(wl::applyChatTemplate(m, "qwen3", o), expected);
    EXPECT_EQ(wl::applyChatTemplate(m, "qwen3-nothink"), expected);
    EXPECT_EQ(wl::applyChatTemplate(m, "qwen3"), "<|im_start|>user\n2+2?<|im_end|>\n<|im_start|>assistant\n");
}

TEST(ChatTemplate, Qwen3DropsReasoningOfEarlierTurns) {
    // An assistant turn before the last user query loses its <think> part; one after it keeps it.
    const std::vector<ChatMessage> m = {{"user", "A"},
                                        {"assistant", "<think>\nthinking A\n</think>\n\nanswer A"},
                                        {"user", "B"},
                                        {"assistant", "<think>\nthinking B\n</think>\n\nanswer B"}};
    wl::ChatTemplateOptions o;
    o.add_generation_prompt = false;
    EXPECT_EQ(wl::applyChatTemplate(m, "qwen3", o),
              "<|im_start|>user\nA<|im_end|>\n"
              "<|im_start|>assistant\nanswer A<|im_end|>\n"
              "<|im_start|>user\nB<|im_end|>\n"
              "<|im_start|>assistant\n<think>\nthinking B\n</think>\n\nanswer B<|im_end|>\n");
}

TEST(ChatTemplate, ChatMlKeepsAssistantTextAsIs) {
    const std::vector<ChatMessage> m = {{"user", "Hi"}, {"assistant", "Hello!"}, {"user", "Bye"}};
    EXPECT_EQ(wl::applyChatTemplate(m, "chatml"),
              "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nHello!<|im_end|>\n"
              "<|im_start|>user\nBye<|im_end|>\n<|im_start|>assistant\n");
}

TEST(ChatTemplate, Llama3) {
    const std::vector<ChatMessage> m = {{"system", "Be brief. "}, {"user", " Hi\n"}};
    EXPECT_EQ(wl::applyChatTemplate(m, "llama3"),
              "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|>"
              "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>"
              "<|start_header_id|>assistant<|end_header_id|>\n\n");
    EXPECT_TRUE(wl::chatTemplateAddsBos("llama3"));
    EXPECT_FALSE(wl::chatTemplateAddsBos("qwen3"));
}

TEST(ChatTemplate, Llama2) {
    EXPECT_EQ(wl::applyChatTemplate({{"user", "Hi"}}, "llama2"), "<s>[INST] Hi [/INST]");
    EXPECT_EQ(wl::applyChatTemplate({{"system", "Be kind."}, {"user", "Hi"}, {"assistant", "Hello"}, {"user", "Bye"}},
                                    "llama2"),
              "<s>[INST] <<SYS>>\nBe kind.\n<</SYS>>\n\nHi [/INST] Hello </s><s>[INST] Bye [/INST]");
}

TEST(ChatTemplate, NoneJoinsContents) {
    EXPECT_EQ(wl::applyChatTemplate({{"user", "Once upon a time"}}, "none"), "Once upon a time");
    EXPECT_EQ(wl::applyChatTemplate({{"system", "S"}, {"user", "U"}}, "none"), "S\n\nU");
}

TEST(ChatTemplate, UnknownFamilyIsAnError) {
    try {
        wl::applyChatTemplate({{"user", "x"}}, "vicuna");
        FAIL();
    } catch (const wl::Error& e) {
        EXPECT_NE(std::string(e.what()).find("vicuna"), std::string::npos);
    }
}

TEST(ChatTemplate, DefaultFamilyComesFromTheTokenizer) {
    const std::string tok512 = std::string(WAVELAB_MODELS_DIR) + "/stories260K/tok512.bin";
    if (fs::exists(tok512)) {
        const auto tok = wl::loadTokenizer(tok512);
        EXPECT_EQ(tok->defaultChatFamily(), "none");
        EXPECT_EQ(tok->applyChatTemplate({{"user", "Once upon a time"}}), "Once upon a time");
    }
    const std::string qwen = std::string(WAVELAB_TEST_DATA_DIR) + "/generated/tokenizer-qwen3/models";
    if (!fs::exists(qwen + "/tokenizer.json")) GTEST_SKIP() << "Qwen3 tokenizer.json absent: run scripts/fetch-test-data";
    const auto tok = wl::loadTokenizer(qwen);
    EXPECT_EQ(tok->defaultChatFamily(), "qwen3");
    const std::string text = tok->applyChatTemplate({{"user", "Hi"}});
    EXPECT_EQ(text, "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
    EXPECT_EQ(tok->applyChatTemplate({{"user", "Hi"}}, "llama2"), "<s>[INST] Hi [/INST]");
    // The special tokens of the template encode to single ids.
    const auto ids = tok->encode(text, false);
    ASSERT_GE(ids.size(), 5u);
    EXPECT_EQ(ids.front(), 151644);
    EXPECT_EQ(ids[ids.size() - 3], 151644);  // <|im_start|> assistant \n
    EXPECT_EQ(tok->decode(ids), text);
}
