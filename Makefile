# chessaccel: two commands do all the set-up on a fresh Debian 12 machine (root or sudo):
#   make demo   - search a sample position on the behavioural model
#   make test   - run the test suite (fast tier; `make test-long` runs the full sweeps)
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
JOBS ?= 2
DEMO_FEN ?= r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4

.PHONY: all setup system-packages demo test test-long bench bench-rtl bench-backends synth-movegen synth board-speed clean

all: demo

# System packages: Icarus Verilog (cocotb), Verilator + g++ (the compiled board simulation),
# python3-venv (Debian's python needs it for `python3 -m venv`).
system-packages:
	@missing=""; \
	command -v iverilog >/dev/null || missing="$$missing iverilog"; \
	command -v verilator >/dev/null || missing="$$missing verilator"; \
	command -v g++ >/dev/null || missing="$$missing g++"; \
	command -v make >/dev/null || missing="$$missing make"; \
	command -v /usr/games/stockfish >/dev/null || missing="$$missing stockfish"; \
	python3 -c "import ensurepip, venv" 2>/dev/null || missing="$$missing python3-venv"; \
	if [ -n "$$missing" ]; then \
	  echo "apt-get install:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

$(STAMP): pyproject.toml | system-packages
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[synth,serial]'
	touch $(STAMP)

setup: system-packages $(STAMP)

demo: setup
	$(VENV)/bin/chessaccel moves "$(DEMO_FEN)"
	$(VENV)/bin/chessaccel perft "$(DEMO_FEN)" --depth 3
	$(VENV)/bin/chessaccel search "$(DEMO_FEN)" --depth 3

test: setup
	$(PY) -m pytest -n $(JOBS) -m "not long" --durations=15

test-long: setup
	$(PY) -m pytest -n $(JOBS) -m "long" --durations=25

bench: setup
	$(VENV)/bin/chessaccel bench --backend model

bench-rtl: setup
	$(VENV)/bin/chessaccel bench --backend rtl

# Every implementation's nodes/s in one table and plot (docs/benchmarks/backends.*): the model,
# Verilator, the projected FPGA, PoCL, the H100 record and stockfish (docs/opencl.md)
bench-backends: setup
	$(PY) -m chessaccel.host.crossbench

synth-movegen: setup
	$(PY) -m chessaccel.synth movegen-all --summary out/synth/summary-movegen.json --chart out/synth/summary-movegen.png

synth: setup
	$(PY) -m chessaccel.synth movegen-all search-all boardtop-nocore

board-speed: setup
	$(PY) -m chessaccel.sim.boardspeed

clean:
	rm -rf build sim_build out .pytest_cache .hypothesis
