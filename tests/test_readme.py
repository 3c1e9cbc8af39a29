"""The README and docs/ must not drift from the code."""

from __future__ import annotations

import importlib
import re
import tomllib
from pathlib import Path

import pytest

import rag
from rag.settings import settings_table

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
DOCS = {p.relative_to(ROOT).as_posix(): p.read_text() for p in sorted((ROOT / "docs").glob("*.md"))}
PAGES = {"README.md": README, **DOCS}
CI = (ROOT / ".ci" / "run").read_text()

# Pages other branches add; a link to them may dangle until that branch is merged.
ADDED_ELSEWHERE = {"docs/installation.md"}


def test_readme_starts_with_the_two_commands_and_ci_runs_the_second() -> None:
    first_block = re.match(r"```bash\n(.*?)```", README, re.S)
    assert first_block, "README must begin with the two set-up commands"
    commands = [line.split("#")[0].strip() for line in first_block.group(1).splitlines() if line.strip()]
    assert commands == ["make demo", "make test"]
    assert "make test" in CI


def test_readme_is_a_quickstart() -> None:
    assert len(README.splitlines()) <= 200, "move details to docs/ and link them"


def test_readme_states_the_supported_python_versions() -> None:
    spec = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    assert f"`requires-python {spec}`" in README, f"README must state requires-python {spec}"


def test_settings_table_matches_the_code() -> None:
    assert settings_table() in DOCS["docs/configuration.md"], (
        "regenerate the table in docs/configuration.md from rag.settings.settings_table()"
    )


def test_every_cli_command_in_the_docs_exists() -> None:
    from rag.apps.cli import cli

    used = {cmd for text in PAGES.values() for cmd in re.findall(r"\.venv/bin/rag (\w+)", text)}
    assert used and used <= set(cli.commands), used - set(cli.commands)


def _slug(heading: str) -> str:
    """GitHub's anchor for a Markdown heading."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


@pytest.mark.parametrize("page", sorted(PAGES))
def test_links_between_pages_resolve(page: str) -> None:
    here = (ROOT / page).parent
    for target in re.findall(r"\]\(([^)\s]+)\)", PAGES[page]):
        if re.match(r"[a-z]+:", target):
            continue  # http(s), mailto
        path, _, anchor = target.partition("#")
        file = (here / path).resolve() if path else ROOT / page
        name = file.relative_to(ROOT).as_posix()
        if name in ADDED_ELSEWHERE and not file.exists():
            continue
        assert file.exists(), f"{page}: link to missing {target}"
        if anchor and file.suffix == ".md":
            slugs = {_slug(h) for h in re.findall(r"^#+ (.+)$", file.read_text(), re.M)}
            assert anchor in slugs, f"{page}: no heading for #{anchor} in {name}"


def test_docs_link_every_page_from_the_readme() -> None:
    linked = set(re.findall(r"\]\((docs/[\w.-]+\.md)\)", README))
    assert set(DOCS) <= linked, set(DOCS) - linked


def _without_history(text: str) -> str:
    """The page without its "Restructuring" section, which names modules that no longer exist."""
    return re.sub(r"^## Restructuring.*?(?=^## |\Z)", "", text, flags=re.S | re.M)


def test_paths_named_in_the_docs_exist() -> None:
    for page, text in PAGES.items():
        for path in re.findall(r"`((?:rag|eval|ui|prompts|tests)/[\w./-]+)", _without_history(text)):
            assert (ROOT / path.rstrip(".")).exists(), f"{page} names {path}, which does not exist"


def _resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for attr in parts[cut:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return False
        return True
    return False


def test_dotted_names_in_the_docs_resolve() -> None:
    for page, text in PAGES.items():
        for name in re.findall(r"`(rag(?:\.\w+)+)`", _without_history(text)):
            if name != "rag.toml":
                assert _resolves(name), f"{page} names {name}, which does not exist"


def test_api_doc_covers_exactly_the_public_api() -> None:
    documented = set(re.findall(r"^### `(\w+)`", DOCS["docs/api.md"], re.M))
    assert documented == set(rag.__all__), (set(rag.__all__) - documented, documented - set(rag.__all__))
