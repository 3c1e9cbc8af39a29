"""Benchmark data the project does not ship: where it is looked for, what it is, where to get it.

The folder is given explicitly (``--data``) or by ``RAG_SHARED_DATA``; nothing here guesses from
where the package is installed. The benchmark scripts in the repository (eval/bench/) default to
``shared/data`` beside the checkout. A missing file raises :class:`~rag.ConfigError` naming the
file, what it is and where to get it.
"""

from __future__ import annotations

import os
from pathlib import Path

from rag import ConfigError

ENV = "RAG_SHARED_DATA"

# top-level name in the shared data folder -> what it is and where to get it
SOURCES = {
    "ml_abstracts.jsonl.gz": (
        "87,504 ML/AI/robotics conference abstracts (JSONL: id, venue, year, title, abstract), collected from "
        "public conference pages by the paperlists project (https://github.com/papercopilot/paperlists); "
        "it has no licence, so it is never shipped"
    ),
    "scifact": (
        "the BEIR SciFact data (corpus.jsonl.gz, qrels/train.tsv, and queries_train.jsonl: the train queries "
        "of queries.jsonl) from https://public.ukp.informatik.tu-darmstadt.de/thakur/BEIR/datasets/scifact.zip"
    ),
    "pubmedqa": (
        "PubMedQA PQA-L, expert-labelled: pqal_dev.json holds the 500 questions of data/ori_pqal.json outside "
        "its test set, from https://github.com/pubmedqa/pubmedqa (MIT)"
    ),
}


def describe(name: str) -> str:
    """What the shared file or folder ``name`` (or the one it lies in) is and where to get it."""
    top = Path(name).parts[0]
    return f"{top} is {SOURCES.get(top, 'benchmark data')}"


def shared_data(name: str, root: str | Path | None = None) -> Path:
    """``root / name`` (``root`` defaults to ``$RAG_SHARED_DATA``), checked to exist.

    ``name`` is a path inside the folder, e.g. ``"scifact"`` or ``"pubmedqa/pqal_dev.json"``.
    """
    top, what = Path(name).parts[0], describe(name)
    if root is None:
        root = os.environ.get(ENV)
        if not root:
            raise ConfigError(f"{name} not found: set {ENV} to the folder holding {top} ({what})")
        hint = f"; set {ENV} to the folder holding {top}"
    else:
        hint = f"; point --data or {ENV} at the folder holding {top}"
    path = Path(root) / name
    if not path.exists():
        raise ConfigError(f"{path} not found ({what}){hint}")
    return path
