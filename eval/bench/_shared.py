"""What several benchmarks share: data the project does not ship, an index another benchmark left, children.

``shared_data(name)`` is ``$RAG_SHARED_DATA/name`` (the runner's ``--shared-data`` sets it), by default
``shared/data`` beside this checkout (``<repo>/../shared/data``), or a path the user gave. When it is
missing the benchmark stops with one line saying what the file is and where to get it (the list is
rag.evaluation.shared_data.SOURCES).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from rag.evaluation.bench.suite import ROOT, BenchError
from rag.evaluation.shared_data import ENV, describe

DEFAULT_ROOT = ROOT.parent / "shared" / "data"


def shared_data(name: str, given: Path | None = None) -> Path:
    """``given`` if set, else ``name`` in the shared data folder; a clear BenchError when it is missing."""
    if given is not None:
        if given.exists():
            return given
        raise BenchError(f"{given} not found ({describe(name)})")
    root = Path(os.environ.get(ENV) or DEFAULT_ROOT)
    if not (root / name).exists():
        raise BenchError(f"{root / name} not found ({describe(name)}); pass --shared-data or set {ENV}")
    return root / name


def index_arguments(ap: argparse._ArgumentGroup) -> None:
    """The options of a benchmark over an index that the scale benchmark left (with the shared --data-dir)."""
    ap.add_argument("--collection", default="scale", help="The collection in --data-dir (default: scale's).")
    ap.add_argument("--model", default="wordllama-l2-supercat-256")


def index_dir(args: argparse.Namespace) -> Path:
    """The shared ``--data-dir``, required here: the local index to measure."""
    if args.data_dir is None or not (args.data_dir / "chroma").exists():
        raise BenchError(
            "--data-dir must be a local index, e.g. the one `python -m rag.evaluation.bench scale` leaves in "
            "/tmp/rag-bench-scale/<model>/n<N>/ours"
        )
    return Path(args.data_dir)


def child_env() -> dict[str, str]:
    """The environment of a child ``python -m rag.evaluation.bench.X``: this checkout first on its path."""
    path = os.environ.get("PYTHONPATH")
    return dict(os.environ, PYTHONPATH=f"{ROOT}{os.pathsep}{path}" if path else str(ROOT))


def python_module(module: str) -> list[str]:
    """The command that runs ``rag.evaluation.bench.<module>`` in a child process (with child_env())."""
    return [sys.executable, "-m", f"rag.evaluation.bench.{module}"]
