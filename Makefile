# Everything a fresh clone needs: `make run` and `make test` set up the virtualenv,
# install, and generate the gRPC code first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
INSTALLED := $(VENV)/.installed
GENERATED := gen/.generated
PROTOS := $(wildcard protos/croupier/v1/*.proto)

.PHONY: setup gen run serve bots play test lint bench soak clean

setup: $(INSTALLED) $(GENERATED)

$(INSTALLED): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	echo "$(CURDIR)/gen" > "$$($(BIN)/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/croupier_gen.pth"
	touch $@

gen: $(GENERATED)

$(GENERATED): $(INSTALLED) $(PROTOS)
	rm -rf gen && mkdir -p gen
	$(BIN)/python -m grpc_tools.protoc -Iprotos --python_out=gen --grpc_python_out=gen --pyi_out=gen $(PROTOS)
	touch gen/croupier/__init__.py gen/croupier/v1/__init__.py
	touch $@

run: setup
	$(BIN)/croupier run

serve: setup
	$(BIN)/croupier serve

bots: setup
	$(BIN)/croupier bots

play: setup
	$(BIN)/croupier play dou_dizhu

test: setup
	$(BIN)/ruff check .
	$(BIN)/python -m pytest

lint: setup
	$(BIN)/ruff check .

bench: setup
	$(BIN)/python -m bench.engine_throughput
	$(BIN)/python -m bench.rpc_latency
	$(BIN)/python -m bench.strength speed
	@echo "strength: python -m bench.strength ladder dou_dizhu | duel --level hard --opponent rlcard (hours on 2 cores)"

soak: setup  # not in CI: minutes of load with random kills (SOAK_ARGS="--seconds 300 ...")
	$(BIN)/python -m bench.soak $(SOAK_ARGS)

clean:
	rm -rf $(VENV) gen var .pytest_cache .hypothesis
