#include "draft/draft_io.h"

#include <cstring>
#include <filesystem>

#include "io/safetensors.h"
#include "util/atomic_file.h"
#include "util/error.h"

namespace wl {

namespace fs = std::filesystem;

void saveDraft(Eagle3Draft& draft, const std::string& dir) {
    makeDirectories(dir);
    writeFileAtomic((fs::path(dir) / "config.json").string(), draftConfigToJson(draft->config()));
    SafetensorsWriter writer((fs::path(dir) / "model.safetensors").string());
    std::vector<torch::Tensor> keep;   // owns the bytes until finish()
    for (const auto& item : draft->named_parameters()) {
        auto t = item.value().detach().to(torch::kCPU, torch::kFloat32).contiguous();
        keep.push_back(t);
        writer.add(item.key(), DType::F32, t.sizes().vec(), t.data_ptr());
    }
    auto d2t = draft->d2t.to(torch::kCPU, torch::kInt64).contiguous();
    auto t2d = draft->t2d.to(torch::kCPU, torch::kBool).contiguous();
    keep.push_back(d2t);
    keep.push_back(t2d);
    writer.add("d2t", DType::I64, d2t.sizes().vec(), d2t.data_ptr());
    writer.add("t2d", DType::BOOL, t2d.sizes().vec(), t2d.data_ptr());
    writer.setMetadata("format", "pt");
    writer.finish();
}

DraftConfig readDraftConfig(const std::string& dir) {
    const std::string path = (fs::path(dir) / "config.json").string();
    if (!fs::exists(path)) throw Error(dir, "not a draft directory (no config.json)");
    return draftConfigFromJson(readFile(path), path);
}

namespace {
torch::Tensor toTensor(const TensorView& v, const std::vector<int64_t>& expected_shape) {
    if (v.shape != expected_shape) {
        std::string got, want;
        for (auto s : v.shape) got += (got.empty() ? "" : "x") + std::to_string(s);
        for (auto s : expected_shape) want += (want.empty() ? "" : "x") + std::to_string(s);
        throw Error(v.file, "tensor '" + v.name + "' has shape [" + got + "], expected [" + want + "]");
    }
    torch::ScalarType st;
    switch (v.dtype) {
        case DType::F32: st = torch::kFloat32; break;
        case DType::F16: st = torch::kFloat16; break;
        case DType::BF16: st = torch::kBFloat16; break;
        case DType::F64: st = torch::kFloat64; break;
        case DType::I64: st = torch::kInt64; break;
        case DType::I32: st = torch::kInt32; break;
        case DType::BOOL: st = torch::kBool; break;
        case DType::U8: st = torch::kUInt8; break;
        default: throw Error(v.file, "tensor '" + v.name + "' has unsupported dtype " + dtypeName(v.dtype));
    }
    auto t = torch::empty(expected_shape, torch::TensorOptions().dtype(st));
    if (static_cast<size_t>(t.nbytes()) != v.nbytes) throw Error(v.file, "tensor '" + v.name + "' has the wrong byte size");
    std::memcpy(t.data_ptr(), v.data, v.nbytes);
    return t;
}
}  // namespace

Eagle3Draft loadDraft(const std::string& dir, const torch::Tensor& embeddings) {
    DraftConfig config = readDraftConfig(dir);
    const std::string path = SafetensorsSet::resolve(dir);
    SafetensorsFile file(path);
    auto d2t = toTensor(file.get("d2t"), {config.draft_vocab_size}).to(torch::kInt64);
    auto t2d = toTensor(file.get("t2d"), {config.vocab_size}).to(torch::kBool);
    DraftVocab vocab;
    vocab.d2t.assign(d2t.data_ptr<int64_t>(), d2t.data_ptr<int64_t>() + d2t.numel());
    auto t2d_u8 = t2d.to(torch::kUInt8);
    vocab.t2d.assign(t2d_u8.data_ptr<uint8_t>(), t2d_u8.data_ptr<uint8_t>() + t2d_u8.numel());
    // d2t must describe exactly the tokens t2d marks, each once.
    int64_t marked = 0;
    for (auto m : vocab.t2d) marked += m ? 1 : 0;
    if (marked != config.draft_vocab_size) throw Error(path, "t2d marks " + std::to_string(marked) + " tokens but draft_vocab_size is " + std::to_string(config.draft_vocab_size));
    for (int64_t i = 0; i < vocab.draftSize(); ++i) {
        const int64_t t = vocab.targetId(i);
        if (t < 0 || t >= config.vocab_size || !vocab.t2d[static_cast<size_t>(t)] || (i > 0 && t <= vocab.targetId(i - 1)))
            throw Error(path, "d2t entry " + std::to_string(i) + " does not match t2d");
    }
    Eagle3Draft draft(config, vocab);
    torch::NoGradGuard no_grad;
    for (auto& item : draft->named_parameters()) {
        auto t = toTensor(file.get(item.key()), item.value().sizes().vec()).to(torch::kFloat32);
        if (!torch::isfinite(t).all().item<bool>()) throw Error(path, "tensor '" + item.key() + "' contains NaN or Inf");
        item.value().copy_(t);
    }
    draft->setEmbeddings(embeddings);
    return draft;
}

}  // namespace wl
