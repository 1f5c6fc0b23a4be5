# kpass developer commands. Every target sets up .venv itself from a fresh clone.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
STAMP := $(VENV)/.installed-all

.PHONY: venv test demo bench coverage clean

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet -c constraints.txt -e '.[all]'
	# setuptools leaves kpass.egg-info in the checkout; on sys.path (cwd) it hides the editable
	# install's metadata from importlib.metadata, and Inspect then drops the kpass/ name prefix.
	rm -rf kpass.egg-info
	touch $(STAMP)

venv: $(STAMP)

test: $(STAMP)
	$(PY) -m pytest -p no:cacheprovider

demo: $(STAMP)
	$(PY) examples/demo/run_demo.py

bench: $(STAMP)
	$(PY) tests/benchmarks/run_benchmarks.py

coverage: $(STAMP)
	KPASS_COVERAGE_FULL=1 $(PY) tests/coverage_study.py --full

clean:
	rm -rf $(VENV) build *.egg-info
