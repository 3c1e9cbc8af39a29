"""The built wheel: one import root (`rag`), the data files it needs, no repository-only folders.

The project keeps ui/, eval/ and prompts/ at the top level and links them into the package
(rag/ui, rag/evaluation, rag/prompts are symlinks), so a packaging mistake shows up as an extra
import root (`ui`, `eval`), a missing prompt or data file, or benchmark scripts shipped to users.
The wheel is built offline (--no-build-isolation --no-deps --no-index, pip configuration ignored)
from a copy of the working tree, so nothing in the repository is touched and no stale build/ helps.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet

ROOT = Path(__file__).resolve().parent.parent
DIST_INFO = re.compile(r"^rag_abstracts-[^/]+\.dist-info$")
# Repository-only folders of eval/ (benchmarks, gold-data tools, raw results): never installed.
NOT_INSTALLED = ("bench", "tools", "results")
WARNING = re.compile(r"warn|would be ignored", re.IGNORECASE)


def _ignore_top_level(directory: str, names: list[str]) -> set[str]:
    junk = {n for n in names if n == "__pycache__" or n.endswith(".egg-info")}
    if Path(directory) == ROOT:  # .git, .venv, caches, earlier build output
        junk |= {n for n in names if n.startswith(".") or n in ("build", "dist")}
    return junk


def _run(args: list[str], cwd: Path) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env["PIP_CONFIG_FILE"] = os.devnull  # no site index, find-links or constraints: nothing to fetch
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # else distutils prints "warning: byte-compiling is disabled"
    proc = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-4000:]
    return out


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """(source copy, wheel, pip's verbose build output)."""
    try:
        import setuptools
    except ImportError:
        pytest.fail("setuptools is not installed in this venv: run `make install` (it comes from requirements.lock)")
    required = tomllib.loads((ROOT / "pyproject.toml").read_text())["build-system"]["requires"]
    assert int(setuptools.__version__.split(".")[0]) >= 68, (setuptools.__version__, required)
    tmp = tmp_path_factory.mktemp("packaging")
    src = tmp / "src"
    shutil.copytree(ROOT, src, symlinks=True, ignore=_ignore_top_level)
    out_dir = tmp / "wheels"
    log = _run(
        [sys.executable, "-m", "pip", "wheel", "-v", "--no-deps", "--no-build-isolation", "--no-index",
         "-w", str(out_dir), str(src)],
        cwd=tmp,
    )  # fmt: skip
    wheels = list(out_dir.glob("rag_abstracts-*.whl"))
    assert len(wheels) == 1, (sorted(p.name for p in out_dir.iterdir()), log[-2000:])
    return src, wheels[0], log


@pytest.mark.slow
def test_build_prints_no_warning(built: tuple[Path, Path, str]) -> None:
    _, _, log = built
    warnings = [line for line in log.splitlines() if WARNING.search(line)]
    assert not warnings, "\n".join(warnings)


@pytest.mark.slow
def test_wheel_has_one_import_root_rag(built: tuple[Path, Path, str]) -> None:
    _, wheel, _ = built
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        roots = {n.split("/", 1)[0] for n in names}
        dist_info = [r for r in roots if DIST_INFO.match(r)]
        assert roots - set(dist_info) == {"rag"}, sorted(roots)
        assert zf.read(f"{dist_info[0]}/top_level.txt").decode().split() == ["rag"]
        metadata = zf.read(f"{dist_info[0]}/METADATA").decode()
    requires_python = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    declared = [line.split(":", 1)[1] for line in metadata.splitlines() if line.startswith("Requires-Python:")]
    assert [SpecifierSet(s) for s in declared] == [SpecifierSet(requires_python)], declared


@pytest.mark.slow
def test_wheel_holds_every_module_and_data_file(built: tuple[Path, Path, str]) -> None:
    src, wheel, _ = built
    names = set(zipfile.ZipFile(wheel).namelist())
    data = sorted((src / "prompts").glob("*.md")) + sorted((src / "eval" / "data").glob("*.jsonl"))
    data += sorted(p for p in (src / "rag" / "data").iterdir() if p.is_file())
    assert len(data) >= 5
    expected = {f"rag/prompts/{p.name}" for p in data if p.parent.name == "prompts"}
    expected |= {f"rag/evaluation/data/{p.name}" for p in data if p.parent.parent.name == "eval"}
    expected |= {f"rag/data/{p.name}" for p in data if p.parent.parent.name == "rag"}
    # every module of the package, the linked folders included (os.walk follows the symlinks)
    for dirpath, dirnames, filenames in os.walk(src / "rag", followlinks=True):
        rel = Path(dirpath).relative_to(src)
        if rel.parts[:2] == ("rag", "evaluation"):
            dirnames[:] = [d for d in dirnames if not (len(rel.parts) == 2 and d in NOT_INSTALLED)]
        expected |= {f"{rel.as_posix()}/{f}" for f in filenames if f.endswith(".py")}
    assert "rag/ui/__init__.py" in expected and "rag/evaluation/__init__.py" in expected
    assert not expected - names, sorted(expected - names)


@pytest.mark.slow
def test_wheel_leaves_repository_only_folders_out(built: tuple[Path, Path, str]) -> None:
    src, wheel, _ = built
    names = zipfile.ZipFile(wheel).namelist()
    for folder in NOT_INSTALLED:
        assert (src / "eval" / folder).is_dir(), folder  # the check below would pass vacuously
        shipped = [n for n in names if n.startswith(f"rag/evaluation/{folder}/")]
        assert not shipped, shipped
    assert not [n for n in names if n.split("/", 1)[0] in ("eval", "ui", "prompts", "tests", "docs")]


@pytest.mark.slow
def test_installed_wheel_imports_only_rag(built: tuple[Path, Path, str], tmp_path: Path) -> None:
    """Installed (offline, --no-deps) into an empty target: `ui`, `eval`, `prompts` are no modules."""
    _, wheel, _ = built
    target = tmp_path / "site"
    log = _run([sys.executable, "-m", "pip", "install", "-v", "--no-deps", "--no-index", "--target", str(target),
                str(wheel)], cwd=tmp_path)  # fmt: skip
    assert not [line for line in log.splitlines() if WARNING.search(line)]
    installed = sorted(p.name for p in target.iterdir() if p.name != "bin")  # bin/: the `rag` script
    assert len(installed) == 2 and installed[0] == "rag" and DIST_INFO.match(installed[1]), installed
    probe = (
        "import importlib.util, sys; sys.path.insert(0, sys.argv[1]); "
        "print(*[m for m in ('rag', 'ui', 'eval', 'prompts', 'tests') if importlib.util.find_spec(m)])"
    )
    # -I -S: no site-packages, no current directory, so only the target and the standard library count
    found = subprocess.run([sys.executable, "-I", "-S", "-c", probe, str(target)], cwd=tmp_path,
                           capture_output=True, text=True, check=True).stdout.split()  # fmt: skip
    assert found == ["rag"]
    assert (target / "rag" / "prompts" / "system.md").is_file() and not (target / "rag" / "prompts").is_symlink()
