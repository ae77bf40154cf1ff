# The two set-up commands: `make demo` runs the main job, `make test` passes the tests.
# Each creates .venv on first use and installs what it needs.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# setuptools ends every editable install of a package outside a src/ folder with a note that
# folders named like the package in the working directory win on import; here that folder is the
# package itself, so the note is noise. This filters that one message, no other warning.
EDITABLE_NOTE_OFF := PYTHONWARNINGS="ignore:Editable installation:UserWarning"

.PHONY: demo test lint bench clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(VENV)/.installed-dev: pyproject.toml | $(PY)
	$(EDITABLE_NOTE_OFF) $(PY) -m pip install --quiet -e ".[dev]"
	touch $@

$(VENV)/.installed: pyproject.toml | $(PY)
	$(EDITABLE_NOTE_OFF) $(PY) -m pip install --quiet -e ".[demo]"
	touch $@

demo: $(VENV)/.installed
	$(PY) -m dparray demo

lint: $(VENV)/.installed-dev
	$(VENV)/bin/ruff check .
	$(VENV)/bin/mypy

test: lint
	$(PY) -m pytest
	$(PY) -m pytest bench --benchmark-skip -q  # the benchmarks' own agreement checks, untimed

# The whole table: the suite in the default install (DPARRAY_BLAS=openblas: NumPy's OpenBLAS, as
# `pip install dparray` has it), the workloads again with the mkl extra's products, the report.
# PyTorch (the comparison column) is installed into .venv first if it is not there.
bench: $(VENV)/.installed-dev
	$(PY) -c "import torch" 2>/dev/null || $(PY) -m pip install --quiet torch
	DPARRAY_BLAS=openblas $(PY) -m pytest bench --benchmark-only \
		--benchmark-json=.benchmarks/bench.json -q
	$(PY) -m pytest bench/test_dataparallel.py -k "interleaved or busy" --benchmark-only \
		--benchmark-json=.benchmarks/bench-mkl.json -q
	$(PY) bench/report.py .benchmarks/bench.json .benchmarks/bench-mkl.json

clean:
	rm -rf $(VENV) .pytest_cache .benchmarks .hypothesis build *.egg-info
