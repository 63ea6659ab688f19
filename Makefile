# Two commands on a fresh machine:  make run   |   make test
# Both create .venv from requirements.txt on first use (and again when it changes).

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
ARTIFACTS ?= artifacts
PORT ?= 8501
HOST ?= 0.0.0.0

.PHONY: run test test-emulated test-loaded setup build browser share lint bench frontend clean help reference

help:
	@echo "make run    set up, build the bundled corpus if needed, start the dashboard on http://127.0.0.1:$(PORT) (this machine only)"
	@echo "make test   set up, then run the whole test suite (unit, end-to-end, browser)"
	@echo "make test-emulated  the fast tests once more as on a generic x86-64 processor (numba, numpy SIMD)"
	@echo "make test-loaded    the browser tests once more with one core held by a busy loop"
	@echo "make share  serve the dashboard read-only to other machines on the network (EDITOR_TOKEN=... for editors)"
	@echo "make bench  run the benchmarks (slow; writes BENCHMARKS.md figures)"
	@echo "make lint   ruff"
	@echo "make frontend  rebuild the map component's bundle (needs Node and npm; the bundle is committed)"
	@echo "make reference REFERENCE_DATA=FILE   build NeurIPS 1987-2023 from FILE and compare the bundled corpus with it"

$(VENV)/.installed: requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	touch $@

setup: $(VENV)/.installed

# Builds only when the bundled corpus's artifacts are missing or stale (inputs or settings changed).
build: setup
	$(PY) -m pipeline --artifacts $(ARTIFACTS) build

# This machine only (127.0.0.1): whoever reaches the editing app may upload files, start builds and
# rename or merge topics. `make share` is the one way to serve others, read-only.
run: build
	@echo "serving on http://127.0.0.1:$(PORT) for this machine only (make share serves others, read-only)"
	$(PY) -m streamlit run app.py --server.address 127.0.0.1 --server.port $(PORT) --server.headless true \
		--browser.gatherUsageStats false -- --artifacts $(ARTIFACTS)

# Serve the dashboard to other machines, read-only: no curation, no saved tours, no file written by
# a viewer. EDITOR_TOKEN=... lets whoever opens a page with ?token=... edit; it is passed in the
# environment (not visible in `ps`). Put it behind HTTPS (README: "Share and present").
share: build
	@echo "serving read-only on http://$(HOST):$(PORT)$(if $(EDITOR_TOKEN), (editors: add ?token=<EDITOR_TOKEN> to a link),)"
	@ATLAS_EDITOR_TOKEN="$(EDITOR_TOKEN)" $(PY) -m streamlit run app.py --server.address $(HOST) \
		--server.port $(PORT) --server.headless true --browser.gatherUsageStats false \
		--server.enableXsrfProtection true --server.enableCORS true --client.toolbarMode viewer \
		-- --artifacts $(ARTIFACTS) --read-only

# Optional: a reference for the bundled corpus ("What changed"), from a file you have (none ships:
# README, "What changed"). Runs beside `make run`; the app lists the corpus once it is built.
REFERENCE_DATA ?=
REFERENCE_NAME ?= neurips-1987-2023
reference: build
	@test -n "$(REFERENCE_DATA)" || { echo "give the file: make reference REFERENCE_DATA=path/to/neurips-1987-2023.jsonl.gz"; exit 2; }
	$(PY) -m pipeline --artifacts $(ARTIFACTS) build $(REFERENCE_DATA) --name $(REFERENCE_NAME)
	$(PY) -m pipeline --artifacts $(ARTIFACTS) compare neurips2026 $(REFERENCE_NAME)

# Debian's Chromium for the browser tests (never `playwright install`: it downloads a browser).
browser:
	@command -v chromium >/dev/null 2>&1 || { \
		echo "installing Debian's chromium for the browser tests"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq chromium >/dev/null; }

test: setup browser
	$(PY) -m pytest

# The fast tests as another processor computes them: numba compiles for a generic x86-64 and numpy
# leaves out its AVX-512 sorts, so a result that depends on one processor's rounding or on an
# unstable sort fails here first (issue 10).
EMULATE := NUMBA_CPU_NAME=generic NPY_DISABLE_CPU_FEATURES="AVX512_SPR AVX512_ICL X86_V4"
test-emulated: setup
	$(EMULATE) $(PY) -m pytest -m "not real_model and not browser" -p no:cacheprovider

# The browser tests with one core held by a busy loop (issue 19): a test that waits a fixed time
# instead of for a condition passes on an idle machine and fails here. The loop is stopped however
# pytest ends (trap), and Ctrl-C reaches it too (same process group).
test-loaded: setup browser
	@$(PY) -c "while True: pass" & spin=$$!; trap 'kill $$spin 2>/dev/null' EXIT INT TERM; \
		echo "one core held by pid $$spin"; \
		$(PY) -m pytest -m browser -p no:cacheprovider

lint: setup
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

bench: setup
	$(PY) benchmarks/bench_pipeline.py
	$(PY) benchmarks/bench_ingest.py
	$(PY) benchmarks/bench_app.py
	$(PY) benchmarks/bench_store.py
	$(PY) benchmarks/bench_ray.py

# The map component (frontend/): TypeScript checked, bundled with esbuild into frontend/dist/atlas-map.js,
# which is committed so that `make run` and `make test` need no Node. tests/test_frontend.py fails
# when the sources changed after the last build.
frontend:
	cd frontend && npm ci --no-audit --no-fund && npm run check && npm run build

clean:
	rm -rf $(VENV) .pytest_cache
