"""The blocks the synthesis flow knows by name, and the groups that synthesise several at once.

Blocks are looked up lazily: hdl/ is written by several engineers at once, and a block that has
not landed yet must be reported as such (``BlockUnavailable``), not break the others.
"""

import importlib
from dataclasses import dataclass, field

__all__ = ["BlockSpec", "BlockUnavailable", "BLOCKS", "GROUPS", "resolve", "expand"]

#: hdl/evalterms.py's term groups (its ``GROUPS``), one block each: written out rather than
#: imported, as the blocks are looked up lazily (tests/test_evalterms_rtl.py checks they agree).
EVALTERMS_GROUPS = ("pawns", "king", "mobility", "pieces", "threats")


class BlockUnavailable(Exception):
    """The named block is unknown, or its module or class does not exist (yet)."""


@dataclass(frozen=True)
class BlockSpec:
    """Where a block lives and how to construct it for synthesis."""
    name: str
    module: str
    cls: str
    summary: str
    kwargs: dict = field(default_factory=dict)

    @property
    def qualname(self):
        return f"{self.module}.{self.cls}"

    def source_hint(self):
        """The file a reader should look at, e.g. ``hdl/genvictim.py``."""
        package, _, leaf = self.module.rpartition(".")
        folder = {"chessaccel.hdl": "hdl", "chessaccel.synth": "synth"}.get(package, package)
        return f"{folder}/{leaf}.py"

    def build(self):
        """Import the module and construct the block; raises ``BlockUnavailable`` if absent."""
        try:
            module = importlib.import_module(self.module)
        except ModuleNotFoundError as error:
            if error.name is not None and self.module.startswith(error.name):
                raise BlockUnavailable(
                    f"block '{self.name}' is not available yet: {self.source_hint()} does not "
                    f"exist (expected class {self.cls})") from None
            raise BlockUnavailable(f"block '{self.name}' cannot be imported: {error}") from None
        except Exception as error:  # a half-written module must not stop the other blocks
            raise BlockUnavailable(f"block '{self.name}' cannot be imported: "
                                   f"{type(error).__name__}: {error}") from None
        factory = getattr(module, self.cls, None)
        if factory is None:
            raise BlockUnavailable(
                f"block '{self.name}' is not available yet: {self.source_hint()} has no class "
                f"{self.cls}")
        try:
            return factory(**self.kwargs)
        except Exception as error:
            raise BlockUnavailable(f"block '{self.name}' cannot be constructed as "
                                   f"{self.cls}(**{self.kwargs}): {type(error).__name__}: "
                                   f"{error}") from None


def _spec(name, module, cls, summary, **kwargs):
    return BlockSpec(name, module, cls, summary, kwargs)


#: Every block the flow can synthesise, by name.
BLOCKS = {spec.name: spec for spec in [
    # Move generation (issue 3).
    _spec("board", "chessaccel.hdl.board", "Board", "piece register file with make/unmake"),
    _spec("genvictim", "chessaccel.hdl.genvictim", "GenVictim", "64-square victim generator"),
    _spec("genaggressor", "chessaccel.hdl.genaggressor", "GenAggressor",
          "super-piece aggressor generator"),
    _spec("testcheck", "chessaccel.hdl.testcheck", "TestCheck", "is a square attacked"),
    _spec("castlestatus", "chessaccel.hdl.castlestatus", "CastleStatus", "castling legality"),
    _spec("movegen", "chessaccel.hdl.movegen", "MoveWalker",
          "walks one node's legal moves (board + generators + check)"),
    # Search (issue 4).
    _spec("evaluate", "chessaccel.hdl.evaluate", "Evaluate", "pipelined evaluation adder tree"),
    _spec("searchstack", "chessaccel.hdl.searchstack", "SearchStack", "per-ply frames"),
    _spec("searchcore", "chessaccel.hdl.search", "SearchCore",
          "one complete alpha-beta search core"),
    _spec("searchcore2", "chessaccel.hdl.search", "SearchCore",
          "a search core interleaving two jobs (C-slow, hdl/interleave.py)", threads=2),
    # The "terms" evaluation (issue 30): the block alone, one block per term group (the other
    # groups' terms read 0; docs/synthesis.md tables each group's cost), and the cores built
    # with it.
    _spec("evalterms", "chessaccel.hdl.evalterms", "EvaluateTerms",
          "the terms evaluation's terms, combinational (all groups)"),
    *[_spec(f"evalterms-{group}", "chessaccel.hdl.evalterms", "EvaluateTerms",
            f"the terms evaluation's {group} terms alone", groups=(group,))
      for group in EVALTERMS_GROUPS],
    _spec("searchcore-terms", "chessaccel.hdl.search", "SearchCore",
          "one search core with the terms evaluation", evaluation="terms"),
    _spec("searchcore2-terms", "chessaccel.hdl.search", "SearchCore",
          "a two-thread search core with the terms evaluation", threads=2, evaluation="terms"),
    # Link (issue 5): the board top without search cores is the link's own cost.
    _spec("boardtop-nocore", "chessaccel.hdl.boardtop", "BoardTop",
          "UART + link + dispatcher, no search core", cores=0),
    # Benchmarks of the flow itself (synth/benchmarks.py), not parts of the accelerator.
    _spec("bench-priority64", "chessaccel.synth.benchmarks", "PriorityTreeBenchmark",
          "benchmark: masked priority tree over 64 squares", squares=64),
    _spec("bench-priority16", "chessaccel.synth.benchmarks", "PriorityTreeBenchmark",
          "benchmark: masked priority tree over 16 squares", squares=16),
]}

#: Names that stand for several blocks at once.
GROUPS = {
    "movegen-all": ["board", "genvictim", "genaggressor", "testcheck", "castlestatus", "movegen"],
    "search-all": ["evaluate", "searchstack", "searchcore"],
    "evalterms-all": ["evalterms", *[f"evalterms-{group}" for group in EVALTERMS_GROUPS]],
}


def resolve(name):
    """The ``BlockSpec`` called ``name``; raises ``BlockUnavailable`` for an unknown name."""
    try:
        return BLOCKS[name]
    except KeyError:
        known = ", ".join(sorted(BLOCKS) + sorted(GROUPS))
        raise BlockUnavailable(f"unknown block '{name}' (known: {known})") from None


def expand(names):
    """Block names with group names replaced by their members, duplicates dropped, order kept."""
    result = []
    for name in names:
        for member in GROUPS.get(name, [name]):
            if member not in result:
                result.append(member)
    return result
