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

.PHONY: all setup system-packages demo test test-long bench bench-rtl synth-movegen synth board-speed engine-figures clean

all: demo

# System packages: Icarus Verilog (cocotb), Verilator + g++ (the compiled board simulation),
# python3-venv (Debian's python needs it for `python3 -m venv`), stockfish (the engine tests'
# and `chessaccel match`'s opponent; Debian puts it at /usr/games/stockfish).
system-packages:
	@missing=""; \
	command -v iverilog >/dev/null || missing="$$missing iverilog"; \
	command -v verilator >/dev/null || missing="$$missing verilator"; \
	command -v g++ >/dev/null || missing="$$missing g++"; \
	command -v make >/dev/null || missing="$$missing make"; \
	python3 -c "import ensurepip, venv" 2>/dev/null || missing="$$missing python3-venv"; \
	[ -x /usr/games/stockfish ] || command -v stockfish >/dev/null || missing="$$missing stockfish"; \
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

synth-movegen: setup
	$(PY) -m chessaccel.synth movegen-all --summary out/synth/summary-movegen.json --chart out/synth/summary-movegen.png

synth: setup
	$(PY) -m chessaccel.synth movegen-all search-all boardtop-nocore

board-speed: setup
	$(PY) -m chessaccel.sim.boardspeed

# The host engine's figures (docs/engine.md): hours on the model; each step writes under out/
# as it goes and resumes where an interrupted run stopped.
ENGINE_OPPONENT ?= /usr/games/stockfish
engine-figures: setup
	$(VENV)/bin/chessaccel bench --dispatch
	$(VENV)/bin/chessaccel epd tests/data/wac.epd --nodes 10000 --resume
	$(VENV)/bin/chessaccel epd tests/data/wac.epd --movetime 1000 --resume
	for elo in 1350 1600; do \
	  $(VENV)/bin/chessaccel match --opponent $(ENGINE_OPPONENT) --opponent-option UCI_LimitStrength=true \
	    --opponent-option UCI_Elo=$$elo --games 100 --tc 10+0.1 --name sf-elo$$elo --resume || exit 1; \
	done

clean:
	rm -rf build sim_build out .pytest_cache .hypothesis
