# The two commands: `make run` and `make test`. Both create .venv and install what they need.
PYTHON   ?= $(shell command -v python3.11 || command -v python3)
VENV     := .venv
BIN      := $(VENV)/bin
PIP      := $(BIN)/python -m pip install --quiet --disable-pip-version-check
# `make run` needs the app only; the tools and the browser driver come with the tests.
RUN_STAMP := $(VENV)/.installed-run
DEV_STAMP := $(VENV)/.installed-dev
CHROMIUM := /usr/bin/chromium
PGBOUNCER := /usr/sbin/pgbouncer

.PHONY: run test lint install chromium pgbouncer screenshots reset bench

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(RUN_STAMP): pyproject.toml | $(BIN)/python
	$(PIP) -e .
	touch $@

$(DEV_STAMP): pyproject.toml | $(BIN)/python
	$(PIP) -e '.[dev]'
	touch $@ $(RUN_STAMP)

install: $(DEV_STAMP)

run: $(RUN_STAMP)
	$(BIN)/adminium run

lint: $(DEV_STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy core

# Browser tests drive Debian's Chromium (Playwright's own browser download is not used).
chromium:
	@if [ -x $(CHROMIUM) ]; then exit 0; \
	elif [ "$$(id -u)" = 0 ]; then \
	  echo "Installing Debian's Chromium for the browser tests (apt-get)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then \
	  echo "Installing Debian's Chromium for the browser tests (sudo apt-get)"; \
	  sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	else \
	  echo "The browser tests need $(CHROMIUM): run 'sudo apt-get install chromium' (or 'make chromium' as root)." >&2; \
	  exit 1; \
	fi

# The pooler tests run Debian's PgBouncer in front of the test PostgreSQL (docs/operations.md).
pgbouncer:
	@if [ -x $(PGBOUNCER) ]; then exit 0; \
	elif [ "$$(id -u)" = 0 ]; then \
	  echo "Installing Debian's PgBouncer for the pooler tests (apt-get)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq pgbouncer >/dev/null; \
	elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then \
	  echo "Installing Debian's PgBouncer for the pooler tests (sudo apt-get)"; \
	  sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq pgbouncer >/dev/null; \
	else \
	  echo "The pooler tests need $(PGBOUNCER): run 'sudo apt-get install pgbouncer' (or 'make pgbouncer' as root)." >&2; \
	  exit 1; \
	fi

# The suite runs on TEST_WORKERS pytest-xdist workers, each test file on one worker (its
# module's site is built once) and the browser tests together on one (tests/conftest.py); each worker has a Redis of its own (tests/conftest.py).
# TEST_WORKERS=0 runs it in this one process.
TEST_WORKERS ?= 2
test: lint chromium pgbouncer
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadgroup

# Screenshots of each screen, taken by the browser tests, into docs/screenshots/.
screenshots: $(DEV_STAMP) chromium
	ADMINIUM_SCREENSHOTS=$(CURDIR)/docs/screenshots $(BIN)/python -m pytest -q tests/browser

bench: $(DEV_STAMP)
	for script in bench/*.py; do $(BIN)/python $$script; done

# Starts over: the embedded servers' data goes. Refuses while `make run` is using it.
reset:
	@if [ -f instance/pg/postmaster.pid ] && kill -0 "$$(head -n1 instance/pg/postmaster.pid)" 2>/dev/null; then \
	  echo "PostgreSQL is running on instance/pg: stop 'make run' (Ctrl-C) first." >&2; exit 1; \
	fi
	rm -rf instance
