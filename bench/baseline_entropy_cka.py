#!/usr/bin/python3
"""Straightforward numpy baseline for bench_entropy_cka: the same formulas as WaveLab's
streaming analyzer (core/analysis/layer_analyzer.h) on the same deterministic data.

Per prompt of T tokens and each of L states (D features):
  entropy: u = z / ||z||, C_l += u^T u (float64 by default), s_l += sum u;
           at the end C = C_l - s s^T / N, p = eig(C) / tr(C), H = -sum p ln p.
  CKA:     raw rows in minibatches of `batch` tokens: K_l = X_l X_l^T, unbiased HSIC
           (Song et al. 2012) for every pair, summed over minibatches, CKA = H_ab / sqrt(H_aa H_bb).
Data: value(p, l, t, d) = s_d * (u(noise index) + w_l * u(shared index)), exactly as
bench_entropy_cka.cpp generates it (float32, splitmix-style hash), so both see the same bytes.
Prints one JSON object: seconds (statistics only; data generation is timed separately),
entropies, cka, peak RSS."""
import argparse
import json
import resource
import sys
import time

import numpy as np

M64 = np.uint64(0xFFFFFFFFFFFFFFFF)


def hash_uniform(idx, seed):
    """Uniform float32 in [-1, 1) from uint64 indices (same bit operations as the C++)."""
    with np.errstate(over="ignore"):
        h = idx * np.uint64(0x9E3779B97F4A7C15) + np.uint64(seed)
        h ^= h >> np.uint64(29)
        h *= np.uint64(0xBF58476D1CE4E5B9)
        h ^= h >> np.uint64(32)
    return ((h >> np.uint64(40)).astype(np.float32) * np.float32(2.0 ** -23)) - np.float32(1.0)


def prompt_states(p, L, T, D, seed):
    """[L, T, D] float32 for prompt p."""
    t = np.arange(T, dtype=np.uint64)[:, None]
    d = np.arange(D, dtype=np.uint64)[None, :]
    scale = (1.0 / np.sqrt(1.0 + np.arange(D, dtype=np.float64) / 32.0)).astype(np.float32)
    shared = hash_uniform(((np.uint64(p * L) * np.uint64(T)) + t) * np.uint64(D) + d, seed)
    out = np.empty((L, T, D), dtype=np.float32)
    for l in range(L):
        w = np.float32(2.0 * l / L)
        noise = hash_uniform(((np.uint64(p * L + l) * np.uint64(T)) + t) * np.uint64(D) + d, seed)
        out[l] = (noise + w * shared) * scale
    return out


def hsic_unbiased_all(grams, n):
    """grams: [L, n, n] Grams with zeroed diagonals -> [L, L] unbiased HSIC."""
    L = grams.shape[0]
    flat = grams.reshape(L, n * n)
    frob = flat @ flat.T
    row = grams.sum(axis=2)          # [L, n]
    tot = row.sum(axis=1)            # [L]
    cross = row @ row.T
    return (frob + np.outer(tot, tot) / ((n - 1) * (n - 2)) - cross * (2.0 / (n - 2))) / (n * (n - 3))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--states", type=int, default=37)
    ap.add_argument("--dim", type=int, default=2560)
    ap.add_argument("--tokens", type=int, default=16384)
    ap.add_argument("--prompt-tokens", type=int, default=512)
    ap.add_argument("--cka-batch", type=int, default=256)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--dtype", default="float64", help="dtype of the Gram products (float64 or float32)")
    a = ap.parse_args()
    L, D, T, n = a.states, a.dim, a.prompt_tokens, a.cka_batch
    prompts = a.tokens // T
    gdt = np.float64 if a.dtype == "float64" else np.float32
    C = np.zeros((L, D, D), dtype=np.float64)
    S = np.zeros((L, D), dtype=np.float64)
    hsic = np.zeros((L, L), dtype=np.float64)
    N = 0
    gen_s = stat_s = 0.0
    for p in range(prompts):
        t0 = time.perf_counter()
        Z = prompt_states(p, L, T, D, a.seed)
        t1 = time.perf_counter()
        gen_s += t1 - t0
        for l in range(L):
            z = Z[l].astype(gdt)
            u = z / np.linalg.norm(z, axis=1, keepdims=True)
            C[l] += u.T @ u
            S[l] += u.sum(axis=0)
        N += T
        for b0 in range(0, T - n + 1, n):   # prompts are whole multiples of the batch here
            grams = np.empty((L, n, n), dtype=np.float64)
            for l in range(L):
                x = Z[l, b0:b0 + n].astype(gdt)
                k = x @ x.T
                np.fill_diagonal(k, 0.0)
                grams[l] = k
            hsic += hsic_unbiased_all(grams, n)
        stat_s += time.perf_counter() - t1
    t2 = time.perf_counter()
    ent = []
    for l in range(L):
        c = C[l] - np.outer(S[l], S[l]) / N
        ev = np.linalg.eigvalsh(c)
        ev = np.maximum(ev, 0.0)
        pr = ev / ev.sum()
        pr = pr[pr > 0]
        ent.append(float(-(pr * np.log(pr)).sum()))
    dg = np.sqrt(np.diag(hsic))
    cka = hsic / np.outer(dg, dg)
    np.fill_diagonal(cka, 1.0)
    final_s = time.perf_counter() - t2
    json.dump({"seconds": stat_s + final_s, "seconds_stream": stat_s, "seconds_final": final_s,
               "seconds_generate": gen_s, "entropy": ent, "cka": cka.ravel().tolist(),
               "peak_rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
               "numpy": np.__version__, "gram_dtype": a.dtype}, sys.stdout)
    print()


if __name__ == "__main__":
    main()
