#include "tokenizer/chat_template.h"

#include "util/error.h"

namespace wl {
namespace {

std::string stripChars(const std::string& s, const char* chars, bool left, bool right) {
    size_t b = 0, e = s.size();
    if (left) b = s.find_first_not_of(chars);
    if (b == std::string::npos) return "";
    if (right) {
        const size_t last = s.find_last_not_of(chars);
        e = last == std::string::npos ? b : last + 1;
    }
    return s.substr(b, e - b);
}

// Python's str.strip() for the ASCII whitespace the templates see in practice.
std::string strip(const std::string& s) { return stripChars(s, " \t\n\r\f\v", true, true); }

// Qwen3's official template (tools left out): a leading system message, user turns,
// assistant turns with their <think> part dropped before the last user query and kept after.
std::string qwen3(const std::vector<ChatMessage>& messages, const ChatTemplateOptions& options,
                  bool qwen3_rules) {
    std::string out;
    if (!messages.empty() && messages[0].role == "system")
        out += "<|im_start|>system\n" + messages[0].content + "<|im_end|>\n";
    size_t last_query = messages.empty() ? 0 : messages.size() - 1;
    for (size_t i = messages.size(); i-- > 0;) {
        if (messages[i].role == "user") { last_query = i; break; }
    }
    for (size_t i = 0; i < messages.size(); ++i) {
        const ChatMessage& m = messages[i];
        if (m.role == "user" || (m.role == "system" && i != 0)) {
            out += "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n";
        } else if (m.role == "assistant") {
            if (!qwen3_rules) {
                out += "<|im_start|>assistant\n" + m.content + "<|im_end|>\n";
                continue;
            }
            std::string content = m.content, reasoning;
            const size_t close = m.content.rfind("</think>");
            if (close != std::string::npos) {
                content = stripChars(m.content.substr(close + 8), "\n", true, false);
                std::string before = m.content.substr(0, m.content.find("</think>"));
                before = stripChars(before, "\n", false, true);
                const size_t open = before.rfind("<think>");
                if (open != std::string::npos) before = before.substr(open + 7);
                reasoning = stripChars(before, "\n", true, false);
            }
            const bool last = i + 1 == messages.size();
            if (i > last_query && (last || !reasoning.empty())) {
                out += "<|im_start|>assistant\n<think>\n" + stripChars(reasoning, "\n", true, true) +
                       "\n</think>\n\n" + stripChars(content, "\n", true, false);
            } else {
                out += "<|im_start|>assistant\n" + content;
            }
            out += "<|im_end|>\n";
        } else if (m.role != "system") {
            throw Error("chat template", "unsupported message role '" + m.role + "'");
        }
    }
    if (options.add_generation_prompt) {
        out += "<|im_start|>assistant\n";
        if (qwen3_rules && options.disable_thinking) out += "<think>\n\n</think>\n\n";
    }
    return out;
}

// Meta's Llama-3 template: BOS, then each message as a header block with stripped content.
std::string llama3(const std::vector<ChatMessage>& messages, const ChatTemplateOptions& options) {
    std::string out = "<|begin_of_text|>";
    for (const ChatMessage& m : messages)
        out += "<|start_header_id|>" + m.role + "<|end_header_id|>\n\n" + strip(m.content) + "<|eot_id|>";
    if (options.add_generation_prompt) out += "<|start_header_id|>assistant<|end_header_id|>\n\n";
    return out;
}

// Meta's Llama-2 chat template: the system prompt folds into the first user turn.
std::string llama2(const std::vector<ChatMessage>& messages) {
    std::string out, system;
    size_t first = 0;
    bool has_system = false;
    if (!messages.empty() && messages[0].role == "system") {
        system = messages[0].content;
        has_system = true;
        first = 1;
    }
    for (size_t i = first; i < messages.size(); ++i) {
        const ChatMessage& m = messages[i];
        std::string content = m.content;
        if (i == first && has_system) content = "<<SYS>>\n" + system + "\n<</SYS>>\n\n" + content;
        if (m.role == "user") {
            out += "<s>[INST] " + strip(content) + " [/INST]";
        } else if (m.role == "assistant") {
            out += " " + strip(content) + " </s>";
        } else {
            throw Error("chat template", "llama2 template: unexpected message role '" + m.role + "'");
        }
    }
    return out;
}

// No template: the message contents, separated by blank lines.
std::string none(const std::vector<ChatMessage>& messages) {
    std::string out;
    for (size_t i = 0; i < messages.size(); ++i) {
        if (i) out += "\n\n";
        out += messages[i].content;
    }
    return out;
}

}  // namespace

const std::vector<std::string>& chatTemplateFamilies() {
    static const std::vector<std::string> families = {"qwen3", "qwen3-nothink", "chatml", "llama3",
                                                      "llama2", "none"};
    return families;
}

std::string applyChatTemplate(const std::vector<ChatMessage>& messages, const std::string& family,
                              const ChatTemplateOptions& options) {
    if (family == "qwen3") return qwen3(messages, options, true);
    if (family == "qwen3-nothink") {
        ChatTemplateOptions o = options;
        o.disable_thinking = true;
        return qwen3(messages, o, true);
    }
    if (family == "chatml") return qwen3(messages, options, false);
    if (family == "llama3") return llama3(messages, options);
    if (family == "llama2") return llama2(messages);
    if (family == "none") return none(messages);
    std::string known;
    for (const auto& f : chatTemplateFamilies()) known += (known.empty() ? "" : ", ") + f;
    throw Error("chat template", "unknown family '" + family + "' (known: " + known + ")");
}

bool chatTemplateAddsBos(const std::string& family) { return family == "llama3" || family == "llama2"; }

std::string Tokenizer::applyChatTemplate(const std::vector<ChatMessage>& messages,
                                         const std::string& family) const {
    return wl::applyChatTemplate(messages, family.empty() ? defaultChatFamily() : family);
}

bool Tokenizer::templateAddsBos(const std::string& family) const {
    return chatTemplateAddsBos(family.empty() ? defaultChatFamily() : family);
}

}  // namespace wl
