"""AlphaBetaFSM and SearchCore: the whole search of a job in hardware.

The search is the model's (``sim/model/search.py``), step for step: fail-soft negamax alpha-beta
on a fixed depth with quiescence, written as one finite state machine driving the Board, the move
generator (GenVictim, GenAggressor, CastleStatus), TestCheck, Evaluate and the SearchStack. A
perft mode counts the leaves at a depth with the same generator, make and legality test.

The FSM's states are declared once, in ``STATES`` (name, what it does, next states); the FSM is
built from that table and every transition the code makes is checked against it at elaboration,
so docs/fsm.md, generated from the same table (``fsm_markdown``), cannot drift from the design.
"""

from amaranth.hdl import Array, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from chessaccel.defs import (Color, GenStage, INF, MATE, MAX_DEPTH, MAX_PLY, Mode, Move, NODE_BITS,
                             PieceType, Position, PROMOTION_ORDER, Score, SearchJob, SearchResult,
                             Status, CYCLE_BITS)
from chessaccel.geometry import square

from .board import Board, BoardOp
from .castlestatus import CastleStatus
from .genaggressor import GenAggressor
from .testcheck import TestCheck
from .evaluate import Evaluate, LATENCY as EVAL_LATENCY
from .genvictim import GenVictim
from .searchstack import Frame, SearchStack, StackOp

__all__ = ["STATES", "SearchCore", "fsm_markdown"]

SQUARES = 64
FILES = 8
#: Relative rank a pawn promotes on.
LAST_RANK = 7
KING_FILE, KINGSIDE_FILE, QUEENSIDE_FILE = 4, 6, 2
HOME_RANK = {Color.WHITE: 0, Color.BLACK: 7}

#: The AlphaBetaFSM, declared: state -> (what it does, the states it may go to next).
#: Every busy state also goes to IDLE when ``abort`` is raised (not listed).
STATES = {
    "IDLE": (
        "wait for a job; reject a bad one (BAD_JOB), else load the board and the root frame",
        ("IDLE", "ENTER")),
    "ENTER": (
        "count the node; evaluate at MAX_PLY; test for check; stand pat at depth 0 unless in "
        "check; else start the move walk (perft: depth 0 root is one leaf)",
        ("EVAL_LEAF", "STAND_PAT", "NEXT_MOVE", "RETURN")),
    "EVAL_LEAF": (
        "ply MAX_PLY: wait for Evaluate; the static score is the node's value",
        ("EVAL_LEAF", "RETURN")),
    "STAND_PAT": (
        "depth 0, not in check: wait for Evaluate; cut off if the score reaches beta, "
        "else raise alpha and walk the captures",
        ("STAND_PAT", "RETURN", "NEXT_MOVE")),
    "NEXT_MOVE": (
        "one step of the move walk: next promotion piece, or GenVictim + GenAggressor (a victim "
        "without aggressor is disabled), or a castling; make the move found; exhausted: the "
        "node's value (mate, stalemate or best)",
        ("NEXT_MOVE", "TEST_LEGAL", "RETURN")),
    "TEST_LEGAL": (
        "TestCheck on the mover's king: unmake an illegal move; else push the child frame "
        "(perft at depth 1: count a leaf and unmake)",
        ("NEXT_MOVE", "ENTER")),
    "RETURN": (
        "pop the value into the parent: unmake its move, raise best and alpha, cut off at beta "
        "(return again); at the root: the result",
        ("RETURN", "NEXT_MOVE", "IDLE")),
}


class SearchCore(wiring.Component):
    """One search (or perft) job at a time.

    Raise ``start`` for one cycle with a ``job`` while ``busy`` is low; ``busy`` rises in the next
    cycle and falls when ``result`` is final (``result.status`` DONE, ABORTED or BAD_JOB; BUSY
    while running). ``abort`` stops a running job within two cycles (status ABORTED; the other
    result fields are then meaningless). A job is bad when its depth exceeds MAX_DEPTH or, in
    search mode, its window is not -INF <= alpha < beta <= INF.

    Search results: fail-soft ``score`` from the side to move's view, ``best_move`` (NO_MOVE when
    no root move raised the score), ``nodes`` (every node entered, quiescence included) and
    ``cycles`` (clock cycles from the cycle after ``start`` to the result). Perft: ``nodes`` is
    the leaf count.

    Debug port for the tests: ``trace_valid`` is high in the cycle a node is entered, with its
    ``trace_ply`` and the move that led to it (``trace_move``, NO_MOVE at the root): the model's
    ``search(trace=True)`` walk.
    """

    job:    In(SearchJob)
    start:  In(1)
    abort:  In(1)
    result: Out(SearchResult)
    busy:   Out(1)

    trace_valid: Out(1)
    trace_ply:   Out(range(MAX_PLY + 1))
    trace_move:  Out(Move)

    def __init__(self):
        super().__init__()
        #: (state, next state) pairs the elaborated FSM uses (filled by ``elaborate``).
        self.transitions = set()

    def elaborate(self, platform):
        m = Module()
        m.submodules.board = board = Board()
        m.submodules.genvictim = genvictim = GenVictim()
        m.submodules.genaggressor = genaggressor = GenAggressor()
        m.submodules.castlestatus = castlestatus = CastleStatus()
        m.submodules.testcheck = testcheck = TestCheck()
        m.submodules.evaluate = evaluate = Evaluate()
        m.submodules.stack = stack = SearchStack()

        position = board.position
        side = position.side
        black = side == Color.BLACK
        top, parent = stack.top, stack.parent

        job = Signal(SearchJob)        # the running job (latched at start)
        value = Signal(Score)          # the value being returned to the parent
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
            testcheck.position.eq(position),
            evaluate.position.eq(position),
        ]

        # Evaluate is a free-running pipeline: its score belongs to the board once the board
        # has stood still for EVAL_LATENCY cycles.
        board_age = Signal(range(EVAL_LATENCY + 1))
        board_changes = Signal()
        m.d.comb += board_changes.eq(board.op != BoardOp.HOLD)
        with m.If(board_changes):
            m.d.sync += board_age.eq(0)
        with m.Elif(board_age != EVAL_LATENCY):
            m.d.sync += board_age.eq(board_age + 1)
        eval_ready = Signal()
        m.d.comb += eval_ready.eq((board_age == EVAL_LATENCY) & ~board_changes)

        own = Signal(SQUARES)
        for s in range(SQUARES):
            piece = position.squares[s]
            m.d.comb += own[s].eq((piece.type != PieceType.NONE) & (piece.color == side))

        # --- defaults: the stack holds, next_top is the top, the board idles ---
        m.d.comb += [stack.op.eq(StackOp.HOLD), stack.next_top.eq(top), stack.store.eq(top)]
        m.d.comb += [board.move.eq(top.move), board.restore.eq(top.undo)]

        searching = job.mode == Mode.SEARCH
        m.d.comb += [self.busy.eq(self.result.status == Status.BUSY)]

        promotion_piece = Array(Const(p.value, PieceType.as_shape()) for p in PROMOTION_ORDER)
        castle_from = Mux(black, square(KING_FILE, HOME_RANK[Color.BLACK]),
                          square(KING_FILE, HOME_RANK[Color.WHITE]))

        def goto(target):
            self.transitions.add((current, target))
            if target not in STATES[current][1]:
                raise AssertionError(f"undeclared transition {current} -> {target}")
            m.next = target

        def make(move_fields):
            """Make the move (from, to, promo) and note it, with its undo, in the top frame."""
            from_sq, to_sq, promo = move_fields
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

        def finish(status):
            m.d.sync += [self.result.status.eq(status), self.result.nodes.eq(nodes),
                         self.result.cycles.eq(cycles)]
            goto("IDLE")

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

    # One method per state; ``locals`` of elaborate come in as keyword arguments.

    def _state_idle(self, m, job, board, stack, nodes, cycles, goto, **_):
        with m.If(self.start):
            bad_depth = self.job.depth > MAX_DEPTH
            bad_window = (self.job.mode == Mode.SEARCH) & (
                (self.job.alpha < -INF) | (self.job.beta > INF)
                | (self.job.alpha >= self.job.beta))
            with m.If(bad_depth | bad_window):
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
                goto("ENTER")

    def _state_enter(self, m, job, board, stack, top, parent, testcheck, side, searching, nodes,
                     value, goto, **_):
        m.d.comb += [self.trace_valid.eq(1), self.trace_ply.eq(stack.ply),
                     self.trace_move.eq(Mux(stack.ply == 0, 0, parent.move.as_value()))]
        # in check: the side to move's king attacked by the other side
        m.d.comb += [testcheck.square.eq(board.king_squares[side.as_value()]),
                     testcheck.by.as_value().eq(~side.as_value())]
        with m.If(~searching):
            with m.If(top.depth == 0):
                # perft 0 is the root alone (deeper nodes are counted at their parent)
                m.d.sync += nodes.eq(1)
                goto("RETURN")
            with m.Else():
                goto("NEXT_MOVE")
        with m.Else():
            m.d.sync += nodes.eq(nodes + 1)
            with m.If(stack.ply == MAX_PLY):
                goto("EVAL_LEAF")
            with m.Else():
                quiescent = (top.depth == 0) & ~testcheck.attacked
                m.d.comb += [stack.op.eq(StackOp.WRITE),
                             stack.next_top.in_check.eq(testcheck.attacked),
                             stack.next_top.captures_only.eq(quiescent)]
                with m.If(quiescent):
                    goto("STAND_PAT")
                with m.Else():
                    goto("NEXT_MOVE")

    def _state_eval_leaf(self, m, evaluate, eval_ready, value, goto, **_):
        with m.If(eval_ready):
            m.d.sync += value.eq(evaluate.score)
            goto("RETURN")
        with m.Else():
            goto("EVAL_LEAF")

    def _state_stand_pat(self, m, evaluate, eval_ready, stack, top, value, goto, **_):
        with m.If(eval_ready):
            score = evaluate.score
            m.d.comb += [stack.op.eq(StackOp.WRITE), stack.next_top.best.eq(score)]
            with m.If(score >= top.beta):
                m.d.sync += value.eq(score)
                goto("RETURN")
            with m.Else():
                with m.If(score > top.alpha):
                    m.d.comb += stack.next_top.alpha.eq(score)
                goto("NEXT_MOVE")
        with m.Else():
            goto("STAND_PAT")

    def _state_next_move(self, m, stack, top, genvictim, genaggressor, castlestatus, own,
                         position, black, promotion_piece, castle_from, value, make, goto,
                         **_):
        victim, aggressor = genvictim.victim, genaggressor.aggressor
        victim_bit = Const(1, SQUARES) << victim
        aggressor_bit = Const(1, SQUARES) << aggressor
        with m.If(top.promoting):
            # the same pawn, the same victim, the next promotion piece
            last = top.promo == len(PROMOTION_ORDER) - 1
            m.d.comb += [stack.next_top.promo.eq(Mux(last, 0, top.promo + 1)),
                         stack.next_top.promoting.eq(~last)]
            with m.If(last):
                m.d.comb += stack.next_top.mask.eq(top.mask | (Const(1, SQUARES)
                                                               << top.move.from_sq))
            make((top.move.from_sq, top.move.to_sq, promotion_piece[top.promo]))
        with m.Elif(top.stage == GenStage.VICTIMS):
            with m.If(~genvictim.valid):
                m.d.comb += [stack.op.eq(StackOp.WRITE),
                             stack.next_top.stage.as_value().eq(
                                 Mux(top.captures_only, GenStage.DONE,
                                     GenStage.CASTLE_KINGSIDE))]
                goto("NEXT_MOVE")
            with m.Elif(~genaggressor.valid):
                m.d.comb += [stack.op.eq(StackOp.WRITE),
                             stack.next_top.mask.eq((top.mask | victim_bit) & ~own)]
                goto("NEXT_MOVE")
            with m.Else():
                with m.If(genaggressor.promotion):
                    m.d.comb += [stack.next_top.promoting.eq(1), stack.next_top.promo.eq(1)]
                    make((aggressor, victim, promotion_piece[0]))
                with m.Else():
                    m.d.comb += stack.next_top.mask.eq(top.mask | aggressor_bit)
                    make((aggressor, victim, PieceType.NONE))
        with m.Elif(top.stage == GenStage.CASTLE_KINGSIDE):
            with m.If(castlestatus.kingside_ok):
                m.d.comb += stack.next_top.stage.eq(GenStage.CASTLE_QUEENSIDE)
                make((castle_from, castle_from + (KINGSIDE_FILE - KING_FILE), PieceType.NONE))
            with m.Else():
                m.d.comb += [stack.op.eq(StackOp.WRITE),
                             stack.next_top.stage.eq(GenStage.CASTLE_QUEENSIDE)]
                goto("NEXT_MOVE")
        with m.Elif(top.stage == GenStage.CASTLE_QUEENSIDE):
            with m.If(castlestatus.queenside_ok):
                m.d.comb += stack.next_top.stage.eq(GenStage.DONE)
                make((castle_from, castle_from - (KING_FILE - QUEENSIDE_FILE), PieceType.NONE))
            with m.Else():
                m.d.comb += [stack.op.eq(StackOp.WRITE), stack.next_top.stage.eq(GenStage.DONE)]
                goto("NEXT_MOVE")
        with m.Else():
            # exhausted: no legal move in a full-width node is mate or stalemate
            with m.If(~top.has_legal & ~top.captures_only):
                m.d.sync += value.eq(Mux(top.in_check, stack.ply - MATE, 0))
            with m.Else():
                m.d.sync += value.eq(top.best)
            goto("RETURN")

    def _state_test_legal(self, m, board, stack, top, testcheck, side, searching, nodes, goto,
                          **_):
        # the board now holds the child: the mover is the side *not* to move
        m.d.comb += [testcheck.square.eq(board.king_squares[~side.as_value()]),
                     testcheck.by.eq(side)]
        with m.If(testcheck.attacked):
            m.d.comb += board.op.eq(BoardOp.UNMAKE)
            goto("NEXT_MOVE")
        with m.Elif(~searching & (top.depth == 1)):
            m.d.sync += nodes.eq(nodes + 1)
            m.d.comb += board.op.eq(BoardOp.UNMAKE)
            goto("NEXT_MOVE")
        with m.Else():
            m.d.comb += [
                stack.op.eq(StackOp.PUSH),
                stack.store.has_legal.eq(1),
                stack.next_top.as_value().eq(0),
                stack.next_top.depth.eq(Mux(top.depth == 0, 0, top.depth - 1)),
                stack.next_top.alpha.eq(-top.beta),
                stack.next_top.beta.eq(-top.alpha),
                stack.next_top.best.eq(-INF),
            ]
            goto("ENTER")

    def _state_return(self, m, board, stack, top, parent, searching, value, nodes, goto,
                      finish, **_):
        with m.If(stack.ply == 0):
            m.d.sync += [self.result.score.eq(value), self.result.best_move.eq(top.best_move)]
            finish(Status.DONE)
        with m.Else():
            m.d.comb += [stack.op.eq(StackOp.POP), stack.next_top.eq(parent),
                         board.op.eq(BoardOp.UNMAKE), board.move.eq(parent.move),
                         board.restore.eq(parent.undo)]
            score = Signal(Score)
            m.d.comb += score.eq(-value)
            cutoff = Signal()
            with m.If(searching & (score > parent.best)):
                m.d.comb += [stack.next_top.best.eq(score),
                             stack.next_top.best_move.eq(parent.move)]
                with m.If(score > parent.alpha):
                    m.d.comb += stack.next_top.alpha.eq(score)
                    with m.If(score >= parent.beta):
                        m.d.comb += cutoff.eq(1)
            with m.If(cutoff):
                m.d.sync += value.eq(score)
                goto("RETURN")
            with m.Else():
                goto("NEXT_MOVE")


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
