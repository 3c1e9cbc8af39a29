"""Can a head on the LLM's hidden state judge stance better than the shipped 8-feature head?

    python -m rag.evaluation.bench hidden-probe [--dev 150] [--train 450]

The claim-check issue suggests a small head on features the embedded models already compute, such as
llama.cpp embeddings. This probe embeds the stance judge's exact prompt (its chat template applied by the
server's ``/apply-template``; what :meth:`rag.answering.stance.StanceJudge.model_probabilities` sends) with
llama.cpp's ``/embedding`` and last-token pooling: the final hidden state from which the model's next word,
"yes", "no" or "not", is read. A softmax regression is fitted on the SciFact claim pairs of the stance split's
train half (eval/bench/_stance.py; gold abstract SUPPORT / CONTRADICT, a BM25 neighbour "not stated") and
scored on the first ``--dev`` claim pairs of the dev half, beside the shipped head on the same pairs. Two
heads: PCA to 8-128 dimensions then the product's :func:`rag.answering.stance.fit_head`, and the full 1,536
dimensions with L2 (accelerated gradient descent); each's size and penalty chosen by 5-fold cross-validation
on train (balanced accuracy), never on dev.

The server is a second llama-server on the same GGUF started with ``--embeddings --pooling last`` (the built
native binary, else xllamacpp in this process); the shipped head's features come from the product's judge.
Hidden states are kept in ~/.cache/rag-abstracts/bench-stance/hidden-states.jsonl (one line per pair), so a
rerun embeds nothing it embedded before.
"""

from __future__ import annotations

import argparse
import itertools
import json
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any

import numpy as np

from rag import Assistant, get_settings
from rag.answering import stance as S
from rag.evaluation.bench._shared import shared_data
from rag.evaluation.bench._stance import Pair, pairs
from rag.evaluation.bench.stance_train import judge_for, markdown, pair_features, scores
from rag.evaluation.bench.suite import Output

NEEDS_LLM = True
CACHE = Path.home() / ".cache" / "rag-abstracts" / "bench-stance" / "hidden-states.jsonl"


def add_arguments(ap: argparse._ArgumentGroup) -> None:
    ap.add_argument("--dev", type=int, default=150, help="dev claim pairs scored (default 150)")
    ap.add_argument("--train", type=int, default=450, help="train claim pairs fitted on (default 450)")
    ap.add_argument("--port", type=int, default=18977, help="port of the embedding server (default 18977)")


class _Embedder:
    """A llama-server on the default GGUF serving last-token embeddings of whole prompts."""

    def __init__(self, settings: Any, port: int) -> None:
        from rag.models.llm_child import http_status
        from rag.models.local_llm import ensure_model
        from rag.models.native_llm import find_server

        cache = Path(settings.cache_dir).expanduser()
        gguf = ensure_model(settings.llm.model, cache)
        self.url = f"http://127.0.0.1:{port}"
        self.proc: subprocess.Popen[bytes] | None = None
        self.server: Any = None
        binary = find_server(cache)
        if binary is not None:
            cmd = [str(binary), "--model", str(gguf), "--host", "127.0.0.1", "--port", str(port), "--threads", "2"]
            cmd += ["--threads-batch", "2", "--ctx-size", "4096", "--jinja", "--parallel", "1"]
            self.proc = subprocess.Popen(
                [*cmd, "--embeddings", "--pooling", "last"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
        else:
            import xllamacpp

            p = xllamacpp.CommonParams()
            p.model.path = str(gguf)
            p.cpuparams.n_threads = p.cpuparams_batch.n_threads = 2
            p.n_ctx, p.n_parallel, p.embedding, p.use_jinja = 4096, 1, True, True
            p.pooling_type = xllamacpp.llama_pooling_type.LLAMA_POOLING_TYPE_LAST
            p.hostnames, p.port = ["127.0.0.1"], port
            self.server = xllamacpp.Server(p)
        deadline = time.monotonic() + 120
        while http_status(f"{self.url}/health", 2.0) != 200:
            if time.monotonic() > deadline or (self.proc is not None and self.proc.poll() is not None):
                self.stop()
                raise SystemExit(f"the embedding server at {self.url} did not start")
            time.sleep(0.5)

    def post(self, path: str, body: dict[str, Any]) -> Any:
        req = urllib.request.Request(
            self.url + path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
        )
        with urllib.request.urlopen(req, timeout=600) as r:
            return json.loads(r.read())

    def hidden_state(self, messages: list[Any]) -> list[float]:
        chat = [{"role": "system" if m.type == "system" else "user", "content": str(m.content)} for m in messages]
        prompt = self.post("/apply-template", {"messages": chat})["prompt"]
        r = self.post("/embedding", {"content": prompt})
        e = r[0]["embedding"] if isinstance(r, list) else r["embedding"]
        return list(e[-1] if isinstance(e[0], list) else e)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(10)
        self.server = None


def _collect(args: argparse.Namespace) -> list[dict[str, Any]]:
    """One record per pair: split, label, hidden state, and (dev) the shipped head's features; from CACHE."""
    shared = shared_data("scifact").parent
    want: list[tuple[str, Pair]] = [("dev", p) for p in pairs(shared, "dev", 0) if p.kind == "claim"][: args.dev]
    want += [("train", p) for p in pairs(shared, "train", 0) if p.kind == "claim"][: args.train]
    CACHE.parent.mkdir(parents=True, exist_ok=True)
    have = {}
    if CACHE.exists():
        for line in CACHE.read_text(encoding="utf-8").splitlines():
            r = json.loads(line)
            have[(r["split"], r["key"], r["title"])] = r
    missing = [(s, p) for s, p in want if (s, p.key, p.title) not in have]
    if missing:
        a = Assistant.from_settings(get_settings(data_dir=args.data_dir) if args.data_dir else get_settings())
        judge = judge_for(a)
        emb = _Embedder(a.settings, args.port)
        try:
            with CACHE.open("a", encoding="utf-8") as f:
                for i, (split, p) in enumerate(missing, 1):
                    ex = S.excerpt_of(judge.scorer, p.statement, p.abstract, sentences=judge.sentences)
                    h = emb.hidden_state(judge.messages(p.statement, p.kind, p.title, ex))
                    rec: dict[str, Any] = {"split": split, "key": p.key, "title": p.title, "source": p.source}
                    rec |= {"label": p.label, "h": [round(v, 5) for v in h]}
                    if split == "dev":
                        rec["features"] = [float(v) for v in pair_features(judge, p, ex)[0]]
                    f.write(json.dumps(rec) + "\n")
                    f.flush()
                    have[(split, p.key, p.title)] = rec
                    if i % 25 == 0:
                        print(f"  embedded {i}/{len(missing)}", flush=True)
        finally:
            emb.stop()
    return [have[(s, p.key, p.title)] for s, p in want]


def _softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=1, keepdims=True)
    p = np.exp(z)
    return p / p.sum(axis=1, keepdims=True)


def _fit_pca(x: np.ndarray, y: np.ndarray, dims: int, l2: float) -> Any:
    mu, sd = x.mean(axis=0), x.std(axis=0) + 1e-6
    proj = np.linalg.svd((x - mu) / sd, full_matrices=False)[2][:dims].T
    w, b, m2, s2 = S.fit_head(((x - mu) / sd) @ proj, y, l2=l2, steps=2000, lr=0.3)
    return lambda x2: _softmax(((((x2 - mu) / sd) @ proj - m2) / s2) @ w.T + b)


def _fit_full(x: np.ndarray, y: np.ndarray, lam: float, iters: int = 1000) -> Any:
    """Class-balanced softmax regression with L2 ``lam`` on all dimensions, by Nesterov-accelerated gradient
    descent with the step of its Lipschitz bound (fit_head's fixed step diverges at this size)."""
    mu, sd = x.mean(axis=0), x.std(axis=0) + 1e-6
    z = (x - mu) / sd
    n, d = z.shape
    cw = (n / (3 * np.maximum(np.bincount(y, minlength=3), 1)))[y]
    onehot = np.eye(3)[y]
    lr = 1.0 / (0.5 * np.linalg.norm(z, 2) ** 2 / n * cw.max() + lam)
    w, b = np.zeros((d, 3)), np.zeros(3)
    vw, vb, t = w.copy(), b.copy(), 1.0
    for _ in range(iters):
        g = (_softmax(z @ vw + vb) - onehot) * cw[:, None] / n
        w2, b2 = vw - lr * (z.T @ g + lam * vw), vb - lr * g.sum(axis=0)
        t2 = (1 + np.sqrt(1 + 4 * t * t)) / 2
        vw, vb = w2 + (t - 1) / t2 * (w2 - w), b2 + (t - 1) / t2 * (b2 - b)
        w, b, t = w2, b2, t2
    return lambda x2: _softmax(((x2 - mu) / sd) @ w + b)


def _balanced(pred: np.ndarray, y: np.ndarray) -> float:
    """Mean recall of the three stances (a stance absent from ``y`` counts 0)."""
    return float(np.mean([(pred[y == k] == k).mean() if (y == k).any() else 0.0 for k in range(3)]))


def _scores(prob: np.ndarray, y: np.ndarray) -> dict[str, Any]:
    """stance-train's scores, the balanced accuracy, and the claim check's error rates: a stance taken for its
    opposite, and a not-stated pair decided."""
    pred = prob.argmax(axis=1)
    out = scores(prob, y) | {"balanced accuracy": round(_balanced(pred, y), 3)}
    for name, truth, said in (("supports called refutes", 0, 1), ("refutes called supports", 1, 0)):
        out[name] = round(float((pred[y == truth] == said).mean()), 2) if (y == truth).any() else None
    out["not stated decided"] = round(float((pred[y == 2] != 2).mean()), 2) if (y == 2).any() else None
    return out


def _chosen(x: np.ndarray, y: np.ndarray, grid: list[tuple[Any, ...]], fit: Any) -> tuple[float, tuple[Any, ...]]:
    folds = np.random.default_rng(0).permutation(len(y)) % 5
    best: tuple[float, tuple[Any, ...]] | None = None
    for params in grid:
        pred = np.zeros(len(y), dtype=int)
        for f in range(5):
            m = folds != f
            pred[~m] = fit(x[m], y[m], *params)(x[~m]).argmax(axis=1)
        score = _balanced(pred, y)
        if best is None or score > best[0]:
            best = (score, params)
    assert best is not None
    return best


def run(args: argparse.Namespace, out: Output) -> dict[str, Any]:
    recs = _collect(args)
    dev = [r for r in recs if r["split"] == "dev"]
    train = [r for r in recs if r["split"] == "train"]
    xd, yd = np.asarray([r["h"] for r in dev]), np.asarray([r["label"] for r in dev])
    xt, yt = np.asarray([r["h"] for r in train]), np.asarray([r["label"] for r in train])
    figures: dict[str, Any] = {"train pairs": len(train), "train labels": np.bincount(yt, minlength=3).tolist()}
    head = S.bundled_head()
    if head is not None:
        shipped = [[head.probabilities("claim", np.asarray(r["features"]))[s] for s in S.STANCES] for r in dev]
        figures["shipped head (8 features)"] = _scores(np.asarray(shipped), yd)
    grid_pca = [(d, l2) for d, l2 in itertools.product((8, 16, 32, 64, 128), (1.0, 10.0, 100.0)) if d < len(yt) * 0.8]
    cv, params = _chosen(xt, yt, grid_pca, _fit_pca)
    figures[f"hidden state, PCA {params[0]}, l2 {params[1]:g} (cv {cv:.3f})"] = _scores(
        _fit_pca(xt, yt, *params)(xd), yd
    )
    cv, params = _chosen(xt, yt, [(lam,) for lam in (0.01, 0.1, 1.0, 3.0)], _fit_full)
    figures[f"hidden state, 1536 dims, L2 {params[0]:g} (cv {cv:.3f})"] = _scores(_fit_full(xt, yt, *params)(xd), yd)
    cols = ["accuracy", "balanced accuracy", "recall", "supports called refutes", "refutes called supports"]
    cols += ["not stated decided", "share ratio"]

    def cell(value: Any) -> Any:
        return " / ".join(f"{v:.2f}" for v in value.values()) if isinstance(value, dict) else value

    rows = [[name, *(cell(f[c]) for c in cols)] for name, f in figures.items() if isinstance(f, dict)]
    head_row = ["head", *(c if c != "recall" else "recall supports / refutes / not stated" for c in cols)]
    out.table(f"SciFact dev claim pairs, trained on {len(train)} train pairs", markdown(head_row, rows))
    return figures
