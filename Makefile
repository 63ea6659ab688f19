# Two commands on a fresh machine:  make run   |   make test
# Both create .venv from requirements.txt on first use (and again when it changes).

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
ARTIFACTS ?= artifacts
PORT ?= 8501
HOST ?= 0.0.0.0

.PHONY: run test setup build browser share lint bench clean help

help:
	@echo "make run    set up, build the bundled corpus if needed, start the dashboard on http://localhost:$(PORT)"
	@echo "make test   set up, then run the whole test suite (unit, end-to-end, browser)"
	@echo "make share  serve the dashboard read-only to other machines on the network (EDITOR_TOKEN=... for editors)"
	@echo "make bench  run the benchmarks (slow; writes BENCHMARKS.md figures)"
	@echo "make lint   ruff"

$(VENV)/.installed: requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	touch $@

setup: $(VENV)/.installed

# Builds only when the bundled corpus's artifacts are missing or stale (inputs or settings changed).
build: setup
	$(PY) -m pipeline --artifacts $(ARTIFACTS) build

run: build
	$(PY) -m streamlit run app.py --server.port $(PORT) --server.headless true \
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

# Debian's Chromium for the browser tests (never `playwright install`: it downloads a browser).
browser:
	@command -v chromium >/dev/null 2>&1 || { \
		echo "installing Debian's chromium for the browser tests"; \
		SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
		$$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq chromium >/dev/null; }

test: setup browser
	$(PY) -m pytest

lint: setup
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .

bench: setup
	$(PY) benchmarks/bench_pipeline.py
	$(PY) benchmarks/bench_app.py
	$(PY) benchmarks/bench_ray.py

clean:
	rm -rf $(VENV) .pytest_cache
