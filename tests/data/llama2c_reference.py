#!/usr/bin/python3
"""Independent reference for llama2.c's tokenizer (a line-by-line re-reading of run.c's
`encode` and `decode`, naive O(n^2) merge loop), used by tests/test_tokenizer_llama2c.cpp.

usage: llama2c_reference.py TOKENIZER_BIN INPUT_JSON OUTPUT_JSON
INPUT_JSON is a list of {"text": str, "bos": bool}; OUTPUT_JSON gets a list of id lists."""
import json
import struct
import sys


def load(path):
    data = open(path, 'rb').read()
    (max_len,) = struct.unpack_from('<i', data, 0)
    pos, vocab, scores = 4, [], []
    while pos < len(data):
        score, length = struct.unpack_from('<fi', data, pos)
        pos += 8
        vocab.append(data[pos:pos + length])
        scores.append(score)
        pos += length
    return vocab, scores


def encode(text, bos, vocab, scores):
    lookup = {}
    for i, piece in enumerate(vocab):
        lookup.setdefault(piece, i)
    raw = text.encode('utf-8')
    tokens = [1] if bos else []
    if raw:
        tokens.append(lookup[b' '])
    # One code point at a time (at most 4 bytes), unknown code points as byte tokens + 3.
    i = 0
    while i < len(raw):
        j = i + 1
        while j < len(raw) and (raw[j] & 0xC0) == 0x80 and j - i < 4:
            j += 1
        chunk = raw[i:j]
        if chunk in lookup:
            tokens.append(lookup[chunk])
        else:
            tokens.extend(b + 3 for b in chunk)
        i = j
    while True:
        best_score, best_id, best_idx = -1e10, -1, -1
        for k in range(len(tokens) - 1):
            merged = vocab[tokens[k]] + vocab[tokens[k + 1]]
            tid = lookup.get(merged, -1)
            if tid != -1 and scores[tid] > best_score:
                best_score, best_id, best_idx = scores[tid], tid, k
        if best_idx == -1:
            break
        tokens[best_idx:best_idx + 2] = [best_id]
    return tokens


def main():
    vocab, scores = load(sys.argv[1])
    cases = json.load(open(sys.argv[2], encoding='utf-8'))
    out = [encode(c['text'], c['bos'], vocab, scores) for c in cases]
    json.dump(out, open(sys.argv[3], 'w'))


if __name__ == '__main__':
    main()
