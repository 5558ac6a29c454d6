# tcgemm: build the book, run the tests, open the notebooks, record them on a GPU.
#   make book    HTML book in _build/html (Sphinx warnings are errors); installs no CUDA wheel; with
#                npm it installs MathJax in web/node_modules, which the book serves itself
#   make test    the whole test suite (notebooks through nbval, the book build included), as CI runs it
#   make test-fast  the unit tests only: no notebooks, no book build or browser, no compiling of every
#                kernel (tests marked slow); under two minutes
#   make lab     JupyterLab on the book's notebooks (book/ is its root; it opens /lab/tree/intro.ipynb),
#                with the CUDA wheels that fit this machine's driver (picked by tcgemm/cuda_env.py;
#                `make CUDA=12 lab`, `CUDA=13` or `CUDA=none` to choose); LAB_ARGS="--no-browser
#                --port 8888" for a remote machine (it prints the intro's address, token included)
#   make record  execute every notebook on this machine's GPU and save the outputs, stamped
#   make clean   remove build outputs (the virtual environments stay; `rm -rf .venv .venv-lab` for those)
#
# Two virtual environments: .venv for the book and the tests (`make book` puts only requirements.txt
# there, `make test` adds the CUDA 13 set and the test tools, and NVRTC 12 in .venv/nvrtc12), and
# .venv-lab for `make lab`, whose CUDA set follows the driver (a CUDA 12 driver cannot run the
# CUDA 13 wheels, and the two CuPy wheels cannot share a venv).

VENV        := .venv
VENV_PYTHON := $(VENV)/bin/python
LAB_VENV    := .venv-lab
# What the book's pages load besides Sphinx's output (MathJax), installed by npm (see below).
WEB_STAMP   := web/node_modules/.stamp
CUDA        ?=
LAB_ARGS    ?=
# JupyterLab's root folder, the page it opens first (relative to it), and --allow-root where make
# runs as root (a container, a cloud GPU machine), where Jupyter refuses to start without it.
LAB_ROOT    ?= book
LAB_OPTIONS  = --ServerApp.root_dir=$(LAB_ROOT) --LabApp.default_url=/lab/tree/intro.ipynb \
               $(if $(filter 0,$(shell id -u)),--allow-root)
# `make record` uses the lab venv (its CUDA set fits the driver), else .venv, else python3 (the
# offline GPU machine may have neither); it never creates one. PY=... chooses.
PY          ?= $(firstword $(wildcard $(LAB_VENV)/bin/python $(VENV_PYTHON)) python3)

.PHONY: book test test-fast lab record clean

book: $(VENV)/.stamp-requirements.txt $(WEB_STAMP)
	$(VENV)/bin/jupyter-book build . --warningiserror --keep-going

test: $(VENV)/.stamp-requirements-test.txt $(VENV)/nvrtc12/.stamp $(WEB_STAMP)
	$(VENV_PYTHON) -m pytest

test-fast: $(VENV)/.stamp-requirements-test.txt $(VENV)/nvrtc12/.stamp
	$(VENV_PYTHON) -m pytest tests -o addopts= -p no:nbval -m "not slow"

lab:
	@set -e; cuda=$$(python3 -m tcgemm.cuda_env --cuda "$(CUDA)"); \
	$(MAKE) --no-print-directory $(LAB_VENV)/.stamp-cuda-$$cuda
	$(LAB_VENV)/bin/jupyter lab $(LAB_OPTIONS) $(LAB_ARGS)

record:
	$(PY) -m tcgemm.publish.record book/*.ipynb

clean:
	rm -rf _build .pytest_cache
	find . -path './.venv*' -prune -o -name __pycache__ -type d -prune -exec rm -rf {} +

# --- web/node_modules: what the book's pages load, served from _build/html (tcgemm.publish.offline) ---
# MathJax, from the npm registry (web/package-lock.json pins it); no install script runs.
$(WEB_STAMP): web/package.json web/package-lock.json
	@command -v npm >/dev/null || { echo "make: the book needs npm (Node.js) to install MathJax in web/node_modules: apt-get install npm" >&2; exit 1; }
	npm ci --prefix web --no-audit --no-fund --ignore-scripts
	touch $@

# --- .venv: the book, then the tests -------------------------------------------------------
# One stamp per requirements file: it is remade when that file (or one it includes, or
# pyproject.toml) changes.
$(VENV_PYTHON):
	python3 -m venv $(VENV)
	$(VENV_PYTHON) -m pip install --upgrade pip

$(VENV)/.stamp-%: % pyproject.toml setup.py | $(VENV_PYTHON)
	$(VENV_PYTHON) -m pip install -r $<
	$(VENV_PYTHON) -m pip install -e . --no-deps
	touch $@

$(VENV)/.stamp-requirements-test.txt: requirements.txt requirements-cuda13.txt requirements-nvrtc13.txt \
                                      requirements-sass.txt

# NVRTC 12 beside the CUDA 13 set, for tests/test_nvrtc.py (tcgemm.engine.gpu.nvrtc_offline.SIDE_DIR).
$(VENV)/nvrtc12/.stamp: requirements-nvrtc12.txt | $(VENV_PYTHON)
	rm -rf $(VENV)/nvrtc12
	$(VENV_PYTHON) -m pip install --no-deps --target $(VENV)/nvrtc12 -r $<
	touch $@

# --- .venv-lab: the book's packages, JupyterLab and one CUDA set ----------------------------
# Without a driver (CUDA=none) no CUDA runtime wheel is installed, only NVRTC 13 and the SASS
# tools, which run without a GPU, for the cells that read a kernel's SASS.
LAB_SET_13   := requirements-cuda13.txt requirements-nvrtc13.txt requirements-sass.txt
LAB_SET_12   := requirements-cuda12.txt requirements-nvrtc12.txt requirements-sass.txt
LAB_SET_none := requirements-nvrtc13.txt requirements-sass.txt

# A new set, or a changed requirement, starts the venv over (cupy-cuda12x and -13x cannot share it).
.SECONDEXPANSION:
$(LAB_VENV)/.stamp-cuda-%: requirements.txt requirements-lab.txt $$(LAB_SET_$$*) pyproject.toml setup.py
	rm -rf $(LAB_VENV)
	python3 -m venv $(LAB_VENV)
	$(LAB_VENV)/bin/python -m pip install --upgrade pip
	$(LAB_VENV)/bin/python -m pip install -r requirements.txt -r requirements-lab.txt $(addprefix -r ,$(LAB_SET_$*))
	$(LAB_VENV)/bin/python -m pip install -e . --no-deps
	touch $@
