#!/usr/bin/env python3
"""Writes the fuzz seed corpora into fuzz/corpus/<target>/ (small, derived files only; the
shared models stay outside the repo). Run once; scripts/fuzz uses the result. Pure stdlib."""
import json
import os
import struct
import sys

here = os.path.dirname(os.path.abspath(__file__))
models = os.environ.get("WAVELAB_MODELS_DIR", os.path.join(here, "..", "..", "shared", "models"))
gen = os.path.join(here, "..", "tests", "data", "generated")


def out(target, name, data):
    d = os.path.join(here, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


# --- safetensors: a few small valid files (several dtypes, metadata, empty tensor) --------
def safetensors(tensors, metadata=None):
    header, blobs, off = {}, [], 0
    for name, dtype, shape, raw in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [off, off + len(raw)]}
        blobs.append(raw)
        off += len(raw)
    if metadata:
        header["__metadata__"] = metadata
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    return struct.pack("<Q", len(h)) + h + b"".join(blobs)


out("safetensors", "f32_2x3", safetensors([("w", "F32", [2, 3], struct.pack("<6f", *range(6)))]))
out("safetensors", "mixed", safetensors([
    ("a", "F64", [2], struct.pack("<2d", 1.5, -2)),
    ("b", "BF16", [2, 2], struct.pack("<4H", 0x3F80, 0x4000, 0, 0xBF80)),
    ("c", "I64", [1], struct.pack("<q", 7)),
    ("d", "U8", [3], b"xyz"),
    ("e", "BOOL", [0], b""),
], {"format": "pt", "note": "seed"}))
out("safetensors", "f16_scalar", safetensors([("s", "F16", [], struct.pack("<H", 0x3C00))]))

# --- config.json: Qwen3-0.6B, Llama-3.1-8B (rope_scaling), Mistral, Qwen2 ------------------
qwen3 = {"architectures": ["Qwen3ForCausalLM"], "hidden_size": 1024, "intermediate_size": 3072,
         "num_hidden_layers": 28, "num_attention_heads": 16, "num_key_value_heads": 8, "head_dim": 128,
         "vocab_size": 151936, "max_position_embeddings": 40960, "rms_norm_eps": 1e-6,
         "rope_theta": 1000000, "tie_word_embeddings": True, "torch_dtype": "bfloat16",
         "bos_token_id": 151643, "eos_token_id": 151645, "model_type": "qwen3", "rope_scaling": None,
         "sliding_window": None, "use_sliding_window": False, "attention_bias": False}
llama = {"architectures": ["LlamaForCausalLM"], "hidden_size": 4096, "intermediate_size": 14336,
         "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 128256,
         "max_position_embeddings": 131072, "rms_norm_eps": 1e-5, "rope_theta": 500000.0,
         "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                          "original_max_position_embeddings": 8192, "rope_type": "llama3"},
         "tie_word_embeddings": False, "torch_dtype": "bfloat16", "bos_token_id": 128000,
         "eos_token_id": [128001, 128008, 128009]}
mistral = {"architectures": ["MistralForCausalLM"], "hidden_size": 4096, "intermediate_size": 14336,
           "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "vocab_size": 32000,
           "max_position_embeddings": 32768, "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
           "sliding_window": 4096, "torch_dtype": "bfloat16"}
qwen2 = {"architectures": ["Qwen2ForCausalLM"], "hidden_size": 896, "intermediate_size": 4864,
         "num_hidden_layers": 24, "num_attention_heads": 14, "num_key_value_heads": 2, "vocab_size": 151936,
         "max_position_embeddings": 32768, "rms_norm_eps": 1e-6, "rope_theta": 1000000.0,
         "tie_word_embeddings": True, "torch_dtype": "bfloat16"}
for name, cfg in [("qwen3", qwen3), ("llama31", llama), ("mistral", mistral), ("qwen2", qwen2)]:
    out("hf_config", name + ".json", json.dumps(cfg, indent=1))

# --- llama2.c checkpoints: a tiny exact-size one, and stories260K's 28-byte header ---------
def llama2c(dim, hidden, layers, heads, kv, vocab, seq):
    head = dim // heads
    floats = (abs(vocab) * dim + layers * dim + layers * dim * dim * 2 + 2 * layers * kv * head * dim
              + layers * dim + 3 * layers * hidden * dim + dim + seq * head)
    if vocab < 0:
        floats += abs(vocab) * dim
    return struct.pack("<7i", dim, hidden, layers, heads, kv, vocab, seq) + b"\0" * (4 * floats)


out("llama2c_header", "tiny_tied", llama2c(8, 16, 1, 2, 2, 16, 8))
out("llama2c_header", "tiny_untied", llama2c(8, 12, 2, 4, 2, -10, 4))
s260 = os.path.join(models, "stories260K", "stories260K.bin")
if os.path.exists(s260):
    with open(s260, "rb") as f:
        out("llama2c_header", "stories260K_header_only", f.read(28))

# --- llama2.c tokenizer: the first 300 tokens of tok512.bin, and a synthetic 259+ one ---------
tok = os.path.join(models, "stories260K", "tok512.bin")
if os.path.exists(tok):
    with open(tok, "rb") as f:
        raw = f.read()
    pos, n = 4, 0
    while pos < len(raw) and n < 300:
        length = struct.unpack_from("<i", raw, pos + 4)[0]
        pos += 8 + length
        n += 1
    out("llama2c_tokenizer", "tok512_first300", raw[:pos])
pieces = ["<unk>", "<s>", "</s>"] + ["<0x%02X>" % b for b in range(256)] + [" ", "a", "b", "ab", " ab", "on", "ce"]
blob = struct.pack("<i", 8) + b"".join(struct.pack("<fi", -i / 10.0, len(p.encode())) + p.encode()
                                       for i, p in enumerate(pieces))
out("llama2c_tokenizer", "synthetic", blob)

# --- tokenizer.json: Qwen3 and Llama-2 files with the vocab cut to a few hundred entries -----
def shrink_tokenizer_json(src, keep):
    with open(src, encoding="utf-8") as f:
        j = json.load(f)
    vocab = j["model"]["vocab"]
    kept = {t: i for t, i in vocab.items() if i < keep}
    j["model"]["vocab"] = kept
    merges = []
    for m in j["model"].get("merges", []):
        a, b = m.split(" ", 1) if isinstance(m, str) else m
        if a in kept and b in kept and (a + b) in kept:
            merges.append(m)
    j["model"]["merges"] = merges
    j["added_tokens"] = [t for t in j.get("added_tokens", [])][:8]
    return json.dumps(j, ensure_ascii=False)


for name, sub, keep in [("qwen3", "tokenizer-qwen3", 400), ("llama2", "tokenizer-llama2", 400)]:
    src = os.path.join(gen, sub, "models", "tokenizer.json")
    if os.path.exists(src):
        out("tokenizer_json", name + "_small.json", shrink_tokenizer_json(src, keep))
    else:
        print("make_seeds: %s missing (scripts/fetch-test-data)" % src, file=sys.stderr)

# --- SentencePiece .model: Llama-2's model with only its first 400 pieces ---------------------
def varint(buf, pos):
    v, shift = 0, 0
    while True:
        b = buf[pos]
        pos += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if b < 0x80:
            return v, pos


spm = os.path.join(models, "llama2-tokenizer", "tokenizer.model")
if os.path.exists(spm):
    with open(spm, "rb") as f:
        raw = f.read()
    pos, kept, pieces = 0, [], 0
    while pos < len(raw):
        start = pos
        key, pos = varint(raw, pos)
        field, wire = key >> 3, key & 7
        if wire == 2:
            length, pos = varint(raw, pos)
            pos += length
        elif wire == 0:
            _, pos = varint(raw, pos)
        elif wire == 5:
            pos += 4
        elif wire == 1:
            pos += 8
        else:
            raise SystemExit("unexpected wire type %d" % wire)
        if field == 1:
            pieces += 1
            if pieces > 400:
                continue
        kept.append(raw[start:pos])
    out("sentencepiece", "llama2_first400.model", b"".join(kept))

# --- calibration sets: text, JSONL, ShareGPT ------------------------------------------------
out("calibration", "text.txt", "Once upon a time there was a cat.\nThe sky is blue.\n\n\xc3\xbcnic\xc3\xb6de line\n")
out("calibration", "prompts.jsonl", '{"text": "hello"}\n{"prompt": "world"}\n')
out("calibration", "sharegpt.json", json.dumps([{"conversations": [
    {"from": "system", "value": "Be brief."}, {"from": "human", "value": "Hi?"}, {"from": "gpt", "value": "Hello."}]}]))

# --- SpecForge console output: tqdm redraws, epoch summaries, eval, the streaming variant ----
log = ["W1203 12:00:01.000 torch/distributed/run.py: Setting OMP_NUM_THREADS environment variable "
       "for each process to be 1\r\n"]
for e in (1, 2):
    for n in range(1, 5):
        log.append("\rTraining Epoch %d:  %d%%|%s%s| %d/4 [00:0%d<00:0%d,  1.90it/s, loss=%.2f, acc=0.%d0]"
                   % (e - 1, 25 * n, "\u2588" * n * 2, " " * (8 - 2 * n), n, n, 4 - n, 2.0 - 0.1 * n, n))
    log.append("\n")
    for i, a in enumerate((0.61, 0.42, 0.30)):
        log.append("Train Epoch [%d/2], position %d,  Acc: %.2f\n" % (e, i, a))
    for i, l in enumerate((1.25, 1.75, 2.5)):
        log.append("Train Epoch [%d/2], position %d, pLoss: %.2f\n" % (e, i, l))
    log.append("\x1b[A\rEvaluating Epoch %d: 100%%|\u2588\u2588| 2/2 [00:00<00:00, 9.1it/s]\n" % (e - 1))
    log.append("Eval Epoch [%d/2], position 0,  Acc: 0.25\nEval Epoch [%d/2], position 0, pLoss: nan\n" % (e, e))
log.append("Train Step [40], position 0,  Acc: 0.70\nTrain Step [40], position 0, pLoss: 1.00\n"
           "[Streaming] One epoch finished. Checking for new data...\n")
out("specforge_log", "two_epochs.log", "".join(log))
print("seeds written to", os.path.join(here, "corpus"))
