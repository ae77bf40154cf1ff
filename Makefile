# The two set-up commands: `make demo` runs the main job, `make test` passes the tests.
# Each creates .venv on first use and installs what it needs.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# setuptools ends every editable install of a package outside a src/ folder with a note that
# folders named like the package in the working directory win on import; here that folder is the
# package itself, so the note is noise. This filters that one message, no other warning.
EDITABLE_NOTE_OFF := PYTHONWARNINGS="ignore:Editable installation:UserWarning"

.PHONY: demo test quick lint bench clean

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

# The contributors' fast loop: the suite without the tests marked integration (subprocesses:
# the CLI, examples, MPI, packaging; the documentation pages) or slow (training runs of hundreds
# of steps), spread over the machine's cores, and without ruff and mypy; a backend the machine
# cannot run (CuPy without a device) gets no tests rather than skipped ones, and the rewritten
# test modules are cached even where PYTHONDONTWRITEBYTECODE is set (it doubles collection).
# `make test` runs everything, in one process.
quick: $(VENV)/.installed-dev
	env -u PYTHONDONTWRITEBYTECODE $(PY) -m pytest -m "not integration and not slow" -q -n auto \
		--omit-absent-backends

# The whole table: the suite in the default install (on x86-64 Linux the faster of MKL and
# OpenBLAS on this CPU makes NumPy's products, OpenBLAS elsewhere), the workload tables again
# with DPARRAY_BLAS=openblas, the report.
# PyTorch (the comparison column; the release the committed figures were measured against) is
# installed into .venv first if it is not there.
bench: $(VENV)/.installed-dev
	$(PY) -c "import torch" 2>/dev/null || $(PY) -m pip install --quiet "torch==2.13.0"
	$(PY) -m pytest bench --benchmark-only --benchmark-json=.benchmarks/bench.json -q
	DPARRAY_BLAS=openblas $(PY) -m pytest bench/test_dataparallel.py -k "interleaved or busy" \
		--benchmark-only --benchmark-json=.benchmarks/bench-openblas.json -q
	$(PY) bench/report.py .benchmarks/bench.json .benchmarks/bench-openblas.json

clean:
	rm -rf $(VENV) .pytest_cache .benchmarks .hypothesis build *.egg-info
