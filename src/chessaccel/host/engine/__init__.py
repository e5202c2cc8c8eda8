"""The host engine: a UCI chess engine that searches the top of the tree in software and hands
the last ``HardwarePlies`` plies (plus quiescence) to any number of accelerators.

One file per concern:

- ``scores``:  mate scores across the host/accelerator boundary (job windows and results).
- ``order``:   legal moves at the top in the accelerator's own generation order (MVV/LVA).
- ``hostboard``: the host's plies in compiled code (hostboard.cpp through ctypes): moves in
               that order, the boards jobs carry, keys, draws; held to python-chess by tests.
- ``tt``:      the transposition table (size from the UCI ``Hash`` option).
- ``jobs``:    the job interface: executors that run leaf jobs on a backend's accelerators
               (a process pool for ``model``, the board link's cores, one ``search_many`` call
               per batch for batch backends such as ``rtl`` and OpenCL).
- ``search``:  iterative deepening, aspiration windows, PVS, TT, killers, draws, the frontier.
- ``timeman``: how long to think under a clock.
- ``uci``:     the UCI protocol (``chessaccel uci``).
- ``epd``, ``match``, ``elo``, ``openings``: the tools for people comparing engines and hardware.

docs/engine.md describes the design and the measured figures.
"""
