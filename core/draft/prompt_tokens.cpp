#include "draft/prompt_tokens.h"

#include "util/error.h"

namespace wl {

std::vector<std::vector<int64_t>> tokenizePrompts(const Tokenizer& tokenizer, const CalibrationSet& data,
                                                  const PromptTokenOptions& o) {
    std::vector<std::vector<int64_t>> out;
    const int64_t n = static_cast<int64_t>(data.prompts.size());
    for (int64_t i = std::max<int64_t>(0, o.offset); i < n; ++i) {
        if (o.max_prompts > 0 && static_cast<int64_t>(out.size()) >= o.max_prompts) break;
        const auto& p = data.prompts[static_cast<size_t>(i)];
        std::string text = p.text;
        if (o.chat_template != "none") {
            std::vector<ChatMessage> messages = p.messages;
            if (messages.empty()) messages.push_back({"user", p.text});
            // Keep only the conversation up to the first assistant turn: the target writes the rest.
            std::vector<ChatMessage> head;
            for (const auto& m : messages) {
                if (m.role == "assistant") break;
                head.push_back(m);
            }
            text = tokenizer.applyChatTemplate(head, o.chat_template == "auto" ? "" : o.chat_template);
        }
        auto ids = tokenizer.encode(text, o.add_bos);
        if (o.max_tokens > 0 && static_cast<int64_t>(ids.size()) > o.max_tokens) ids.resize(static_cast<size_t>(o.max_tokens));
        if (ids.empty()) continue;
        out.push_back(std::move(ids));
    }
    if (out.empty()) throw Error(data.source, "no usable prompts (after offset " + std::to_string(o.offset) + ")");
    return out;
}

}  // namespace wl
