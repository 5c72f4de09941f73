#!/usr/bin/python3
"""Independent reference for Hugging Face BPE tokenizer.json files: byte-level (GPT-2 / Qwen2 /
Qwen3 / Llama-3) and SentencePiece-style with "▁" and <0xNN> byte fallback, used by tests/test_tokenizer_hf_bpe.cpp. It shares no code with WaveLab:
the pre-tokenizer regex from tokenizer.json runs on Python's `re`, with \\p{L}, \\p{N} and \\s
expanded into explicit character classes built from `unicodedata`; BPE is GPT-2's original
loop (merge every occurrence of the lowest-ranked pair until none is left).

usage: hf_bpe_reference.py TOKENIZER_JSON INPUT_JSON OUTPUT_JSON
       hf_bpe_reference.py --split gpt2|qwen2|llama3 INPUT_JSON OUTPUT_JSON
INPUT_JSON: a list of strings; OUTPUT_JSON: a list of id lists (or of piece lists)."""
import json
import re
import sys
import unicodedata

WHITE_SPACE = [0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0x85, 0xA0, 0x1680] + list(range(0x2000, 0x200B)) + \
    [0x2028, 0x2029, 0x202F, 0x205F, 0x3000]


def class_body(pred):
    parts, start, prev = [], None, None
    for cp in list(range(0x110000)) + [None]:
        ok = cp is not None and pred(cp)
        if ok and start is None:
            start = cp
        if not ok and start is not None:
            parts.append('\\U%08X' % start if start == prev else '\\U%08X-\\U%08X' % (start, prev))
            start = None
        prev = cp
    return ''.join(parts)


def expand(pattern):
    letters = class_body(lambda cp: unicodedata.category(chr(cp)).startswith('L'))
    numbers = class_body(lambda cp: unicodedata.category(chr(cp)).startswith('N'))
    spaces = ''.join('\\U%08X' % cp for cp in WHITE_SPACE)
    out, i, in_class = [], 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == '\\':
            token = pattern[i:i + 5] if pattern.startswith('\\p{', i) else pattern[i:i + 2]
            body = {'\\p{L}': letters, '\\p{N}': numbers, '\\s': spaces}.get(token)
            if body is not None:
                out.append(body if in_class else '[' + body + ']')
            elif token == '\\S':
                assert not in_class
                out.append('[^' + spaces + ']')
            else:
                out.append(token)
            i += len(token)
            continue
        if c == '[' and not in_class:
            in_class = True
        elif c == ']' and in_class:
            in_class = False
        out.append(c)
        i += 1
    return re.compile(''.join(out))


def bytes_to_unicode():
    bs = list(range(ord('!'), ord('~') + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return {b: chr(c) for b, c in zip(bs, cs)}


class Reference:
    GPT2 = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"

    def __init__(self, path):
        j = json.load(open(path, encoding='utf-8'))
        model = j['model']
        self.vocab = dict(model['vocab'])
        self.ranks = {}
        for rank, m in enumerate(model['merges']):
            pair = tuple(m.split(' ', 1)) if isinstance(m, str) else tuple(m)
            self.ranks.setdefault(pair, rank)
        self.ignore_merges = model.get('ignore_merges', False)
        self.added = {t['content']: t['id'] for t in j['added_tokens']}
        self.vocab.update(self.added)
        # Normalizers: NFC, or SentencePiece-style Prepend("▁") + Replace(" " -> "▁").
        norm = j.get('normalizer') or {}
        self.normalizers = norm['normalizers'] if norm.get('type') == 'Sequence' else ([norm] if norm else [])
        self.byte_fallback = model.get('byte_fallback', False)
        pre = j['pre_tokenizer'] or {'type': 'Sequence', 'pretokenizers': []}
        steps = pre['pretokenizers'] if pre['type'] == 'Sequence' else [pre]
        self.regex = None
        self.byte_level = False
        for s in steps:
            if s['type'] == 'Split':
                self.regex = expand(s['pattern']['Regex'])
            elif s['type'] == 'ByteLevel':
                self.byte_level = True
                if s.get('use_regex', True):
                    self.regex = expand(self.GPT2)
        self.byte_map = bytes_to_unicode()
        alternatives = sorted(self.added, key=len, reverse=True)
        self.added_re = re.compile('(' + '|'.join(re.escape(a) for a in alternatives) + ')')

    def bpe(self, word):
        if self.ignore_merges and word in self.vocab:
            return [word]
        return self.bpe_symbols(list(word))

    def bpe_symbols(self, parts):
        while len(parts) > 1:
            pairs = {(parts[i], parts[i + 1]) for i in range(len(parts) - 1)}
            best = min(pairs, key=lambda p: self.ranks.get(p, float('inf')))
            if best not in self.ranks:
                break
            merged, i = [], 0
            while i < len(parts):
                if i + 1 < len(parts) and (parts[i], parts[i + 1]) == best:
                    merged.append(parts[i] + parts[i + 1])
                    i += 2
                else:
                    merged.append(parts[i])
                    i += 1
            parts = merged
        return parts

    def encode(self, text):
        ids = []
        for k, segment in enumerate(self.added_re.split(text)):
            if k % 2 == 1:
                ids.append(self.added[segment])
                continue
            for n in self.normalizers:
                if n['type'] == 'NFC':
                    segment = unicodedata.normalize('NFC', segment)
                elif n['type'] == 'Prepend':
                    segment = n['prepend'] + segment if segment else segment
                elif n['type'] == 'Replace':
                    segment = segment.replace(n['pattern']['String'], n['content'])
                else:
                    raise ValueError('normalizer ' + n['type'])
            if not segment:
                continue
            words = [m.group(0) for m in self.regex.finditer(segment)] if self.regex else [segment]
            for word in words:
                if self.byte_level:
                    word = ''.join(self.byte_map[b] for b in word.encode('utf-8'))
                    ids.extend(self.vocab[p] for p in self.bpe(word))
                    continue
                # Characters outside the vocabulary become <0xNN> byte tokens before merging.
                symbols = []
                for ch in word:
                    if ch in self.vocab and ch not in self.added:
                        symbols.append(ch)
                    else:
                        assert self.byte_fallback, 'character outside the vocabulary'
                        symbols.extend('<0x%02X>' % b for b in ch.encode('utf-8'))
                ids.extend(self.vocab[p] for p in self.bpe_symbols(symbols))
        return ids


PATTERNS = {
    'gpt2': Reference.GPT2,
    'qwen2': r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
    'llama3': r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+",
}


def split_main(name, inp, outp):
    """--split NAME: the pre-tokenizer pieces of each text, as lists of strings."""
    regex = expand(PATTERNS[name])
    texts = json.load(open(inp, encoding='utf-8'))
    json.dump([[m.group(0) for m in regex.finditer(t)] for t in texts], open(outp, 'w'))


def main():
    if sys.argv[1] == '--split':
        split_main(sys.argv[2], sys.argv[3], sys.argv[4])
        return
    ref = Reference(sys.argv[1])
    texts = json.load(open(sys.argv[2], encoding='utf-8'))
    json.dump([ref.encode(t) for t in texts], open(sys.argv[3], 'w'))


if __name__ == '__main__':
    main()
