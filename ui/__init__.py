"""The chat UI, installed as ``rag.ui``.

The folder ui/ is mapped to ``rag.ui`` by pyproject.toml's ``[tool.setuptools.package-dir]``. Imported
under any other name (``import ui`` from the repository root) its modules would load a second time as
other modules, with their own state, so that import fails here.
"""

if __name__ != "rag.ui":
    raise ImportError(
        f"{__name__!r} is the repository folder ui/; import it as rag.ui "
        "(installed by `pip install -e .` in the repository)"
    )
