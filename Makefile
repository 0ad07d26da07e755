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
	$(BIN)/lint-imports

# A Debian package the tests need, installed where its binary is missing: $(1) the binary,
# $(2) the package, $(3) what needs it (as root with apt-get, else with password-less sudo).
define apt_install
	@if [ -x $(1) ]; then exit 0; \
	elif [ "$$(id -u)" = 0 ]; then \
	  echo "Installing Debian's $(2) for $(3) (apt-get)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(2) >/dev/null; \
	elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then \
	  echo "Installing Debian's $(2) for $(3) (sudo apt-get)"; \
	  sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(2) >/dev/null; \
	else \
	  echo "$(3) need $(1): run 'sudo apt-get install $(2)' (or 'make $(2)' as root)." >&2; \
	  exit 1; \
	fi
endef

# Browser tests drive Debian's Chromium (Playwright's own browser download is not used).
chromium:
	$(call apt_install,$(CHROMIUM),chromium,the browser tests)

# The pooler tests run Debian's PgBouncer in front of the test PostgreSQL (docs/operations.md).
pgbouncer:
	$(call apt_install,$(PGBOUNCER),pgbouncer,the pooler tests)

# The suite runs on TEST_WORKERS pytest-xdist workers, each test file on one worker (its
# module's site is built once) and the browser tests together on one (tests/conftest.py); each worker has a Redis of its own (tests/conftest.py).
# TEST_WORKERS=0 runs it in this one process. Three on a 2-core machine: much of the suite
# waits (a minute's turn, a failover, a browser's answer), and a third worker uses that time.
TEST_WORKERS ?= 3
test: lint chromium pgbouncer
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadgroup

# Screenshots of each screen, taken by the browser tests, into docs/screenshots/.
screenshots: $(DEV_STAMP) chromium
	ADMINIUM_SCREENSHOTS=$(CURDIR)/docs/screenshots $(BIN)/python -m pytest -q tests/browser

bench: $(DEV_STAMP)
	for script in bench/*.py; do $(BIN)/python $$script; done

# Starts over: the embedded servers' data goes, from ADMINIUM_INSTANCE's folder (./instance
# unset). Refuses while `make run` is using it, and a folder that holds no instance's data.
reset:
	@folder="$${ADMINIUM_INSTANCE:-instance}"; \
	if [ ! -e "$$folder" ]; then echo "nothing to delete: no $$folder"; exit 0; fi; \
	if [ ! -e "$$folder/pg" ] && [ ! -e "$$folder/redis.db" ] && [ ! -e "$$folder/secret_key" ]; then \
	  echo "$$folder holds no embedded server's data (no pg, redis.db or secret_key): not deleted." >&2; exit 1; \
	fi; \
	if [ -f "$$folder/pg/postmaster.pid" ] && kill -0 "$$(head -n1 "$$folder/pg/postmaster.pid")" 2>/dev/null; then \
	  echo "PostgreSQL is running on $$folder/pg: stop 'make run' (Ctrl-C) first." >&2; exit 1; \
	fi; \
	rm -rf "$$folder" && echo "deleted $$folder"
