"""A user's own GGUF file (``RAG_LLM__GGUF``), checked before the embedded llama.cpp server is started on it.

llama.cpp's own failure on a bad file is a child process that exits with a page of log; these checks turn the
common cases into one line each, before anything starts: the file is missing or unreadable, it is not a GGUF
(magic ``b"GGUF"``, version 2 or 3), its header is cut short, it does not fit in the memory available now, or
the context the settings ask for exceeds what the model was trained on (then the context is clamped, and
:func:`check_gguf` says so in :attr:`CheckedModel.note`).

The header is read with the standard library (GGUF spec: little-endian; magic, uint32 version, uint64 tensor
count, uint64 metadata count, then typed key/value pairs). Only the scalar and string values are kept; arrays
(the tokenizer's vocabulary) are skipped.
"""

from __future__ import annotations

import functools
import hashlib
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from rag.errors import ConfigError

GGUF_MAGIC = b"GGUF"
SUPPORTED_VERSIONS = (2, 3)
# What llama.cpp needs beside the mapped weights: the KV cache, compute buffers, the server itself.
MEMORY_MARGIN = 0.2  # of the file size
MEMORY_BASE = 384 << 20  # bytes
THINK_TAG = "<think>"

# GGUF value types: id -> struct format of a scalar (8: string, 9: array are read apart)
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9
_MAX_VALUE = 256 << 20  # no metadata string comes near (a chat template is a few kB)


class _Truncated(Exception):
    pass


@dataclass(frozen=True)
class GGUFInfo:
    """What the header of a GGUF file says about its model."""

    path: Path
    size: int
    version: int
    tensor_count: int
    metadata: dict[str, Any] = field(repr=False)

    @property
    def name(self) -> str:
        """``general.name``, else the file's stem."""
        return str(self.metadata.get("general.name") or self.path.stem)

    @property
    def architecture(self) -> str | None:
        arch = self.metadata.get("general.architecture")
        return str(arch) if arch else None

    @property
    def context_length(self) -> int | None:
        """``<arch>.context_length``: the context the model was trained on."""
        value = self.metadata.get(f"{self.architecture}.context_length")
        return int(value) if isinstance(value, int) and value > 0 else None

    @property
    def chat_template(self) -> str | None:
        template = self.metadata.get("tokenizer.chat_template")
        return str(template) if template else None

    @property
    def reasons(self) -> bool:
        """A reasoning model: its chat template knows a ``<think>`` block (DeepSeek-R1 distills, QwQ, Qwen3)."""
        return THINK_TAG in (self.chat_template or "")


@dataclass(frozen=True)
class CheckedModel:
    """A GGUF that passed :func:`check_gguf`, with the context the server will run it with."""

    info: GGUFInfo
    ctx: int
    note: str | None = None  # set when the context was clamped

    @property
    def identity(self) -> str:
        """Names this exact file for the shared server (in place of the bundled model's sha256): a server started
        on another file, or on this path before the file changed, is never reused for it."""
        st = self.info.path.stat()
        return f"file:{self.info.path}:{st.st_size}:{st.st_mtime_ns}"

    @property
    def server_name(self) -> str:
        """The shared server's name (its state files in ``cache/llm``): the stem and a hash of the path."""
        digest = hashlib.sha256(str(self.info.path).encode()).hexdigest()[:10]
        stem = "".join(c if c.isalnum() or c in "._-" else "_" for c in self.info.path.stem)[:60]
        return f"gguf-{stem}-{digest}"


def _read(f: IO[bytes], n: int) -> bytes:
    if n > _MAX_VALUE:  # a damaged length would otherwise read the whole file into memory
        raise ValueError(f"a metadata value of {n} bytes")
    data = f.read(n)
    if len(data) != n:
        raise _Truncated
    return data


def _unpack(f: IO[bytes], fmt: str) -> Any:
    return struct.unpack(fmt, _read(f, struct.calcsize(fmt)))[0]


def _string(f: IO[bytes]) -> str:
    return _read(f, _unpack(f, "<Q")).decode("utf-8", "replace")


def _value(f: IO[bytes], kind: int) -> Any:
    if kind in _SCALARS:
        return _unpack(f, _SCALARS[kind])
    if kind == _STRING:
        return _string(f)
    if kind == _ARRAY:
        item, count = _unpack(f, "<I"), _unpack(f, "<Q")
        if item in _SCALARS:  # skipped: a vocabulary's scores are not needed
            skip = struct.calcsize(_SCALARS[item]) * count
            f.seek(skip, 1)
            if f.tell() > _size(f):
                raise _Truncated
        else:
            for _ in range(count):
                _value(f, item)
        return None
    raise ValueError(f"unknown metadata value type {kind}")


def _size(f: IO[bytes]) -> int:
    here = f.tell()
    end = f.seek(0, 2)
    f.seek(here)
    return end


def read_gguf(path: Path) -> GGUFInfo:
    """The header of the GGUF at ``path``: version, tensor count and the scalar and string metadata.

    Raises ``ConfigError`` (one line, naming the file) when it is missing, unreadable, not a GGUF, of an
    unsupported version, or cut short.
    """
    path = Path(path).expanduser()
    if not path.is_file():
        raise ConfigError(f"model file {path} not found (RAG_LLM__GGUF): give the path of a .gguf file")
    try:
        with path.open("rb") as f:
            return _parse(f, path)
    except PermissionError as e:
        raise ConfigError(f"model file {path} is not readable by this user (RAG_LLM__GGUF)") from e
    except OSError as e:
        raise ConfigError(f"model file {path} cannot be read: {e.strerror or e}") from e


def _parse(f: IO[bytes], path: Path) -> GGUFInfo:
    magic = f.read(4)
    if magic != GGUF_MAGIC:
        raise ConfigError(
            f"{path} is not a GGUF model (it starts with {magic!r}, not b'GGUF'): llama.cpp runs .gguf files only"
        )
    try:
        version = _unpack(f, "<I")
        if version not in SUPPORTED_VERSIONS:
            raise ConfigError(
                f"{path} is GGUF version {version}; llama.cpp here reads versions "
                f"{' and '.join(map(str, SUPPORTED_VERSIONS))}: convert it again with a current llama.cpp"
            )
        tensors, count = _unpack(f, "<Q"), _unpack(f, "<Q")
        metadata: dict[str, Any] = {}
        for _ in range(count):
            key = _string(f)
            value = _value(f, _unpack(f, "<I"))
            if value is not None:
                metadata[key] = value
    except _Truncated:
        raise ConfigError(
            f"{path} is cut short: its GGUF header ends at byte {f.tell()} of {path.stat().st_size} "
            "(an interrupted download or copy?)"
        ) from None
    except (ValueError, struct.error, MemoryError, OverflowError) as e:
        raise ConfigError(f"{path} has a damaged GGUF header ({e})") from e
    return GGUFInfo(
        path=path.resolve(), size=path.stat().st_size, version=version, tensor_count=tensors, metadata=metadata
    )


def mem_available() -> int | None:
    """Bytes of memory available now (``MemAvailable`` of /proc/meminfo); None where that is unknown."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def check_gguf(path: Path, ctx: int, *, available: Callable[[], int | None] = mem_available) -> CheckedModel:
    """Check the GGUF at ``path`` before a server is started on it (see the module docstring); the context the
    server gets is ``ctx`` clamped to the model's trained context. ``available`` reads the free memory (a test
    passes its own). Raises ``ConfigError`` with one line saying what is wrong."""
    info = read_gguf(path)
    if info.tensor_count == 0:
        raise ConfigError(f"{info.path} holds no tensors: it is a GGUF, but not a model's weights")
    need = int(info.size * (1 + MEMORY_MARGIN)) + MEMORY_BASE
    free = available()
    if free is not None and need > free:
        raise ConfigError(
            f"{info.path} ({info.size / 2**30:.1f} GiB) needs about {need / 2**30:.1f} GiB of memory to run, and "
            f"{free / 2**30:.1f} GiB is available: close programs or choose a smaller quantisation"
        )
    trained = info.context_length
    if trained is not None and ctx > trained:
        note = f"context clamped to {trained} tokens, what {info.name} was trained on (RAG_LLM__CTX asks {ctx})"
        return CheckedModel(info=info, ctx=trained, note=note)
    return CheckedModel(info=info, ctx=ctx)


@functools.lru_cache(maxsize=8)
def _cached(path: str, size: int, mtime_ns: int, ctx: int) -> CheckedModel:
    return check_gguf(Path(path), ctx)


def checked_gguf(path: Path, ctx: int) -> CheckedModel:
    """:func:`check_gguf`, read once per file version and context in this process (every chat model asks)."""
    path = Path(path).expanduser()
    try:
        st = path.stat()
    except OSError:
        return check_gguf(path, ctx)  # raises the one-line error
    return _cached(str(path), st.st_size, st.st_mtime_ns, ctx)
