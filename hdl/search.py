"""AlphaBetaFSM and SearchCore: the whole search of a job in hardware.

The search is the model's (``sim/model/search.py``), step for step: fail-soft negamax alpha-beta
on a fixed depth with quiescence, written as one finite state machine driving the Board, the move
generator (GenVictim, GenAggressor, CastleStatus), two TestChecks, Evaluate and the SearchStack.
A perft mode counts the leaves at a depth with the same generator, make and legality test.

The FSM's states are declared once, in ``STATES`` (name, what it does, next states); the FSM is
built from that table and every transition the code makes is checked against it at elaboration,
so docs/fsm.md, generated from the same table (``fsm_markdown``), cannot drift from the design.

Where the cycles go (docs/fsm.md has the figures): a move is found and made in one cycle
(``NEXT_MOVE``: GenVictim and GenAggressor chained), its legality and the child's in-check test
take one more (``TEST_LEGAL``: two TestChecks side by side, the child frame pushed and the node
counted in the same cycle), and a node's value goes back to its parent in the cycle it is known
(stand-pat cutoff, exhausted move list, evaluated leaf): there is no separate entry or return
state on the common path.
"""

from amaranth.hdl import Array, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from chessaccel.defs import (Color, CYCLE_BITS, GenStage, INF, MATE, MAX_DEPTH, MAX_PLY, Mode,
                             Move, NODE_BITS, PieceType, PROMOTION_ORDER, Score, SearchJob,
                             SearchResult, Status)
from chessaccel.geometry import square

from .board import Board, BoardOp
from .castlestatus import CastleStatus
from .evaluate import Evaluate
from .genaggressor import GenAggressor
from .genvictim import GenVictim
from .searchstack import Frame, SearchStack, StackOp
from .testcheck import TestCheck

__all__ = ["STATES", "SearchCore", "fsm_markdown", "update_doc"]

SQUARES = 64
KING_FILE, KINGSIDE_FILE, QUEENSIDE_FILE = 4, 6, 2
HOME_RANK = {Color.WHITE: 0, Color.BLACK: 7}
#: Evaluate's pipeline depth in the core: one register, so a stand-pat score is ready in the
#: cycle after TEST_LEGAL (the evaluation's adder tree is shorter than the GenVictim +
#: GenAggressor chain of NEXT_MOVE, which sets the clock anyway).
EVAL_LATENCY = 1

#: The AlphaBetaFSM, declared: state -> (what it does, the states it may go to next).
#: Every busy state also goes to IDLE when ``abort`` is raised (not listed).
STATES = {
    "IDLE": (
        "wait for a job; reject a bad one (BAD_JOB), else load the board and the root frame",
        ("IDLE", "ENTER_ROOT")),
    "ENTER_ROOT": (
        "count the root; test it for check; stand pat at depth 0 unless in check, else start "
        "the move walk (perft 0: the root is the one leaf)",
        ("STAND_PAT", "NEXT_MOVE", "IDLE")),
    "NEXT_MOVE": (
        "one step of the move walk: the next promotion piece, or GenVictim + GenAggressor (a "
        "victim without aggressor is disabled), or a castling; make the move found; "
        "exhausted: return the node's value (mate, stalemate or best) to the parent",
        ("NEXT_MOVE", "TEST_LEGAL", "RETURN", "IDLE")),
    "TEST_LEGAL": (
        "TestCheck on the mover's king: unmake an illegal move; else push the child, counted "
        "and tested for check in the same cycle (perft at depth 1: count a leaf and unmake)",
        ("NEXT_MOVE", "STAND_PAT", "EVAL_LEAF")),
    "STAND_PAT": (
        "depth 0, not in check: wait for Evaluate; return the score if it reaches beta, else "
        "raise alpha and walk the captures",
        ("STAND_PAT", "NEXT_MOVE", "RETURN", "IDLE")),
    "EVAL_LEAF": (
        "ply max_ply (the stack is full): wait for Evaluate; return the static score",
        ("EVAL_LEAF", "NEXT_MOVE", "RETURN")),
    "RETURN": (
        "the child cut off: return its parent's best to the grandparent",
        ("RETURN", "NEXT_MOVE", "IDLE")),
}


class SearchCore(wiring.Component):
    """One search (or perft) job at a time.

    Raise ``start`` for one cycle with a ``job`` while ``busy`` is low; ``busy`` rises in the next
    cycle and falls when ``result`` is final (``result.status`` DONE, ABORTED or BAD_JOB; BUSY
    while running). ``abort`` stops a running job in the next cycle (status ABORTED; the other
    result fields are then meaningless). A job is bad (BAD_JOB) when its depth exceeds MAX_DEPTH,
    when in search mode its window is not -INF <= alpha < beta <= INF, or when its position does
    not hold exactly one king of each colour (the model's ``job_problem``).

    Search results: fail-soft ``score`` from the side to move's view, ``best_move`` (NO_MOVE when
    no root move raised the score), ``nodes`` (every node entered, quiescence included) and
    ``cycles`` (clock cycles from the cycle after ``start`` to the result). Perft: ``nodes`` is
    the leaf count.

    Debug port for the tests: ``trace_valid`` is high in the cycle a node is entered, with its
    ``trace_ply`` and the move that led to it (``trace_move``, NO_MOVE at the root): the model's
    ``search(trace=True)`` walk.

    ``eval_latency`` (1..3) is the Evaluate pipeline's depth: each stage removed saves a cycle per
    stand-pat node and lengthens Evaluate's combinational path. ``max_ply`` (1..MAX_PLY) is the
    SearchStack's size: a node at that ply is evaluated, never expanded (the model's parameter
    of the same name); tests make it small to reach the stack-full rule in a few plies.
    """

    def __init__(self, eval_latency=EVAL_LATENCY, max_ply=MAX_PLY):
        if not 1 <= max_ply <= MAX_PLY:
            raise ValueError(f"max_ply {max_ply} out of range 1..{MAX_PLY}")
        super().__init__({
            "job":    In(SearchJob),
            "start":  In(1),
            "abort":  In(1),
            "result": Out(SearchResult),
            "busy":   Out(1),
            "trace_valid": Out(1),
            "trace_ply":   Out(range(max_ply + 1)),
            "trace_move":  Out(Move),
        })
        self.eval_latency = eval_latency
        self.max_ply = max_ply
        #: (state, next state) pairs the elaborated FSM uses (filled by ``elaborate``).
        self.transitions = set()

    def elaborate(self, platform):
        m = Module()
        m.submodules.board = board = Board()
        m.submodules.genvictim = genvictim = GenVictim()
        m.submodules.genaggressor = genaggressor = GenAggressor()
        m.submodules.castlestatus = castlestatus = CastleStatus()
        # two TestChecks: the mover's king (legality) and the side to move's (in check)
        m.submodules.mover_check = mover_check = TestCheck()
        m.submodules.side_check = side_check = TestCheck()
        m.submodules.evaluate = evaluate = Evaluate(latency=self.eval_latency)
        m.submodules.stack = stack = SearchStack(self.max_ply)

        position = board.position
        side = position.side.as_value()
        black = position.side == Color.BLACK
        top, parent = stack.top, stack.parent

        job = Signal(SearchJob)        # the running job (latched at start)
        value = Signal(Score)          # the value RETURN hands to the parent
        nodes = Signal(NODE_BITS)
        cycles = Signal(CYCLE_BITS)

        # --- the blocks all look at the board as it stands ---
        m.d.comb += [
            genvictim.position.eq(position),
            genvictim.mask.eq(top.mask),
            genvictim.captures_only.eq(top.captures_only),
            genaggressor.position.eq(position),
            genaggressor.victim.eq(genvictim.victim),
            genaggressor.mask.eq(top.mask),
            genaggressor.captures_only.eq(top.captures_only),
            castlestatus.position.eq(position),
            mover_check.position.eq(position),
            mover_check.square.eq(board.king_squares[~side]),
            mover_check.by.as_value().eq(side),
            side_check.position.eq(position),
            side_check.square.eq(board.king_squares[side]),
            side_check.by.as_value().eq(~side),
            evaluate.position.eq(position),
        ]

        # Evaluate is a free-running pipeline: its score belongs to the board once the board
        # has stood still for its latency.
        latency = self.eval_latency
        board_age = Signal(range(latency + 1))
        board_changes = Signal()
        m.d.comb += board_changes.eq(board.op != BoardOp.HOLD)
        with m.If(board_changes):
            m.d.sync += board_age.eq(0)
        with m.Elif(board_age != latency):
            m.d.sync += board_age.eq(board_age + 1)
        eval_ready = Signal()
        m.d.comb += eval_ready.eq(board_age == latency)

        own = Signal(SQUARES)
        for s in range(SQUARES):
            piece = position.squares[s]
            m.d.comb += own[s].eq((piece.type != PieceType.NONE) & (piece.color == position.side))

        # --- defaults: the stack holds, next_top is the top, the board idles ---
        m.d.comb += [stack.op.eq(StackOp.HOLD), stack.next_top.eq(top), stack.store.eq(top)]
        m.d.comb += [board.move.eq(top.move), board.restore.eq(top.undo)]

        searching = job.mode == Mode.SEARCH
        m.d.comb += self.busy.eq(self.result.status == Status.BUSY)

        promotion_piece = Array(Const(p.value, PieceType.as_shape()) for p in PROMOTION_ORDER)
        castle_from = Mux(black, square(KING_FILE, HOME_RANK[Color.BLACK]),
                          square(KING_FILE, HOME_RANK[Color.WHITE]))

        def goto(target):
            self.transitions.add((current, target))
            if target not in STATES[current][1]:
                raise AssertionError(f"undeclared transition {current} -> {target}")
            m.next = target

        def finish(status, node_count=nodes):
            m.d.sync += [self.result.status.eq(status), self.result.nodes.eq(node_count),
                         self.result.cycles.eq(cycles)]
            goto("IDLE")

        def make(from_sq, to_sq, promo):
            """Make the move and note it, with its undo record, in the top frame."""
            m.d.comb += [
                board.op.eq(BoardOp.MAKE),
                board.move.from_sq.eq(from_sq), board.move.to_sq.eq(to_sq),
                board.move.promo.as_value().eq(promo),
                stack.op.eq(StackOp.WRITE),
                stack.next_top.move.from_sq.eq(from_sq), stack.next_top.move.to_sq.eq(to_sq),
                stack.next_top.move.promo.as_value().eq(promo),
                stack.next_top.undo.eq(board.undo),
            ]
            goto("TEST_LEGAL")

        def return_value(node_value, may_be_root=True):
            """The top node's value is known: hand it to the parent in this cycle (unmake the
            parent's move, raise its best and alpha; a cutoff there goes on in RETURN), or, at
            the root, finish the job."""
            if may_be_root:
                with m.If(stack.ply == 0):
                    m.d.sync += [self.result.score.eq(node_value),
                                 self.result.best_move.eq(top.best_move)]
                    finish(Status.DONE)
                with m.Else():
                    to_parent(node_value)
            else:
                to_parent(node_value)

        def to_parent(node_value):
            m.d.comb += [stack.op.eq(StackOp.POP), stack.next_top.eq(parent),
                         board.op.eq(BoardOp.UNMAKE), board.move.eq(parent.move),
                         board.restore.eq(parent.undo)]
            score = Signal(Score, name=f"{current.lower()}_score")
            cutoff = Signal(name=f"{current.lower()}_cutoff")
            m.d.comb += score.eq(-node_value)
            with m.If(searching & (score > parent.best)):
                m.d.comb += [stack.next_top.best.eq(score),
                             stack.next_top.best_move.eq(parent.move)]
                with m.If(score > parent.alpha):
                    m.d.comb += stack.next_top.alpha.eq(score)
                    m.d.comb += cutoff.eq(score >= parent.beta)
            with m.If(cutoff):
                m.d.sync += value.eq(score)
                goto("RETURN")
            with m.Else():
                goto("NEXT_MOVE")

        with m.If(self.busy):
            m.d.sync += cycles.eq(cycles + 1)

        with m.FSM(name="alphabeta"):
            for current, (comment, _) in STATES.items():
                with m.State(current):
                    if current != "IDLE":
                        with m.If(self.abort):
                            # abort: the implicit edge of every busy state (not in STATES)
                            m.d.sync += self.result.status.eq(Status.ABORTED)
                            m.next = "IDLE"
                        body = m.Else()
                    else:
                        body = m.If(1)
                    with body:
                        scope = {k: v for k, v in locals().items() if k != "self"}
                        getattr(self, f"_state_{current.lower()}")(**scope)
        return m

    # One method per state; the locals of ``elaborate`` come in as keyword arguments.

    def _state_idle(self, m, job, board, stack, nodes, cycles, goto, **_):
        with m.If(self.start):
            bad_depth = self.job.depth > MAX_DEPTH
            bad_window = (self.job.mode == Mode.SEARCH) & (
                (self.job.alpha < -INF) | (self.job.beta > INF)
                | (self.job.alpha >= self.job.beta))
            # the Board's king-square registers and TestCheck need exactly one king a side
            bad_kings = Const(0)
            for color in Color:
                kings = [(piece.type == PieceType.KING) & (piece.color == color)
                         for piece in (self.job.position.squares[s] for s in range(SQUARES))]
                some, several = _one_hot_check(kings)
                bad_kings = bad_kings | ~some | several
            with m.If(bad_depth | bad_window | bad_kings):
                m.d.sync += self.result.status.eq(Status.BAD_JOB)
                goto("IDLE")
            with m.Else():
                m.d.sync += [job.eq(self.job), nodes.eq(0), cycles.eq(0),
                             self.result.status.eq(Status.BUSY)]
                m.d.comb += [board.op.eq(BoardOp.LOAD), board.load_position.eq(self.job.position),
                             stack.op.eq(StackOp.CLEAR),
                             stack.next_top.as_value().eq(0),
                             stack.next_top.depth.eq(self.job.depth),
                             stack.next_top.alpha.eq(self.job.alpha),
                             stack.next_top.beta.eq(self.job.beta),
                             stack.next_top.best.eq(-INF)]
                goto("ENTER_ROOT")

    def _state_enter_root(self, m, stack, top, side_check, searching, nodes, goto, finish,
                          **_):
        m.d.comb += [self.trace_valid.eq(1), self.trace_ply.eq(0), self.trace_move.eq(0)]
        with m.If(~searching & (top.depth == 0)):
            finish(Status.DONE, node_count=1)  # perft 0: the root is the one leaf
        with m.Else():
            quiescent = searching & (top.depth == 0) & ~side_check.attacked
            with m.If(searching):
                m.d.sync += nodes.eq(1)
            m.d.comb += [stack.op.eq(StackOp.WRITE),
                         stack.next_top.in_check.eq(side_check.attacked),
                         stack.next_top.captures_only.eq(quiescent)]
            with m.If(quiescent):
                goto("STAND_PAT")
            with m.Else():
                goto("NEXT_MOVE")

    def _state_next_move(self, m, stack, top, genvictim, genaggressor, castlestatus, own,
                         promotion_piece, castle_from, make, return_value, goto, **_):
        victim, aggressor = genvictim.victim, genaggressor.aggressor
        victim_bit = Const(1, SQUARES) << victim
        aggressor_bit = Const(1, SQUARES) << aggressor
        kingside = (castle_from + (KINGSIDE_FILE - KING_FILE), castle_from)
        queenside = (castle_from - (KING_FILE - QUEENSIDE_FILE), castle_from)
        full_width = ~top.captures_only

        def exhausted():
            # no legal move in a full-width node: mated (in check) or stalemate
            with m.If(~top.has_legal & full_width):
                return_value(Mux(top.in_check, stack.ply - MATE, 0))
            with m.Else():
                return_value(top.best)

        def castle(to_sq, stage_after):
            m.d.comb += stack.next_top.stage.eq(stage_after)
            make(castle_from, to_sq, PieceType.NONE)

        with m.If(top.promoting):
            # the same pawn, the same victim, the next promotion piece
            last = top.promo == len(PROMOTION_ORDER) - 1
            m.d.comb += [stack.next_top.promo.eq(Mux(last, 0, top.promo + 1)),
                         stack.next_top.promoting.eq(~last)]
            with m.If(last):
                m.d.comb += stack.next_top.mask.eq(
                    top.mask | (Const(1, SQUARES) << top.move.from_sq))
            make(top.move.from_sq, top.move.to_sq, promotion_piece[top.promo])
        with m.Elif((top.stage == GenStage.VICTIMS) & genvictim.valid):
            with m.If(~genaggressor.valid):
                m.d.comb += [stack.op.eq(StackOp.WRITE),
                             stack.next_top.mask.eq((top.mask | victim_bit) & ~own)]
                goto("NEXT_MOVE")
            with m.Elif(genaggressor.promotion):
                m.d.comb += [stack.next_top.promoting.eq(1), stack.next_top.promo.eq(1)]
                make(aggressor, victim, promotion_piece[0])
            with m.Else():
                m.d.comb += stack.next_top.mask.eq(top.mask | aggressor_bit)
                make(aggressor, victim, PieceType.NONE)
        # victims exhausted: kingside castling, then queenside, in this same cycle if allowed
        with m.Elif((top.stage == GenStage.VICTIMS) & full_width & castlestatus.kingside_ok):
            castle(kingside[0], GenStage.CASTLE_QUEENSIDE)
        with m.Elif(((top.stage == GenStage.VICTIMS) | (top.stage == GenStage.CASTLE_QUEENSIDE))
                    & full_width & castlestatus.queenside_ok):
            castle(queenside[0], GenStage.DONE)
        with m.Else():
            exhausted()

    def _state_test_legal(self, m, board, stack, top, mover_check, side_check, searching,
                          nodes, goto, **_):
        # the board now holds the child: the mover is the side *not* to move
        child_ply = stack.ply + 1
        child_depth = Mux(top.depth == 0, 0, top.depth - 1)
        with m.If(mover_check.attacked):
            m.d.comb += board.op.eq(BoardOp.UNMAKE)
            goto("NEXT_MOVE")
        with m.Elif(~searching & (top.depth == 1)):
            m.d.sync += nodes.eq(nodes + 1)
            m.d.comb += board.op.eq(BoardOp.UNMAKE)
            goto("NEXT_MOVE")
        with m.Else():
            quiescent = searching & (child_depth == 0) & ~side_check.attacked
            m.d.comb += [
                stack.op.eq(StackOp.PUSH),
                stack.store.has_legal.eq(1),
                stack.next_top.as_value().eq(0),
                stack.next_top.depth.eq(child_depth),
                stack.next_top.alpha.eq(-top.beta),
                stack.next_top.beta.eq(-top.alpha),
                stack.next_top.best.eq(-INF),
                stack.next_top.in_check.eq(side_check.attacked),
                stack.next_top.captures_only.eq(quiescent),
            ]
            with m.If(searching):
                m.d.sync += nodes.eq(nodes + 1)
                m.d.comb += [self.trace_valid.eq(1), self.trace_ply.eq(child_ply),
                             self.trace_move.eq(top.move)]
            with m.If(searching & (child_ply == self.max_ply)):
                goto("EVAL_LEAF")
            with m.Elif(quiescent):
                goto("STAND_PAT")
            with m.Else():
                goto("NEXT_MOVE")

    def _state_stand_pat(self, m, evaluate, eval_ready, stack, top, goto, return_value, **_):
        score = evaluate.score
        with m.If(~eval_ready):
            goto("STAND_PAT")
        with m.Elif(score >= top.beta):
            return_value(score)
        with m.Else():
            m.d.comb += [stack.op.eq(StackOp.WRITE), stack.next_top.best.eq(score)]
            with m.If(score > top.alpha):
                m.d.comb += stack.next_top.alpha.eq(score)
            goto("NEXT_MOVE")

    def _state_eval_leaf(self, m, evaluate, eval_ready, goto, return_value, **_):
        with m.If(eval_ready):
            return_value(evaluate.score, may_be_root=False)  # max_ply >= 1: never the root
        with m.Else():
            goto("EVAL_LEAF")

    def _state_return(self, m, value, return_value, **_):
        return_value(value)


def _one_hot_check(bits):
    """(any bit set, more than one set) of a list of 1-bit values, as a balanced tree."""
    level = [(bit, Const(0)) for bit in bits]
    while len(level) > 1:
        paired = []
        for i in range(0, len(level) - 1, 2):
            (a_any, a_many), (b_any, b_many) = level[i], level[i + 1]
            paired.append((a_any | b_any, a_many | b_many | (a_any & b_any)))
        if len(level) % 2:
            paired.append(level[-1])
        level = paired
    return level[0]


def fsm_markdown():
    """docs/fsm.md's generated part: the state table and a mermaid state diagram."""
    lines = ["| state | what it does | next states |", "|---|---|---|"]
    for name, (comment, targets) in STATES.items():
        lines.append(f"| `{name}` | {comment} | {', '.join(f'`{t}`' for t in targets)} |")
    lines += ["", "```mermaid", "stateDiagram-v2", "    [*] --> IDLE"]
    for name, (_, targets) in STATES.items():
        for target in targets:
            if target != name:
                lines.append(f"    {name} --> {target}")
    lines += ["```"]
    return "\n".join(lines) + "\n"


#: Markers around the generated part of docs/fsm.md.
DOC_BEGIN = "<!-- BEGIN GENERATED by `python -m chessaccel.hdl.search docs/fsm.md` -->"
DOC_END = "<!-- END GENERATED -->"


def update_doc(text):
    """``text`` (docs/fsm.md) with its generated part replaced by ``fsm_markdown()``."""
    head, _, rest = text.partition(DOC_BEGIN)
    _, _, tail = rest.partition(DOC_END)
    return f"{head}{DOC_BEGIN}\n{fsm_markdown()}{DOC_END}{tail}"


if __name__ == "__main__":
    import sys
    from pathlib import Path
    if len(sys.argv) != 2:
        print("usage: python -m chessaccel.hdl.search docs/fsm.md", file=sys.stderr)
        raise SystemExit(2)
    path = Path(sys.argv[1])
    path.write_text(update_doc(path.read_text() if path.exists() else DOC_BEGIN + DOC_END))
