# Everything a fresh clone needs: `make run` and `make test` set up the virtualenv, install
# from the lock (uv.lock: every package pinned with its hashes) and generate the gRPC code
# first. Running installs the package with its `server` extra; the test, lint and bench targets
# add the `dev` extra (test tools, rlcard, OpenSpiel, Playwright, ...) on top, in either order.
# uv itself is pinned by version and hashes in requirements-uv.txt.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# --frozen: install exactly the lock, never re-resolve; --inexact: keep what the other extra
# installed; the package builds without isolation, from the lock's `build` group
UV_SYNC := UV_PROJECT_ENVIRONMENT=$(VENV) UV_PYTHON_DOWNLOADS=never $(BIN)/uv sync --frozen --inexact --quiet
INSTALLED := $(VENV)/.installed
DEV_INSTALLED := $(VENV)/.installed-dev
GENERATED := gen/.generated
PROTOS := $(wildcard protos/croupier/v1/*.proto)
# the web client is built where npm is (run and test skip it otherwise)
WEB_IF_NPM := $(if $(shell command -v npm 2>/dev/null),web)
WEB_DIST := web/dist/index.html
WEB_SRC := $(shell find web/src -path web/src/gen -prune -o -type f -print 2>/dev/null) web/build.mjs web/build-cards.mjs
# `make lock` moves every pin to the newest release pyproject.toml allows;
# `make lock LOCK_ARGS=` only follows pyproject.toml's changes and keeps the other pins
LOCK_ARGS ?= --upgrade
# where the installed googleapis-common-protos keeps its .proto files (the site-packages root)
GOOGLEAPIS_ROOT := from pathlib import Path; import google.rpc.error_details_pb2 as m; print(Path(m.__file__).parents[2])

.PHONY: setup run-setup gen web run serve bots play test test-latest lint lock bench soak clean

# for working on croupier: the runtime, the dev tools and the generated code
setup: $(DEV_INSTALLED) $(GENERATED)

# for running it: the runtime and the generated code only
run-setup: $(INSTALLED) $(GENERATED)

$(BIN)/uv: requirements-uv.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --disable-pip-version-check --require-hashes -r requirements-uv.txt
	touch $@

$(INSTALLED): pyproject.toml uv.lock setup.py $(BIN)/uv
	$(UV_SYNC) --extra server --no-install-project
	$(UV_SYNC) --extra server
	touch $@

$(DEV_INSTALLED): $(INSTALLED)
	$(UV_SYNC) --extra dev --no-install-project
	$(UV_SYNC) --extra dev
	touch $@

# the install generated gen/ (setup.py); this brings it up to date after a .proto changes
gen: $(GENERATED)

$(GENERATED): $(INSTALLED) $(PROTOS)
	$(BIN)/python -c 'import runpy; runpy.run_path("setup.py", run_name="generate")'
	touch $@

lock: $(BIN)/uv
	UV_PYTHON_DOWNLOADS=never $(BIN)/uv lock $(LOCK_ARGS)

# The browser client: Preact components in TypeScript over the API types generated from
# protos/ by protoc-gen-es (the same protoc as the Python code), type-checked and bundled by
# esbuild (web/build.mjs) into web/dist: content-hashed files with brotli and gzip copies, the
# card faces a file each, which the server's web port serves. npm ci keeps it to the committed
# package-lock.json.
web: $(WEB_DIST)

web/node_modules/.installed: web/package.json web/package-lock.json
	cd web && npm ci --no-audit --no-fund --loglevel=error
	touch $@

# google/rpc/error_details.proto (ErrorInfo: the reason codes of refusals) comes from the
# googleapis-common-protos install that grpcio-status brings
$(WEB_DIST): $(INSTALLED) web/node_modules/.installed $(PROTOS) $(WEB_SRC)
	rm -rf web/src/gen && mkdir -p web/src/gen
	$(BIN)/python -m grpc_tools.protoc -Iprotos -I"$$($(BIN)/python -c "$(GOOGLEAPIS_ROOT)")" \
		--plugin=protoc-gen-es=web/node_modules/.bin/protoc-gen-es \
		--es_out=web/src/gen --es_opt=target=ts $(PROTOS) google/rpc/error_details.proto
	cd web && npm run --silent check && npm run --silent build

run: run-setup $(WEB_IF_NPM)
	$(BIN)/croupier run

serve: run-setup
	$(BIN)/croupier serve

bots: run-setup
	$(BIN)/croupier bots

play: run-setup
	$(BIN)/croupier play dou_dizhu

# PYTEST_ARGS (make variable or environment) narrows the run, e.g. PYTEST_ARGS=tests/test_x.py;
# the tests run in one process per core, a test file to a process (module fixtures are shared)
test: setup $(WEB_IF_NPM)
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/python -m pytest -n auto --dist loadfile $(PYTEST_ARGS)

# the suite against the newest releases pyproject.toml allows, not the lock: what the next
# `make lock` would bring (in its own virtualenv; not part of CI)
test-latest:
	rm -rf .venv-latest && $(PYTHON) -m venv .venv-latest
	.venv-latest/bin/pip install -q -e '.[dev]'
	.venv-latest/bin/python -m pytest -n auto --dist loadfile $(PYTEST_ARGS)

lint: setup
	$(BIN)/ruff check .
	$(BIN)/mypy

bench: setup $(WEB_IF_NPM)
	$(BIN)/python -m bench.engine_throughput
	$(BIN)/python -m bench.random_play
	$(BIN)/python -m bench.rpc_latency
	$(BIN)/python -m bench.strength speed
	$(BIN)/python -m bench.think_time --positions 10
	$(BIN)/python -m bench.inference --positions 100 --level easy
	$(BIN)/python -m bench.sdk_throughput --rounds 3
	$(BIN)/python -m bench.bridge_roundtrip
	$(BIN)/python -m bench.envs_throughput --seconds 1
	$(BIN)/python -m bench.matchmaking grouping --store sqlite
	$(BIN)/python -m bench.matchmaking match --store sqlite --players 100
	$(BIN)/python -m bench.web_weight --rounds 1
	@echo "strength: python -m bench.strength ladder GAME | duel --level hard --opponent rlcard | sides GAME --level hard (hours on 2 cores; --results FILE resumes); python -m bench.regret GAME --level easy (a level against the heuristic, decision by decision); python -m bench.agreement GAME --high expert --low hard (where two levels choose differently, and what it is worth); python -m bench.doppelkopf_reservations (what each reservation is worth to a hand)"

soak: run-setup  # not in CI: minutes of load with random kills (SOAK_ARGS="--seconds 300 ...")
	$(BIN)/python -m bench.soak $(SOAK_ARGS)

clean:
	rm -rf $(VENV) .venv-latest gen var .pytest_cache .hypothesis web/node_modules web/dist web/src/gen
