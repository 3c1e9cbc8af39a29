"""The one place the benchmark scripts find data the project does not ship.

``shared_data(name)`` is ``$RAG_SHARED_DATA/name``, by default ``shared/data`` beside this checkout
(``<repo>/../shared/data``), or a path the user gave. When it is missing the script exits with one
line saying what the file is and where to get it (the list is rag.evaluation.shared_data.SOURCES).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from rag.evaluation.shared_data import ENV, describe

DEFAULT_ROOT = Path(__file__).resolve().parents[3] / "shared" / "data"


def shared_data(name: str, given: Path | None = None) -> Path:
    """``given`` if set, else ``name`` in the shared data folder; exits with a clear line when it is missing."""
    if given is not None:
        if given.exists():
            return given
        sys.exit(f"{given} not found ({describe(name)})")
    root = Path(os.environ.get(ENV) or DEFAULT_ROOT)
    if not (root / name).exists():
        sys.exit(f"{root / name} not found ({describe(name)}); set {ENV} to the folder holding it")
    return root / name


def emit(table: str, out: Path | None, filename: str) -> None:
    """Print a result table and, with ``--out``, keep it as ``out/filename``."""
    print(table)
    if out:
        out.mkdir(parents=True, exist_ok=True)
        (out / filename).write_text(table + "\n")


def index_parser(doc: str | None) -> argparse.ArgumentParser:
    """The arguments of a benchmark over an index that bench_scale.py left: its folder, collection and model."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data-dir", type=Path, required=True)
    ap.add_argument("--collection", required=True)
    ap.add_argument("--model", default="wordllama-l2-supercat-256")
    ap.add_argument("--queries", type=int, default=20)
    return ap
