# The two commands the README promises: `make serve` and `make test`.
# Both create .venv on first use and install the package with pinned docs and test extras.
# --no-compile: Python byte-compiles the modules it imports on first use, not all of torch up front.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
export NO_MKDOCS_2_WARNING := 1

.PHONY: serve test build assets check-assets lock clean

$(STAMP): pyproject.toml constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --no-compile -c constraints.txt -e ".[site,docs,test]"
	touch $(STAMP)

## pytest options for `make test`: workers on up to 4 cores (pytest-xdist), each test file on
## one worker except the browser tests (tests/conftest.py's scheduler); override with
## `make test PYTEST_ARGS=-n0` for one process, or add e.g. `--durations=30`.
PYTEST_ARGS ?= -n auto --maxprocesses=4

## Redraw every figure from code or from the committed data (benchmark and training
## results are committed: nothing here needs a GPU or minutes of training). Every
## site asset is committed and `make test` proves it current, so serve does not redo this.
assets: $(STAMP)
	$(PY) scripts/build_figures.py
	$(PY) scripts/build_causal_figures.py
	$(PY) scripts/bench.py --plots-only
	$(PY) scripts/train_heads.py --figures-only

## Fail, naming the files, if a committed figure or data file is not what the code makes.
check-assets: $(STAMP)
	$(PY) scripts/build_figures.py --check
	$(PY) scripts/build_causal_figures.py --check
	$(PY) scripts/bench.py --check
	$(PY) scripts/train_heads.py --check
	$(PY) scripts/build_notebook.py --check

serve: $(STAMP)
	$(PY) -m mkdocs serve --dev-addr 127.0.0.1:8000

build: $(STAMP)
	$(PY) -m mkdocs build --strict

## Find a Chromium for the browser tests, installing one if the machine has none
## (tests/browser_setup.py says how; MHA_SKIP_BROWSER=1 skips both), then run pytest on it.
## Any non-zero pytest status fails the target, 5 ("no tests collected") included.
test: $(STAMP)
	@chromium="$$($(PY) tests/browser_setup.py)" || exit 1; \
	echo "Chromium: $${chromium:-none (MHA_SKIP_BROWSER=1)}"; \
	MHA_CHROMIUM="$$chromium" $(PY) -m pytest $(PYTEST_ARGS)

## Re-pin constraints.txt from the current .venv (after changing dependencies on purpose).
lock: $(STAMP)
	{ echo "# Pinned versions for reproducible builds (Python 3.11). Regenerate with: make lock"; \
	  echo "# torch is the CPU build that lies on local disk; a bare 'torch' would pull a multi-GB CUDA build."; \
	  $(PY) -m pip freeze --exclude-editable | sed 's/^torch==\([0-9.]*\)+cpu/torch==\1/'; } > constraints.txt

clean:
	rm -rf site .pytest_cache .hypothesis
