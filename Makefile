# tcgemm: build the book, run the tests, record the notebooks on a GPU.
#   make book    HTML book in _build/html (Sphinx warnings are errors)
#   make test    the whole test suite (notebooks through nbval, the book build included)
#   make record  execute every notebook on this machine's GPU and save the outputs, stamped
#   make clean   remove build outputs (the virtual environment stays; `rm -rf .venv` for that)

VENV        := .venv
VENV_PYTHON := $(VENV)/bin/python
# `make record` runs where there may be no venv (the offline GPU machine): use python3 there.
PY          ?= $(if $(wildcard $(VENV_PYTHON)),$(VENV_PYTHON),python3)

.PHONY: book test record clean

book: $(VENV)/.stamp-requirements.txt
	$(VENV)/bin/jupyter-book build . --warningiserror --keep-going

test: $(VENV)/.stamp-requirements-test.txt
	$(VENV_PYTHON) -m pytest

record:
	$(PY) -m tcgemm.publish.record book/*.ipynb

clean:
	rm -rf _build .pytest_cache
	find . -path ./$(VENV) -prune -o -name __pycache__ -type d -prune -exec rm -rf {} +

# --- virtual environment ------------------------------------------------------------------
# One stamp per requirements file: it is remade when that file (or pyproject.toml) changes.
$(VENV_PYTHON):
	python3 -m venv $(VENV)
	$(VENV_PYTHON) -m pip install --upgrade pip

$(VENV)/.stamp-%: % pyproject.toml | $(VENV_PYTHON)
	$(VENV_PYTHON) -m pip install -r $<
	$(VENV_PYTHON) -m pip install -e . --no-deps
	touch $@

# requirements-test.txt includes requirements.txt (-r).
$(VENV)/.stamp-requirements-test.txt: requirements.txt
