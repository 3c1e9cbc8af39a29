"""Rewrite the settings table in docs/configuration.md from the code (tests/test_readme.py checks they agree).

.venv/bin/python eval/tools/sync_settings_table.py
"""

from __future__ import annotations

from pathlib import Path

from rag.settings import settings_table

DOC = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"


def main() -> int:
    text = DOC.read_text(encoding="utf-8")
    table = settings_table().rstrip("\n")
    header = table.splitlines()[0]
    start = text.index(header)
    lines = text[start:].split("\n")
    end = next(i for i, line in enumerate(lines) if not line.startswith("|"))
    DOC.write_text(text[:start] + table + "\n" + "\n".join(lines[end:]), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
