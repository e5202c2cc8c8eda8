"""The transposition table of the host's plies.

A fixed number of slots, sized from the UCI ``Hash`` option (MiB), each holding one entry for
the position whose key hashes to it: always-replace, except that an entry of the current search
is kept against a shallower one of the same search. Keys are the host's 64-bit Zobrist keys
(engine/hostboard.py: equal where python-chess's transposition keys are equal: pieces, side,
castling rights, en-passant square when a capture there is legal); the full key is stored, so a
slot answers only for its own position.

Leaf jobs are not stored: the accelerator keeps no table and the host sees only the frontier.
"""

from dataclasses import dataclass

__all__ = ["Bound", "TTEntry", "TranspositionTable", "ENTRY_BYTES", "MAX_HASH_MB"]

#: Bytes one slot costs in CPython (the entry object, its fields, the list slot), measured with
#: tracemalloc on a full table: what turns the ``Hash`` option's MiB into a slot count.
ENTRY_BYTES = 120
MAX_HASH_MB = 4096


class Bound:
    EXACT = 0
    LOWER = 1       # the score is at least this (a beta cutoff)
    UPPER = 2       # the score is at most this (every move failed low)


@dataclass(slots=True)
class TTEntry:
    key: int
    depth: int
    bound: int
    score: int          # mates counted from this node (scores.to_tt)
    move: object        # chess.Move or None
    generation: int


class TranspositionTable:
    def __init__(self, megabytes=16):
        self.resize(megabytes)

    def resize(self, megabytes):
        if not 1 <= megabytes <= MAX_HASH_MB:
            raise ValueError(f"hash size {megabytes} MiB out of range 1..{MAX_HASH_MB}")
        self.megabytes = megabytes
        self.slots = max(1, megabytes * (1 << 20) // ENTRY_BYTES)
        self.clear()

    def clear(self):
        self._table = [None] * self.slots
        self.generation = 0
        self.used = 0

    def new_search(self):
        self.generation += 1

    def probe(self, key):
        entry = self._table[key % self.slots]
        if entry is not None and entry.key == key:
            return entry
        return None

    def store(self, key, depth, bound, score, move):
        index = key % self.slots
        old = self._table[index]
        if old is None:
            self.used += 1
        elif (old.key != key and old.generation == self.generation and old.depth > depth):
            return      # a deeper entry of this search stays
        elif old.key == key and move is None:
            move = old.move     # keep the move we knew for this position
        self._table[index] = TTEntry(key, depth, bound, score, move, self.generation)

    def hashfull(self):
        """Permille of the slots in use (UCI ``hashfull``)."""
        return min(1000, self.used * 1000 // self.slots)
