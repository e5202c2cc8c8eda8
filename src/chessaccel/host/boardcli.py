"""The board on the command line: ``chessaccel board info`` and ``chessaccel board-sim``.

- ``board_info_main(args)``: ``chessaccel board info --port PORT``.
- ``board_sim_main(args)``: ``chessaccel board-sim`` (from sim/boardsim.py).

The board as a backend (``--backend verilator`` / ``serial:PORT``) is host/backends/board/.
"""

import sys

from chessaccel.sim.boardsim import add_board_sim_arguments, board_sim_main

from .backends.board.client import DEFAULT_RETRIES, DEFAULT_TIMEOUT, BoardClient, BoardError
from .backends.board.transport import TransportError, open_transport

__all__ = ["board_info_main", "board_sim_main", "add_board_info_arguments",
           "add_board_sim_arguments"]

EXIT_FAILURE = 2


def add_board_info_arguments(parser):
    parser.add_argument("--port", required=True, help="serial port or pty of the board")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT,
                        help=f"seconds to wait for each reply (default {DEFAULT_TIMEOUT})")
    parser.add_argument("--retries", type=int, default=DEFAULT_RETRIES,
                        help=f"times a request is sent again (default {DEFAULT_RETRIES})")


def board_info_main(args):
    """``chessaccel board info --port PORT``: print what the board reports; exit status."""
    try:
        with open_transport(args.port) as transport:
            client = BoardClient(transport, timeout=args.timeout, retries=args.retries)
            info = client.info()
            status = client.status()
    except (TransportError, BoardError) as error:
        print(f"chessaccel board info: {error}", file=sys.stderr)
        return EXIT_FAILURE
    for line in info.lines():
        print(line)
    print(f"busy cores: {status['busy']:0{max(info.cores, 1)}b}")
    print(f"frames received: {status['good_frames']} good, {status['bad_frames']} bad")
    return 0
