"""The bench: a fixed, documented set of search jobs whose total node count is the signature.

The set mixes opening, middlegame, tactical and endgame positions (the standard perft positions
of the Chessprogramming Wiki, Win At Chess #1, Bratko-Kopec #1 and #4, a pawn ending) at depths
chosen so that a run costs about 50,000 nodes: seconds on the model, minutes in an RTL simulator.
Any change to move order, search or evaluation changes the signature; that is its purpose.
"""

__all__ = ["BENCH", "BenchJob"]

from typing import NamedTuple


class BenchJob(NamedTuple):
    name: str
    fen: str
    depth: int


BENCH = (
    BenchJob("startpos", "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", 3),
    BenchJob("kiwipete", "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", 2),
    BenchJob("cpw-pos3", "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1", 4),
    BenchJob("cpw-pos4", "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1", 3),
    BenchJob("cpw-pos5", "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8", 3),
    BenchJob("cpw-pos6", "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10", 2),
    BenchJob("WAC.001", "2rr3k/pp3pp1/1nnqbN1p/3pN3/2pP4/2P3Q1/PPB4P/R4RK1 w - - 0 1", 2),
    BenchJob("BK.01", "1k1r4/pp1b1R2/3q2pp/4p3/2B5/4Q3/PPP2B2/2K5 b - - 0 1", 3),
    BenchJob("BK.04", "rnbqkb1r/p3pppp/1p6/2ppP3/3N4/2P5/PPP1QPPP/R1B1KB1R w KQkq - 0 1", 3),
    BenchJob("pawn-ending", "8/8/4k3/8/2p5/8/B2P2K1/8 w - - 0 1", 4),
)
