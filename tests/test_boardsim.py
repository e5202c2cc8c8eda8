"""The simulated board (sim/boardsim.py: BoardTop under Verilator on a pty) and the host client.

The board is reached exactly as a real one: a pseudo-terminal, the link protocol, the same
client code (host/client.py) and transports (host/transport.py). Jobs are compared with the
model (sim/model/search.py) field by field; fault injection wraps the transport.
"""

import argparse
import os
import time

import pytest

from chessaccel.defs import INF, Mode
from chessaccel.host.boardcli import board_info_main
from chessaccel.host.client import BoardClient, BoardError, JobFailed, NoBoardError
from chessaccel.host.position import chess_from_board
from chessaccel.host.transport import FaultyTransport, PtyTransport, SerialTransport
from chessaccel.protocol import PROTOCOL_VERSION
from chessaccel.sim.boardsim import SIM_CLOCKS_PER_BIT, SIM_CLOCK_HZ, BoardSim, verilator_missing
from chessaccel.sim.model import search as model

needs_verilator = pytest.mark.skipif(verilator_missing() is not None,
                                     reason=f"{verilator_missing()}")

#: Fault rates tried (per byte for flip/drop/duplicate, per call for stall), docs/protocol.md.
FAULT_RATES = [
    {"flip": 0.002, "drop": 0.002, "duplicate": 0.002, "stall": 0.01},
    {"flip": 0.01, "drop": 0.01, "duplicate": 0.01, "stall": 0.05},
]


@pytest.fixture(scope="module")
def link_board():
    """A board with no search core: the link, dispatcher and UART alone."""
    with BoardSim(cores=0) as sim:
        yield sim


@needs_verilator
def test_info_over_the_pty_with_pyserial_and_plain_fds(link_board, capsys):
    for transport in (SerialTransport(link_board.port), PtyTransport(link_board.port)):
        with transport:
            info = BoardClient(transport).info()
        assert (info.version, info.cores, info.clock_hz, info.clocks_per_bit) == \
            (PROTOCOL_VERSION, 0, SIM_CLOCK_HZ, SIM_CLOCKS_PER_BIT)
    status = board_info_main(argparse.Namespace(port=link_board.port, timeout=0.5, retries=2))
    out = capsys.readouterr().out
    assert status == 0
    assert f"protocol version: {PROTOCOL_VERSION}" in out and "cores: 0" in out


@needs_verilator
@pytest.mark.parametrize("rates", FAULT_RATES)
def test_requests_get_through_a_faulty_link(link_board, rates):
    """Every request ends with the right reply or a clear error, never a wrong answer."""
    transport = FaultyTransport(PtyTransport(link_board.port), seed=11, **rates)
    with transport:
        client = BoardClient(transport, timeout=0.1, retries=30)
        before = client.status()
        for _ in range(60):
            info = client.info()
            assert (info.version, info.cores, info.clocks_per_bit) == \
                (PROTOCOL_VERSION, 0, SIM_CLOCKS_PER_BIT)
    assert sum(transport.counts.values()) > 0, "no fault was injected"
    with PtyTransport(link_board.port) as clean:
        after = BoardClient(clean).status()
    assert after["good_frames"] > before["good_frames"]


@needs_verilator
def test_no_board_answers():
    """A pty nobody serves: a clear NoBoardError, quickly, and exit status 2 from the CLI."""
    master, slave = os.openpty()
    try:
        with PtyTransport(os.ttyname(slave)) as transport:
            started = time.monotonic()
            with pytest.raises(NoBoardError, match="no board answers"):
                BoardClient(transport, timeout=0.05, retries=2).info()
            assert time.monotonic() - started < 2
        args = argparse.Namespace(port=os.ttyname(slave), timeout=0.05, retries=1)
        assert board_info_main(args) == 2
        assert board_info_main(argparse.Namespace(port="/dev/no-such-port", timeout=0.05,
                                                  retries=1)) == 2
    finally:
        os.close(master)
        os.close(slave)
