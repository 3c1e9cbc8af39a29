"""The llama.cpp server child, seen from outside: the command line that starts it and the health probe.

Both kinds of server use these: the per-process one (:mod:`rag.models.local_llm`) and the user's shared
one (:mod:`rag.models.daemon`); the child itself runs :func:`rag.models.local_llm._serve`.
"""

from __future__ import annotations

import sys
import urllib.error
import urllib.request
from pathlib import Path

# The child puts the parent's copy of the package first on its path and imports only the server module:
# `import rag` loads nothing heavy (its names are imported on first use), so the child costs no Chroma or LangChain.
_CHILD_BOOTSTRAP = (
    "import sys; sys.path.insert(0, sys.argv[1]); from rag.models.local_llm import _serve; _serve(sys.argv[2:])"
)

# No proxies: an http_proxy from the environment would otherwise route 127.0.0.1 health checks through it.
LOCAL_HTTP = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def http_status(url: str, timeout: float) -> int:
    """The HTTP status of ``GET url`` (0 when nothing answers), without proxies."""
    try:
        with LOCAL_HTTP.open(url, timeout=timeout) as response:
            return int(response.status)
    except urllib.error.HTTPError as e:
        return e.code  # 503 while the model loads
    except (OSError, ValueError):
        return 0


def child_command(
    model_path: Path, *, threads: int, ctx: int, host: str = "127.0.0.1", binary: Path | None = None
) -> list[str]:
    """The command line of a server child (:func:`rag.models.local_llm._serve`) on a free port of ``host``; with
    ``binary``, the child runs that llama-server (:mod:`rag.models.native_llm`) instead of xllamacpp."""
    package_parent = str(Path(__file__).resolve().parents[2])  # the folder holding this copy of the rag package
    cmd = [sys.executable, "-c", _CHILD_BOOTSTRAP, package_parent, "--model", str(model_path)]
    cmd += ["--binary", str(binary)] if binary else []
    return cmd + ["--threads", str(threads), "--ctx", str(ctx), "--host", host, "--port", "0"]
