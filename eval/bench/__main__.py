"""``python -m rag.evaluation.bench [NAME [options]]``: the benchmark suite's runner (see suite.py)."""

from rag.evaluation.bench.suite import main

if __name__ == "__main__":  # not when a benchmark's multiprocessing child re-imports the main module
    raise SystemExit(main())
