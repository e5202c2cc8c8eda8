# chessaccel: two commands do all the set-up on a fresh Debian 12 machine (root or sudo):
#   make demo   - one position on the model, the RTL and OpenCL side by side; the engine plays itself
#   make test   - run the test suite (fast tier; `make test-long` runs the full sweeps)
SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
JOBS ?= 2
DEMO_FEN ?= r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1
DEMO_DEPTH ?= 4

PATHS ?= src/chessaccel/model src/chessaccel/host src/chessaccel/contract

.PHONY: all setup system-packages demo test test-long mutation bench bench-rtl bench-backends synth-movegen synth \
	board-speed clean synth-blocks synth-records synth-results gate-check engine-figures

all: demo

# System packages: Icarus Verilog (cocotb), Verilator + g++ (the compiled board simulation),
# python3-venv (Debian's python needs it for `python3 -m venv`), stockfish (the engine tests'
# and `chessaccel match`'s opponent; Debian puts it at /usr/games/stockfish), openfpgaloader
# (`chessaccel board program` and `board detect`, and their tests), pocl-opencl-icd (Debian's
# PoCL 3.1 on LLVM 15 as a second CPU OpenCL platform, listed before the wheel's: PoCL 3.0 of
# pyopencl[pocl], on LLVM 14, names CPUs newer than LLVM 14 'generic' and builds no kernel on
# them, e.g. AMD's Zen 5: "unknown target CPU 'generic'").
system-packages:
	@missing=""; \
	command -v iverilog >/dev/null || missing="$$missing iverilog"; \
	command -v verilator >/dev/null || missing="$$missing verilator"; \
	command -v g++ >/dev/null || missing="$$missing g++"; \
	command -v make >/dev/null || missing="$$missing make"; \
	python3 -c "import ensurepip, venv" 2>/dev/null || missing="$$missing python3-venv"; \
	[ -x /usr/games/stockfish ] || command -v stockfish >/dev/null || missing="$$missing stockfish"; \
	command -v openFPGALoader >/dev/null || missing="$$missing openfpgaloader"; \
	[ -e /etc/OpenCL/vendors/pocl.icd ] || missing="$$missing pocl-opencl-icd"; \
	if [ -n "$$missing" ]; then \
	  echo "apt-get install:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

$(STAMP): pyproject.toml | system-packages
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[synth,serial,test,ray]'
	touch $(STAMP)

setup: system-packages $(STAMP)

# One contract, several implementations: the sample position searched on the model, the RTL
# search core (Verilator; built on first use) and the OpenCL kernels (PoCL on the CPU here),
# side by side (same score, move and nodes, each one's nodes/s); then the engine plays itself for
# a few moves on OpenCL (UCI both sides, PGN under out/demo/).
demo: setup
	$(VENV)/bin/chessaccel compare "$(DEMO_FEN)" --depth $(DEMO_DEPTH) --backends model,rtl,opencl \
	  --out out/demo/compare.json
	$(VENV)/bin/chessaccel match --opponent "$(VENV)/bin/chessaccel uci" \
	  --opponent-option Backend=opencl --backend opencl --games 1 --tc 2+0.05 --max-plies 8 \
	  --name demo-selfplay --out out/demo/selfplay.json
	@cat out/demo/selfplay.pgn

# pytest-xdist's workers; a crashed one ends the run (3.8.0 can hang replacing it: docs/testing.md)
XDIST = -n $(JOBS) --dist loadgroup --max-worker-restart 0

test: setup
	$(PY) -m pytest $(XDIST) -m "not long" --durations=15

test-long: setup
	$(PY) -m pytest $(XDIST) -m "long" --durations=25

# Mutation testing (mutmut 2, JOBS processes on shares of the files, niced; long: hours for the default PATHS on 2 cores;
# incremental: run it again to go on). `make mutation PATHS=src/chessaccel/contract/position.py` for a subset.
mutation: setup
	@$(PY) -c "import mutmut" 2>/dev/null || $(PY) -m pip install -q 'mutmut>=2.5,<3'
	$(PY) tools/mutation.py $(PATHS) --jobs $(JOBS) $(if $(SKIP),--skip $(SKIP)) $(if $(SAMPLE),--sample $(SAMPLE)) $(if $(MUTANT_TIMEOUT),--mutant-timeout $(MUTANT_TIMEOUT))

bench: setup
	$(VENV)/bin/chessaccel bench --backend model

bench-rtl: setup
	$(VENV)/bin/chessaccel bench --backend rtl

# Every implementation's nodes/s in one table and plot (docs/benchmarks/backends.*): the model,
# Verilator, the projected FPGA, PoCL, the H100 record and stockfish (docs/opencl.md)
bench-backends: setup
	$(PY) -m chessaccel.lab.crossbench

synth-movegen: setup
	$(PY) -m chessaccel.synth movegen-all --summary out/synth/summary-movegen.json --chart out/synth/summary-movegen.png

# Bitstreams (never programmed) for the boards, CORES SearchCores each, plus the iCEBreaker link
# build, then synth/RESULTS.md from the records. The clocks come from the committed records of
# earlier place-and-route runs (synth/records); long: tens of minutes per 85F board.
# The default builds three cores of two threads (hdl/interleave.py: one step of one of two jobs a
# clock, 38 MHz alone against 22 for the one-thread core) placed by nextpnr's electrostatic
# placer with seed 2: from the committed records both 85F boards met their clocks so (ULX3S-85F
# 31.25 MHz, Fmax 34.01; OrangeCrab-85F 36.92 MHz, Fmax 45.85; docs/synthesis.md). heap's
# placements of these cores mostly stalled on the ULX3S. THREADS=1 builds the one-thread core.
CORES ?= 3
THREADS ?= 2
SEED ?= 2
PLACER ?= static
SYNTH_BOARDS ?= ulx3s-85f orangecrab-85f
synth: setup src/chessaccel/synth/records/blocks/searchcore.json
	for board in $(SYNTH_BOARDS); do \
	  $(VENV)/bin/chessaccel synth --board $$board --cores $(CORES) --threads $(THREADS) \
	    --seed $(SEED) --placer $(PLACER) || exit 1; \
	done
	$(VENV)/bin/chessaccel synth --board icebreaker --cores 0
	$(PY) -m chessaccel.synth.results --plot out/synth/results.png

# The records the board flow starts from: the SearchCore and the link alone (about half an hour
# of place and route) and the RTL's cycles per node on the bench set. The file rule makes them
# only where the committed record is missing; `make synth-records` refreshes them.
SYNTH_RECORDS = $(PY) -m chessaccel.synth searchcore searchcore2 boardtop-nocore --records && \
	$(VENV)/bin/chessaccel bench --backend rtl --json --out src/chessaccel/synth/records/bench-rtl.json \
	  --plot out/bench-rtl.png && $(PY) -m chessaccel.synth.results
synth-records: setup
	$(SYNTH_RECORDS)

src/chessaccel/synth/records/blocks/searchcore.json: | setup
	$(SYNTH_RECORDS)

synth-results: setup
	$(PY) -m chessaccel.synth.results --plot out/synth/results.png

# Every block alone behind the scan harness (docs/synthesis.md's block table).
synth-blocks: setup
	$(PY) -m chessaccel.synth movegen-all search-all boardtop-nocore

# The synthesised SearchCore netlist (ECP5 cells) under Verilator against the model and the RTL.
gate-check: setup
	$(PY) -m chessaccel.synth.gatelevel
	$(PY) -m chessaccel.synth.gatelevel --threads 2

board-speed: setup
	$(PY) -m chessaccel.lab.boardspeed

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
