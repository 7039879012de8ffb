# Two entry points for a newcomer: `make run` (install, then start the app on the demo project)
# and `make test` (install, then run the whole test suite). Everything lands in ./.venv.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8501

.PHONY: run test lint install install-dev browser postgres bench clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(VENV)/.installed: requirements.txt requirements-nodeps.txt | $(BIN)/python
	$(BIN)/pip install --quiet -r requirements.txt
	$(BIN)/pip install --quiet --no-deps -r requirements-nodeps.txt
	touch $@

$(VENV)/.installed-dev: requirements-dev.txt $(VENV)/.installed
	$(BIN)/pip install --quiet -r requirements-dev.txt
	touch $@

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev

# Debian's Chromium for the end-to-end browser tests (never `playwright install`)
browser:
	@if [ ! -x /usr/bin/chromium ]; then \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && apt-get install -y -qq chromium >/dev/null; \
	  else echo "note: /usr/bin/chromium missing; run 'sudo apt-get install -y chromium' for the browser tests"; fi; \
	fi

# Debian's PostgreSQL server for the graph/run store tests (they start a throwaway cluster of their own)
postgres:
	@if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null; \
	  else echo "note: PostgreSQL missing; run 'sudo apt-get install -y postgresql' for the store tests"; fi; \
	fi

run: install
	$(BIN)/streamlit run app.py --server.port $(PORT) -- --project demo

test: install-dev browser postgres
	$(BIN)/python -m pytest -q

lint: install-dev
	$(BIN)/ruff check .
	$(BIN)/mypy tog_core

bench: install-dev
	$(BIN)/python bench/graph_load.py

clean:
	rm -rf $(VENV) .pytest_cache
