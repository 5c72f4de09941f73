#pragma once
// Chat templates of the model families WaveLab supports, written out by hand (no Jinja):
// "qwen3" (ChatML with Qwen3's thinking rules), "chatml", "llama3", "llama2", "none".
#include <string>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace wl {

struct ChatTemplateOptions {
    bool add_generation_prompt = true;
    // Qwen3 only: the generation prompt gets an empty "<think>\n\n</think>\n\n" block, as
    // Qwen3's template does for enable_thinking=False. Default mirrors enable_thinking unset.
    bool disable_thinking = false;
};

// Families accepted by applyChatTemplate ("qwen3-nothink" = qwen3 with disable_thinking).
const std::vector<std::string>& chatTemplateFamilies();

// Throws wl::Error("chat template", ...) for an unknown family.
std::string applyChatTemplate(const std::vector<ChatMessage>& messages, const std::string& family,
                              const ChatTemplateOptions& options = {});

// Whether the family's template text begins with the BOS token string.
bool chatTemplateAddsBos(const std::string& family);

}  // namespace wl
