#!/usr/bin/env python3
"""Reference scores for the cross-encoder (reranker) golden test.

No package on PyPI ships the weights of a real cross-encoder (ms-marco-MiniLM-L-6-v2,
mmarco-mMiniLMv2-L12-H384-v1) that we could find, so this writes two small cross-encoders with
random weights in the Hugging Face layout, one per head `ai` reads:

- tests/golden/cross-bert/: BertForSequenceClassification (`bert.` encoder, pooler dense+tanh on
  [CLS], `classifier`), token types 0/1, positions from 0;
- tests/golden/cross-roberta/: XLMRobertaForSequenceClassification (`roberta.` encoder, one token
  type, positions from pad_token_id + 1, `classifier.dense` + tanh on <s>, `classifier.out_proj`);

and the score of each (query, passage) pair from a NumPy forward pass written from the BERT paper
and the Hugging Face modeling code (erf GELU, post-LayerNorm), independently of ai's Rust code,
into each folder's scores.json. Tokenized with the `tokenizers` Python package.

Needs: pip install numpy tokenizers
Run:   python3 scripts/cross_golden.py   (rewrites the folders; the seed keeps them the same)
"""
import json
import math
import os
import struct

import numpy as np
from tokenizers import Tokenizer

ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests", "golden")
WORDS = ["the", "cat", "sits", "on", "mat", "dog", "runs", "in", "park", "backup", "tape", "nightly",
         "database", "copy", "where", "does", "sleep", "how", "is", "made", "a", "warm", "garden"]
PAIRS = [
    ("where does the cat sleep", "the cat sits on the warm mat"),
    ("where does the cat sleep", "the dog runs in the park"),
    ("how is the database backup made", "a nightly copy of the database is made on tape"),
    ("how is the database backup made", "the cat sits on the mat in the garden"),
    ("backup", "unknownword backup"),
]
H, HEADS, LAYERS, INTER, POSITIONS = 16, 2, 2, 32, 40


def tokenizer(kind):
    special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"] if kind == "bert" else ["<pad>", "<unk>", "<s>", "</s>"]
    vocab = {w: i for i, w in enumerate(special + WORDS)}
    cls, sep = special[2], special[3]
    if kind == "bert":
        post = {"type": "TemplateProcessing",
                "single": [{"SpecialToken": {"id": cls, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                           {"SpecialToken": {"id": sep, "type_id": 0}}],
                "pair": [{"SpecialToken": {"id": cls, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                         {"SpecialToken": {"id": sep, "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}},
                         {"SpecialToken": {"id": sep, "type_id": 1}}],
                "special_tokens": {t: {"id": t, "ids": [vocab[t]], "tokens": [t]} for t in (cls, sep)}}
    else:
        post = {"type": "TemplateProcessing",
                "single": [{"SpecialToken": {"id": cls, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                           {"SpecialToken": {"id": sep, "type_id": 0}}],
                "pair": [{"SpecialToken": {"id": cls, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                         {"SpecialToken": {"id": sep, "type_id": 0}}, {"SpecialToken": {"id": sep, "type_id": 0}},
                         {"Sequence": {"id": "B", "type_id": 0}}, {"SpecialToken": {"id": sep, "type_id": 0}}],
                "special_tokens": {t: {"id": t, "ids": [vocab[t]], "tokens": [t]} for t in (cls, sep)}}
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [],
            "normalizer": {"type": "Lowercase"}, "pre_tokenizer": {"type": "Whitespace"},
            "post_processor": post, "decoder": None,
            "model": {"type": "WordLevel", "vocab": vocab, "unk_token": special[1]}}, len(vocab)


def weights(kind, vocab, rng):
    p = "bert." if kind == "bert" else "roberta."
    types = 2 if kind == "bert" else 1
    r = lambda *s: (rng.standard_normal(s) * 0.5).astype(np.float32)
    w = {p + "embeddings.word_embeddings.weight": r(vocab, H),
         p + "embeddings.position_embeddings.weight": r(POSITIONS, H),
         p + "embeddings.token_type_embeddings.weight": r(types, H),
         p + "embeddings.LayerNorm.weight": 1 + r(H) * 0.2, p + "embeddings.LayerNorm.bias": r(H) * 0.2}
    for i in range(LAYERS):
        q = f"{p}encoder.layer.{i}."
        for name, (o, n) in {"attention.self.query": (H, H), "attention.self.key": (H, H),
                             "attention.self.value": (H, H), "attention.output.dense": (H, H),
                             "intermediate.dense": (INTER, H), "output.dense": (H, INTER)}.items():
            w[q + name + ".weight"] = r(o, n)
            w[q + name + ".bias"] = r(o) * 0.2
        for name in ("attention.output.LayerNorm", "output.LayerNorm"):
            w[q + name + ".weight"] = 1 + r(H) * 0.2
            w[q + name + ".bias"] = r(H) * 0.2
    if kind == "bert":
        w[p + "pooler.dense.weight"], w[p + "pooler.dense.bias"] = r(H, H), r(H)
        w["classifier.weight"], w["classifier.bias"] = r(1, H), r(1)
    else:
        w["classifier.dense.weight"], w["classifier.dense.bias"] = r(H, H), r(H)
        w["classifier.out_proj.weight"], w["classifier.out_proj.bias"] = r(1, H), r(1)
    return w


def save_safetensors(path, tensors):
    header, data = {}, b""
    for name in sorted(tensors):
        b = np.ascontiguousarray(tensors[name], dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(tensors[name].shape), "data_offsets": [len(data), len(data) + len(b)]}
        data += b
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + data)


def score(kind, w, cfg, ids, types):
    p = "bert." if kind == "bert" else "roberta."
    w = {k: v.astype(np.float64) for k, v in w.items()}
    eps = cfg["layer_norm_eps"]
    offset = cfg["pad_token_id"] + 1 if kind == "roberta" else 0

    def ln(x, name):
        m = x.mean(-1, keepdims=True)
        v = ((x - m) ** 2).mean(-1, keepdims=True)
        return (x - m) / np.sqrt(v + eps) * w[name + ".weight"] + w[name + ".bias"]

    def lin(x, name):
        return x @ w[name + ".weight"].T + w[name + ".bias"]

    n = len(ids)
    x = (w[p + "embeddings.word_embeddings.weight"][ids]
         + w[p + "embeddings.position_embeddings.weight"][np.arange(n) + offset]
         + w[p + "embeddings.token_type_embeddings.weight"][types])
    x = ln(x, p + "embeddings.LayerNorm")
    dh = H // HEADS
    for i in range(LAYERS):
        q = f"{p}encoder.layer.{i}."
        Q, K, V = (lin(x, q + f"attention.self.{m}") for m in ("query", "key", "value"))
        ctx = np.zeros_like(x)
        for hd in range(HEADS):
            s = slice(hd * dh, (hd + 1) * dh)
            a = Q[:, s] @ K[:, s].T / math.sqrt(dh)
            a = np.exp(a - a.max(-1, keepdims=True))
            a /= a.sum(-1, keepdims=True)
            ctx[:, s] = a @ V[:, s]
        x = ln(lin(ctx, q + "attention.output.dense") + x, q + "attention.output.LayerNorm")
        u = lin(x, q + "intermediate.dense")
        u = 0.5 * u * (1 + np.vectorize(math.erf)(u / math.sqrt(2)))
        x = ln(lin(u, q + "output.dense") + x, q + "output.LayerNorm")
    head = (p + "pooler.dense", "classifier") if kind == "bert" else ("classifier.dense", "classifier.out_proj")
    return float(lin(np.tanh(lin(x[0], head[0])), head[1])[0])


def main():
    rng = np.random.default_rng(23)
    for kind in ("bert", "roberta"):
        d = os.path.join(ROOT, f"cross-{kind}")
        os.makedirs(d, exist_ok=True)
        tok_json, vocab = tokenizer(kind)
        cfg = {"architectures": ["BertForSequenceClassification" if kind == "bert" else "XLMRobertaForSequenceClassification"],
               "model_type": "bert" if kind == "bert" else "xlm-roberta", "hidden_size": H,
               "num_attention_heads": HEADS, "num_hidden_layers": LAYERS, "intermediate_size": INTER,
               "max_position_embeddings": POSITIONS, "type_vocab_size": 2 if kind == "bert" else 1,
               "hidden_act": "gelu", "layer_norm_eps": 1e-12 if kind == "bert" else 1e-5,
               "pad_token_id": 0 if kind == "bert" else 1, "vocab_size": vocab, "num_labels": 1}
        w = weights(kind, vocab, rng)
        with open(os.path.join(d, "tokenizer.json"), "w") as f:
            json.dump(tok_json, f)
        with open(os.path.join(d, "config.json"), "w") as f:
            json.dump(cfg, f, indent=1)
        save_safetensors(os.path.join(d, "model.safetensors"), w)
        tok = Tokenizer.from_file(os.path.join(d, "tokenizer.json"))
        out = []
        for qy, ps in PAIRS:
            e = tok.encode(qy, ps)
            types = [0] * len(e.ids) if kind == "roberta" else e.type_ids
            out.append({"query": qy, "passage": ps, "ids": e.ids, "score": score(kind, w, cfg, e.ids, types)})
        with open(os.path.join(d, "scores.json"), "w") as f:
            json.dump({"tolerance": 1e-4, "pairs": out}, f, indent=1)
        print(kind, [round(o["score"], 4) for o in out])


if __name__ == "__main__":
    main()
