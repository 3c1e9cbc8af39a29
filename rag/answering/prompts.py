"""Prompt templates live in ``prompts/*.md``; this module loads them and checks their variables.

A template whose placeholders differ from what the code supplies is a :class:`ConfigError` at
start-up, not a garbled prompt at question time.
"""

from __future__ import annotations

import string
from functools import cache
from importlib import resources

from rag.errors import ConfigError

# name -> the variables the code supplies to that template
PROMPT_VARIABLES: dict[str, frozenset[str]] = {
    "system": frozenset({"no_answer"}),
    "answer": frozenset({"context", "question"}),
    "condense": frozenset({"history", "question"}),
    "yesno": frozenset({"context", "question"}),
    "judge": frozenset({"question", "paper"}),
    "judge_system": frozenset(),
    "extract": frozenset({"title", "abstract", "question"}),
    "extract_described": frozenset({"title", "abstract", "question"}),
    "stance": frozenset({"title", "passage", "statement", "ask"}),
    "stance_system": frozenset(),
    "opposite": frozenset({"claim"}),
    "contrast": frozenset({"title", "passage", "first", "second"}),
    "contrast_system": frozenset(),
    "statement": frozenset({"question"}),
}


def placeholders(template: str) -> set[str]:
    return {field for _, field, _, _ in string.Formatter().parse(template) if field is not None}


@cache
def load_prompt(name: str) -> str:
    """The text of ``prompts/<name>.md``, validated against :data:`PROMPT_VARIABLES`."""
    if name not in PROMPT_VARIABLES:
        raise ConfigError(f"Unknown prompt {name!r}; known: {sorted(PROMPT_VARIABLES)}")
    try:
        text = resources.files("rag.prompts").joinpath(f"{name}.md").read_text(encoding="utf-8")
    except (FileNotFoundError, ModuleNotFoundError) as e:
        raise ConfigError(f"Prompt file prompts/{name}.md is missing: reinstall the package.") from e
    check_prompt(name, text)
    return text


def check_prompt(name: str, text: str) -> None:
    try:
        found = placeholders(text)
    except ValueError as e:
        raise ConfigError(f"prompts/{name}.md is not a valid template: {e}") from e
    expected = PROMPT_VARIABLES[name]
    if found != expected:
        missing, unknown = sorted(expected - found), sorted(found - expected)
        raise ConfigError(
            f"prompts/{name}.md must use exactly the variables {sorted(expected)}"
            + (f"; missing {missing}" if missing else "")
            + (f"; unknown {unknown}" if unknown else "")
        )


def load_all() -> dict[str, str]:
    """Load and validate every prompt (called once at start-up)."""
    return {name: load_prompt(name) for name in PROMPT_VARIABLES}
