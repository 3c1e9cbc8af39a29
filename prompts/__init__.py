"""The prompt templates (prompts/*.md), installed as ``rag.prompts``.

The folder prompts/ is mapped to ``rag.prompts`` by pyproject.toml's ``[tool.setuptools.package-dir]``. Imported
under any other name (``import prompts`` from the repository root) its modules would load a second time as
other modules, with their own state, so that import fails here.
"""

if __name__ != "rag.prompts":
    raise ImportError(
        f"{__name__!r} is the repository folder prompts/; import it as rag.prompts "
        "(installed by `pip install -e .` in the repository)"
    )
