# hms-catalog: `make demo` and `make test` are all a newcomer needs (Python 3.11+ and Java 17).
SHELL := /bin/bash
# The first interpreter that really runs and is 3.11 or newer (pyenv shims may name versions not active).
PYTHON ?= $(shell for p in python3 python3.11 python3.12 python3.13; do \
	$$p -c 'import sys; sys.exit(sys.version_info < (3, 11))' >/dev/null 2>&1 && { echo $$p; break; }; done)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEMO_DIR ?= .demo
# make demo STORE=s3: the demo's warehouse on a local S3 endpoint (moto's server) instead of the local disk.
STORE ?= file

.PHONY: install demo lint test test-fast stop bench docs clean help

help:
	@echo "make demo   - install into .venv, start the embedded metastore, build a warehouse, show the catalog"
	@echo "              (make demo STORE=s3: the warehouse on a local S3 endpoint, moto's server)"
	@echo "make lint   - install into .venv and check the code: ruff (lint, import order) and mypy"
	@echo "make test   - install into .venv, run make lint, then the test suite (starts its own metastore)"
	@echo "              (make test TEST_WORKERS=N: N parallel workers; by default 2 on two or three cores, one per two from four)"
	@echo "make test-fast - the same without the end-to-end tests marked slow (Spark, kill -9 runs, servers of their own)"
	@echo "make stop   - stop the demo's metastore"
	@echo "make bench  - run the benchmarks in benchmarks/ (results in benchmarks/results/)"
	@echo "make docs   - build the documentation site (MkDocs, from docs/) into site/"
	@echo "make clean  - remove .venv and the demo's files"

$(STAMP): pyproject.toml
	@if [ -z "$(PYTHON)" ]; then echo "hms-catalog needs Python 3.11 or newer: make PYTHON=/path/to/python3.11 ..."; exit 1; fi
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "hms-catalog needs Python 3.11 or newer: make PYTHON=/path/to/python3.11 ...")'
	@if [ -n "$$JAVA_HOME" ] && [ -x "$$JAVA_HOME/bin/java" ]; then :; elif command -v java >/dev/null; then :; else \
		echo "hms-catalog's embedded metastore needs Java 17: install it or set JAVA_HOME"; exit 1; fi
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,connect,docs]'
	@# The kerberos extra compiles against MIT Kerberos: installed when its headers and a compiler are here.
	@if command -v krb5-config >/dev/null && command -v cc >/dev/null; then \
		echo "$(BIN)/python -m pip install --quiet -e '.[kerberos]'"; $(BIN)/python -m pip install --quiet -e '.[kerberos]'; \
	else echo "note: Kerberos support not installed (needs libkrb5-dev and a C compiler); its tests will skip"; fi
	@touch $(STAMP)

install: $(STAMP)

demo: install
ifeq ($(STORE),s3)
	$(BIN)/python -m hms_catalog.demo --dir $(DEMO_DIR) --store s3
else
	$(BIN)/python -m hms_catalog.demo --dir $(DEMO_DIR)
	$(BIN)/python -m spark_connector.demo --dir $(DEMO_DIR)
	$(BIN)/python -m service.thrift.demo --dir $(DEMO_DIR)
endif

# ruff and mypy are pinned in the dev extra, so a new release cannot turn this red on its own.
lint: install
	$(BIN)/ruff check hms_catalog planner service spark_connector tests benchmarks docs/examples
	$(BIN)/mypy hms_catalog planner service spark_connector

# Two workers (pytest-xdist, each a test session with its own metastore and SparkSession, taking groups of tests
# whole: tests/support/workers.py) on two or three cores, one per two cores from four, none on one core. On this
# project's two-core machine the suite waits on processes, servers and timeouts for much of its time: one process
# kept 1.15 cores busy and took 1,587 s; two workers kept 1.74 busy and took 1,069 s (each test 1.33 times slower).
# make test TEST_WORKERS=N to choose (0: one process).
TEST_WORKERS ?= $(shell cores=$$(nproc 2>/dev/null || echo 2); echo $$((cores >= 4 ? cores / 2 : (cores >= 2 ? 2 : 0))))
PARALLEL := $(if $(filter-out 0,$(TEST_WORKERS)),-n $(TEST_WORKERS) --dist loadgroup --no-loadscope-reorder)

test: install lint
	$(BIN)/python -m pytest $(PARALLEL) --durations=30

test-fast: install lint
	$(BIN)/python -m pytest $(PARALLEL) -m "not slow"

stop:
	@if [ -x $(BIN)/hms-catalog ]; then $(BIN)/hms-catalog metastore stop --dir $(DEMO_DIR)/metastore; fi

# The bench extra (DuckDB's TPC-DS generator for bench_tpcds.py) is installed on the first make bench only.
$(VENV)/.installed-bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[bench]'
	@touch $@

bench: $(VENV)/.installed-bench
	@for script in benchmarks/bench_*.py; do echo "== $$script"; $(BIN)/python $$script || exit 1; done

# The site is built strictly: a broken link or a page missing from the nav fails the build.
docs: install
	@# NO_MKDOCS_2_WARNING: Material prints a notice about its successor on every build; the notice is known.
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

clean: stop
	rm -rf $(VENV) $(DEMO_DIR) *.egg-info
