"""Purpose-built benchmark designs for exercising the synthesis flow itself.

These are not parts of the accelerator. They are small, real circuits of the same kind as the
move generator's (a masked priority tree over squares), so the flow's tests and its first runs do
not depend on blocks that other engineers are still writing.
"""

from amaranth.hdl import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from chessaccel.contract.defs import VictimClass

__all__ = ["PriorityTreeBenchmark"]


class PriorityTreeBenchmark(wiring.Component):
    """Masked priority tree over ``squares`` entries, registered once.

    Each square offers a ``VictimClass``; squares whose ``disabled`` bit is set offer nothing. The
    output is the highest class offered and the lowest square offering it (``valid`` is low when no
    square offers anything). This is the comparator tree at the heart of GenVictim, without the
    rays that feed it.
    """

    def __init__(self, squares=64):
        if squares < 2:
            raise ValueError(f"PriorityTreeBenchmark needs at least 2 squares, got {squares}")
        self.squares = squares
        super().__init__({
            "classes":  In(VictimClass).array(squares),
            "disabled": In(squares),
            "valid":    Out(1),
            "best":     Out(VictimClass),
            "square":   Out(range(squares)),
        })

    def elaborate(self, platform):
        m = Module()
        # Leaves: (class, square) with a disabled square's class forced to NONE.
        level = []
        for sq in range(self.squares):
            cls = Signal(VictimClass, name=f"leaf{sq}_class")
            with m.If(~self.disabled[sq]):
                m.d.comb += cls.eq(self.classes[sq])
            level.append((cls, sq))

        # Pairwise tournament; the left (lower-numbered) entry wins ties.
        depth = 0
        while len(level) > 1:
            depth += 1
            merged = []
            for i in range(0, len(level) - 1, 2):
                (left_cls, left_sq), (right_cls, right_sq) = level[i], level[i + 1]
                cls = Signal(VictimClass, name=f"l{depth}_{i // 2}_class")
                sq = Signal(range(self.squares), name=f"l{depth}_{i // 2}_square")
                with m.If(right_cls.as_value() > left_cls.as_value()):
                    m.d.comb += [cls.eq(right_cls), sq.eq(right_sq)]
                with m.Else():
                    m.d.comb += [cls.eq(left_cls), sq.eq(left_sq)]
                merged.append((cls, sq))
            if len(level) % 2:
                merged.append(level[-1])
            level = merged

        best_cls, best_sq = level[0]
        m.d.sync += [
            self.best.eq(best_cls),
            self.square.eq(best_sq),
            self.valid.eq(best_cls != VictimClass.NONE),
        ]
        return m
