// wavelab-cli convert: llama2.c checkpoint -> Hugging Face directory (LlamaForCausalLM, f32).
#include <filesystem>
#include <iostream>

#include "command.h"
#include "model/causal_lm.h"
#include "util/error.h"

namespace wl::cli {
namespace {

int runConvert(const Args& args) {
    args.allowOnly({"model", "out"});
    const std::string path = args.get("model"), out = args.get("out");
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
        throw Error(path, "is a directory; convert expects a llama2.c checkpoint file");
    LoadOptions lo;
    lo.device = "cpu";
    auto model = CausalLM::load(path, lo);
    saveAsHuggingFace(*model, out);
    std::cout << "wrote " << out << "/config.json and " << out << "/model.safetensors (LlamaForCausalLM, float32, "
              << model->config().num_layers << " layers; q/k permuted to rotate-half RoPE)\n";
    // The tokenizer is not converted: point at the one beside the checkpoint.
    std::string tok;
    const auto dir = std::filesystem::path(path).parent_path();
    for (const auto& e : std::filesystem::directory_iterator(dir.empty() ? "." : dir, ec)) {
        const std::string n = e.path().filename().string();
        if (n.rfind("tok", 0) == 0 && e.path().extension() == ".bin" && e.path() != std::filesystem::path(path))
            tok = e.path().string();
    }
    if (!tok.empty())
        std::cout << "tokenizer not copied: it is " << tok << " (pass --tokenizer " << tok
                  << " when using the converted model)\n";
    else
        std::cout << "tokenizer not copied: pass --tokenizer FILE when using the converted model\n";
    return 0;
}

Registrar reg{"convert", "--model llama2c.bin --out DIR: convert a llama2.c checkpoint to a Hugging Face directory",
              runConvert};

}  // namespace
}  // namespace wl::cli
