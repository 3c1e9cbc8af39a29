"""The evaluation harness, installed as ``rag.evaluation``.

The folder eval/ is mapped to ``rag.evaluation`` by pyproject.toml's ``[tool.setuptools.package-dir]``. Imported
under any other name (``import eval`` from the repository root) its modules would load a second time as
other modules, with their own state, so that import fails here.
"""

if __name__ != "rag.evaluation":
    raise ImportError(
        f"{__name__!r} is the repository folder eval/; import it as rag.evaluation "
        "(installed by `pip install -e .` in the repository)"
    )
