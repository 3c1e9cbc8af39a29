"""The README must not drift from the code."""

from __future__ import annotations

import re
from pathlib import Path

from rag.settings import settings_table

README = (Path(__file__).resolve().parent.parent / "README.md").read_text()
CONFIGURATION = (Path(__file__).resolve().parent.parent / "docs" / "configuration.md").read_text()
CI = (Path(__file__).resolve().parent.parent / ".ci" / "run").read_text()


def test_readme_starts_with_the_two_commands_and_ci_runs_the_second() -> None:
    first_block = re.match(r"```bash\n(.*?)```", README, re.S)
    assert first_block, "README must begin with the two set-up commands"
    commands = [line.split("#")[0].strip() for line in first_block.group(1).splitlines() if line.strip()]
    assert commands == ["make demo", "make test"]
    assert "make test" in CI


def test_settings_table_matches_the_code() -> None:
    assert settings_table() in CONFIGURATION, (
        "regenerate the table in docs/configuration.md from rag.settings.settings_table()"
    )


def test_every_cli_command_in_the_readme_exists() -> None:
    from rag.apps.cli import cli

    used = set(re.findall(r"\.venv/bin/rag (\w+)", README))
    assert used and used <= set(cli.commands), used - set(cli.commands)
