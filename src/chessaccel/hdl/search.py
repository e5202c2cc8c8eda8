"""AlphaBetaFSM and SearchCore: the whole search of a job in hardware.

The search is the model's (``sim/model/search.py``), step for step: fail-soft negamax alpha-beta
on a fixed depth with quiescence, written as one finite state machine driving the Board, the move
generator (GenVictim, GenAggressor, CastleStatus), a TestCheck, Evaluate and the SearchStack. A
perft mode counts the leaves at a depth with the same generator, make and legality test.

The FSM's states are declared once, in ``STATES`` (name, what it does, next states); the FSM is
built from that table and every transition the code makes is checked against it at elaboration,
so docs/fsm.md, generated from the same table (``fsm_markdown``), cannot drift from the design.

Where the cycles go (docs/fsm.md has the figures): a move is made in one cycle (``NEXT_MOVE``:
GenAggressor on the victim the frame already holds, then make), its legality and the child's
in-check test take one more (``TEST_LEGAL``: GenVictim on the child, whose KING receiver is the
legality test and whose tree gives the child's first victim, and a TestCheck on the child's king;
the child frame is pushed and the node counted in the same cycle), and a node's value goes back to
its parent in the cycle it is known (stand-pat cutoff, exhausted move list, evaluated leaf).

Choices are found one step ahead, never changed: GenVictim runs beside GenAggressor in
``NEXT_MOVE`` on the mask with the current victim disabled, so the next victim is ready when the
current one runs out; GenAggressor's ``more`` says in the cycle of the make whether the victim has
another aggressor, so an exhausted victim costs no cycle of its own. The node walk is the model's
exactly; only the cycles it takes differ.
"""

import enum
from types import SimpleNamespace

from amaranth.hdl import Array, Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from chessaccel.contract.defs import (Color, CYCLE_BITS, GenStage, INF, MATE, MAX_DEPTH, MAX_PLY, Mode,
                             Move, NO_MOVE, NODE_BITS, Piece, PieceType, PROMOTION_ORDER, Score, SearchJob,
                             SearchResult, Status)
from chessaccel.contract.evalweights import DEFAULT_EVALUATION, check_evaluation
from chessaccel.contract.relative import CASTLE_KING_TO, KING_HOME, MIRROR

from .board import Board, BoardOp, KingSquares, king_squares_of
from .castlestatus import CastleStatus
from .evaluate import EvalOp, IncrementalEvaluate
from .evalterms import EvaluateTerms
from .genaggressor import GenAggressor
from .genvictim import GenVictim
from .interleave import THREAD_COUNTS, Interleave
from .searchstack import SearchStack, StackOp
from .squarearray import SQUARES, en_passant_square, onehot, own_squares
from .testcheck import TestCheck

__all__ = ["STATES", "AlphaBetaState", "SearchCore", "fsm_markdown", "update_doc"]

#: The bounds TEST_LEGAL compares the child's static score s with (``IncrementalEvaluate``'s
#: ``at_least``), from the top frame: s >= -best (the node's best not raised by -s),
#: s >= -alpha (the child's stand-pat cutoff at its beta; the node's alpha not raised),
#: s >= 1 - beta (s above the child's alpha; -s no cutoff at the node).
SCORE_BOUNDS = ("best", "alpha", "beta")

#: The AlphaBetaFSM, declared: state -> (what it does, the states it may go to next).
#: Every busy state also goes to IDLE when ``abort`` is raised (not listed).
STATES = {
    "IDLE": (
        "wait for a job; reject a bad depth or window (BAD_JOB), else load the board and the "
        "root frame",
        ("IDLE", "SUM_ROOT")),
    "SUM_ROOT": (
        "sum the evaluation of the root, one square a cycle (64 cycles a job): the root frame's "
        "sums, which each make then updates; count the kings on the way and reject a position "
        "without exactly one of each colour (BAD_JOB)",
        ("SUM_ROOT", "ENTER_ROOT", "IDLE")),
    "ENTER_ROOT": (
        "count the root; test it for check and find its first victim; stand pat at depth 0 "
        "unless in check, else start the move walk (perft 0: the root is the one leaf)",
        ("STAND_PAT", "NEXT_MOVE", "IDLE")),
    "NEXT_MOVE": (
        "one step of the move walk: the next promotion piece, or GenAggressor on the frame's "
        "victim (GenVictim finds the victim after it alongside), or a castling; make the move "
        "found (in check, only moves onto the node's evasions or by the king); exhausted: "
        "return the node's value (mate, stalemate or best) to the parent",
        ("NEXT_MOVE", "TEST_LEGAL", "RETURN", "IDLE")),
    "TEST_LEGAL": (
        "GenVictim on the child: unmake an illegal move (the mover's king is a victim); else "
        "count the child, tested for check (and its evasions found) in the same cycle; a "
        "quiescence child whose static score (from the sums this make gave) reaches its beta, "
        "or that has no capture, has that score for its value at once: unmake it and return "
        "the score to the node; else push the child with its first victim and, in quiescence, "
        "its static score as best and alpha (perft at depth 1: count a leaf and unmake)",
        ("NEXT_MOVE", "RETURN", "EVAL_LEAF")),
    "STAND_PAT": (
        "the root at depth 0, not in check (below the root TEST_LEGAL stands pat): finish with "
        "its static score if it reaches beta, else raise alpha and walk the captures",
        ("NEXT_MOVE", "IDLE")),
    "EVAL_LEAF": (
        "ply max_ply (the stack is full): return the static score",
        ("NEXT_MOVE", "RETURN")),
    "RETURN": (
        "the child cut off: return its parent's best to the grandparent",
        ("RETURN", "NEXT_MOVE", "IDLE")),
}


#: The FSM state register's values, one per row of STATES.
AlphaBetaState = enum.Enum("AlphaBetaState", [(name, i) for i, name in enumerate(STATES)])


class SearchCore(wiring.Component):
    """One search (or perft) job at a time.

    Raise ``start`` for one cycle with a ``job`` while ``busy`` is low; ``busy`` rises in the next
    cycle and falls when ``result`` is final (``result.status`` DONE, ABORTED or BAD_JOB; BUSY
    while running). ``abort`` stops a running job in the next cycle (status ABORTED; the other
    result fields are then meaningless). A job is bad (BAD_JOB) when its depth exceeds MAX_DEPTH,
    when in search mode its window is not -INF <= alpha < beta <= INF (answered at once), or
    when its position does not hold exactly one king of each colour (answered after the root's
    64-cycle pass, which counts them): the model's ``job_problem``.

    Search results: fail-soft ``score`` from the side to move's view, ``best_move`` (NO_MOVE when
    no root move raised the score), ``nodes`` (every node entered, quiescence included) and
    ``cycles`` (clock cycles from the cycle after ``start`` to the result). Perft: ``nodes`` is
    the leaf count.

    Debug port for the tests: ``trace_valid`` is high in the cycle a node is entered, with its
    ``trace_ply`` and the move that led to it (``trace_move``, NO_MOVE at the root): the model's
    ``search(trace=True)`` walk.

    ``max_ply`` (1..MAX_PLY) is the
    SearchStack's size: a node at that ply is evaluated, never expanded (the model's parameter
    of the same name); tests make it small to reach the stack-full rule in a few plies.

    ``threads=2`` interleaves two jobs (hdl/interleave.py): ``start``, ``abort``, ``result`` and
    ``busy`` are then arrays of two, one per thread, each with the contract above, and the
    threads share ``job``: a thread takes it within two cycles after ``start``, so ``job`` must
    hold for those cycles too and the other thread may be started three cycles later at the
    earliest (the board's dispatcher starts one job at a time from one job register). An abort
    stops the job within three cycles. Each job advances every other cycle; its ``cycles`` are
    clock cycles, so twice a one-thread core's. The trace shows the thread of the node entered
    on ``trace_thread``.

    ``evaluation`` ("pst" or "terms", contract/evalweights.py's EVALUATIONS) is the static
    evaluation the core is built with: "terms" adds EvaluateTerms (hdl/evalterms.py) on the
    board, whose terms join the incremental sums in the taper in the same cycle (docs/fsm.md,
    "Evaluate"), so the node walk and the cycles are the "pst" core's; the weights are
    constants of the build.
    """

    def __init__(self, max_ply=MAX_PLY, threads=1, evaluation=DEFAULT_EVALUATION):
        if not 1 <= max_ply <= MAX_PLY:
            raise ValueError(f"max_ply {max_ply} out of range 1..{MAX_PLY}")
        check_evaluation(evaluation)
        if threads not in THREAD_COUNTS:
            raise ValueError(f"threads must be one of {THREAD_COUNTS}, got {threads}")
        ports = {
            "job":    In(SearchJob),
            "start":  In(1),
            "abort":  In(1),
            "result": Out(SearchResult),
            "busy":   Out(1),
        }
        if threads > 1:
            # one job port for both threads: a thread-selected job would put a 302-bit
            # multiplexer, steered by the thread counter, in front of the board's load
            ports = {name: member if name == "job" else member.array(threads)
                     for name, member in ports.items()}
        ports.update({
            "trace_valid": Out(1),
            "trace_ply":   Out(range(max_ply + 1)),
            "trace_move":  Out(Move),
        })
        if threads > 1:
            ports["trace_thread"] = Out(range(threads))
        super().__init__(ports)
        self.max_ply = max_ply
        self.threads = threads
        self.evaluation = evaluation
        #: (state, next state) pairs the elaborated FSM uses (filled by ``elaborate``).
        self.transitions = set()

    def elaborate(self, platform):
        return _AlphaBetaFSM(self).build()

    def thread_ports(self, thread):
        """(job, start, abort, result, busy) of ``thread``."""
        names = ("start", "abort", "result", "busy")
        if self.threads == 1:
            return (self.job, *(getattr(self, name) for name in names))
        return (self.job, *(getattr(self, name)[thread] for name in names))


class _AlphaBetaFSM:
    """Builds the SearchCore's module: the blocks, their wiring and one method per FSM state.

    The state being built is ``self.state``; ``goto`` checks each transition against STATES.
    The core is written once for one or two threads (hdl/interleave.py): the blocks (the
    generate stage) read the registers' ``early`` copies, the states (the decide stage) read
    ``now`` copies and the blocks' outputs through ``cut``, and write ``next``.
    """

    def __init__(self, core):
        self.core = core
        self.m = m = Module()
        self.lanes = lanes = Interleave(m, core.threads)
        # the board shows the position seen from the side to move (white to move, own pieces
        # white): every block below reads it with a constant side, and the frame's squares
        # (victim, mask, move) are in the frame of its node's side to move
        # with two threads the job's king squares are found a cycle before its load
        m.submodules.board = self.board = Board(relative=True, threads=core.threads,
                                                kings_given=core.threads > 1)
        m.submodules.genvictim = self.genvictim = GenVictim()
        m.submodules.genaggressor = self.genaggressor = GenAggressor()
        m.submodules.castlestatus = self.castlestatus = CastleStatus()
        # in check? the side to move's king on the board as it stands
        m.submodules.side_check = self.side_check = TestCheck()
        # its ``at_least`` compares the child's static score in TEST_LEGAL with the bounds the
        # top frame sets it (``SCORE_BOUNDS``), without waiting for the taper's clamp
        # with two threads its own pipeline register (``split``) is the cut: the table reads to
        # the multipliers in the generate stage, the taper's add, clamp and compares in the
        # decide stage
        # with the "terms" evaluation, the terms of the board (the child's in TEST_LEGAL, the
        # root's in ENTER_ROOT) join the taper beside the incremental sums
        terms = core.evaluation == "terms"
        m.submodules.evaluate = self.evaluate = IncrementalEvaluate(
            bounds=len(SCORE_BOUNDS), split=core.threads > 1, terms=terms)
        self.evalterms = None
        if terms:
            m.submodules.evalterms = self.evalterms = EvaluateTerms()
        m.submodules.stack = self.stack = SearchStack(core.max_ply, threads=core.threads)
        self.state = None

        # the FSM's state is a register of the decide stage like the others (``m.FSM`` would
        # hide it): one value per row of STATES
        self.fsm = lanes.register(AlphaBetaState, "alphabeta_state")
        self.job = lanes.register(SearchJob, "job")        # the running job (latched at start)
        self.value = lanes.register(Score, "value")        # the value RETURN hands to the parent
        self.nodes = lanes.register(NODE_BITS, "nodes")
        self.cycles = lanes.register(CYCLE_BITS, "cycles")
        self.root_square = lanes.register(range(SQUARES), "root_square")  # SUM_ROOT's square
        # the kings SUM_ROOT has passed, per colour: none, one, more (a count that stops at 2)
        self.kings_seen = [lanes.register(range(3), f"kings_seen_{color.name.lower()}")
                           for color in Color]
        self.result = lanes.register(SearchResult, "result")
        # the static score of the position a cycle after TEST_LEGAL or ENTER_ROOT (STAND_PAT,
        # EVAL_LEAF): IncrementalEvaluate's ``score``, a thread's register
        self.static_score = lanes.register(Score, "static_score")
        self.searching = self.job.now.mode == Mode.SEARCH
        self.top, self.parent = self.stack.top, self.stack.parent

    # --- helpers shared by the states ---------------------------------------------------------

    def goto(self, target):
        self.core.transitions.add((self.state, target))
        if target not in STATES[self.state][1]:
            raise AssertionError(f"undeclared transition {self.state} -> {target}")
        self.m.d.comb += self.fsm.next.eq(AlphaBetaState[target])

    def finish(self, status, node_count=None):
        result = self.result.next
        self.m.d.comb += [result.status.eq(status),
                          result.nodes.eq(self.nodes.now if node_count is None else node_count),
                          result.cycles.eq(self.cycles.now)]
        self.goto("IDLE")

    def enter(self, frame, in_check, quiescent):
        """Fill ``frame`` (a next-top view) for a node just entered: in-check flag, quiescence,
        and its first victim, found by GenVictim on the board (``generate_stage`` pointed it at
        the node as a node just entered)."""
        victims = self.victims
        evasions = Signal(SQUARES, name="entry_evasions")
        self.m.d.comb += [
            evasions.eq(self.evasions | self.ep_evasion),
            frame.in_check.eq(in_check),
            frame.evasions.eq(evasions),
            frame.captures_only.eq(quiescent),
            frame.victim.eq(victims.victim),
            frame.victim_valid.eq(self.first_victim_valid(quiescent)),
            frame.king_only.eq(self.king_only(in_check, evasions, victims.victim)),
        ]

    @staticmethod
    def king_only(in_check, evasions, victim):
        """Whether only the king may take ``victim``: the node is in check and the victim is off
        its evasions. Kept in the frame beside the victim (set wherever the victim is), so that
        GenAggressor reads a register bit, not a 64:1 multiplexer of the evasions behind the
        victim square (that multiplexer led the generate stage of a three-core board)."""
        return in_check & ~evasions.bit_select(victim, 1)

    def first_victim_valid(self, quiescent):
        """Whether a node just entered has a first victim: GenVictim ran full width, and in
        quiescence only a capture counts (it then ranks above every quiet square)."""
        return Mux(quiescent, self.victims.capture_valid, self.victims.valid)

    def make(self):
        """Make the move on the Board's ports (``move_to_make``) and note it, with its undo
        record, in the top frame."""
        board, next_top = self.board, self.stack.next_top
        self.m.d.comb += [
            board.op.eq(BoardOp.MAKE),
            self.stack.op.eq(StackOp.WRITE),
            next_top.move.eq(board.move),
            next_top.moving.eq(board.moving),
            next_top.undo.eq(board.undo),
        ]
        self.goto("TEST_LEGAL")

    def move_to_make(self):
        """The move ``NEXT_MOVE`` makes if it makes one, on the Board's ports in every cycle:
        the promoting pawn's next piece, else the frame's victim taken by its aggressor, else
        (the victims done) a castling. It is chosen from registers and the cut alone, never
        from ``NEXT_MOVE``'s choice, so the make's per-square logic runs beside that choice
        and only the Board's ``op`` waits on it. The move an UNMAKE takes back is as early:
        the top's (``TEST_LEGAL``) or the parent's (a value returned)."""
        m, board, top, parent = self.m, self.board, self.top, self.parent
        aggressors, castling = self.aggressors, self.castling
        promotion_piece = Array(Const(p.value, PieceType.as_shape()) for p in PROMOTION_ORDER)
        castles = ~top.promoting & ~((top.stage == GenStage.VICTIMS) & top.victim_valid)
        kingside = (top.stage == GenStage.VICTIMS) & castling.kingside_ok
        castle_to = Mux(kingside, CASTLE_KING_TO[True], CASTLE_KING_TO[False])
        promo = Mux(top.promoting, promotion_piece[top.promo],
                    Mux(~castles & aggressors.promotion, promotion_piece[0], PieceType.NONE))
        moving = Mux(top.promoting | (~castles & aggressors.promotion), PieceType.PAWN,
                     Mux(castles, PieceType.KING, aggressors.aggressor_type))
        m.d.comb += [
            board.move.from_sq.eq(Mux(top.promoting, top.move.from_sq,
                                      Mux(castles, KING_HOME, aggressors.aggressor))),
            board.move.to_sq.eq(Mux(top.promoting, top.move.to_sq,
                                    Mux(castles, castle_to, top.victim))),
            board.move.promo.as_value().eq(promo),
            board.moving.eq(moving),
            board.castle.eq(castles),
        ]
        taking_back_top = self.fsm.now == AlphaBetaState.TEST_LEGAL
        m.d.comb += [board.unmake_move.eq(Mux(taking_back_top, top.move, parent.move)),
                     board.unmake_moving.eq(Mux(taking_back_top, top.moving, parent.moving)),
                     board.restore.eq(Mux(taking_back_top, top.undo, parent.undo))]

    def return_value(self, may_be_root=True):
        """The top node's value is known (``value_returned``): hand it to the parent in this
        cycle (unmake the parent's move, raise its best and alpha; a cutoff there goes on in
        RETURN), or, at the root, finish the job."""
        m = self.m
        if may_be_root:
            with m.If(self.stack.at_root):
                self.finish_root(self.returned.value)
            with m.Else():
                self.to_parent()
        else:
            self.to_parent()

    def value_returned(self):
        """The value the top node hands to its parent where the state returns one, and its
        compares with the parent's window, built outside the states' choices from registers
        alone: only the use of them waits on the choice, not their carry chains. The value is
        the one an exhausted node has in ``NEXT_MOVE`` (mated, stalemate or its best), the
        static score in ``EVAL_LEAF``, the cutoff's value in ``RETURN``."""
        m, top, fsm = self.m, self.top, self.fsm.now
        exhausted = Mux(~top.has_legal & ~top.captures_only,
                        Mux(top.in_check, self.stack.ply - MATE, 0), top.best)
        value = Signal(Score, name="returned_value")
        with m.Switch(fsm):
            with m.Case(AlphaBetaState.NEXT_MOVE):
                m.d.comb += value.eq(exhausted)
            with m.Case(AlphaBetaState.EVAL_LEAF):
                m.d.comb += value.eq(self.static_score.now)
            with m.Default():
                m.d.comb += value.eq(self.value.now)
        score = Signal(Score, name="returned_score")   # from the parent's view
        m.d.comb += score.eq(-value)
        parent = self.parent
        return SimpleNamespace(value=value, score=score, compares=(
            score > parent.best, score > parent.alpha, score >= parent.beta))

    def finish_root(self, root_value):
        """The root's value is known: the job's result."""
        self.m.d.comb += [self.result.next.score.eq(root_value),
                          self.result.next.best_move.eq(
                              absolute_move(self.top.best_move, self.job.now.position.side))]
        self.finish(Status.DONE)

    def to_parent(self):
        m, stack, board, parent = self.m, self.stack, self.board, self.parent
        m.d.comb += [stack.op.eq(StackOp.POP), stack.next_top.eq(parent),
                     board.op.eq(BoardOp.UNMAKE)]
        self.take_value(parent, self.returned.score, self.returned.compares)

    def take_value(self, frame, score, compares):
        """``frame`` (the node the value goes to, now in ``next_top``) takes its child's value,
        ``score`` from its own view: raise its best and alpha; a cutoff there goes on in
        RETURN. ``compares``: score above best, above alpha, at or above beta."""
        m, stack = self.m, self.stack
        cutoff = Signal(name=f"{self.state.lower()}_cutoff")
        above_best, above_alpha, cuts = compares
        with m.If(self.searching & above_best):
            m.d.comb += [stack.next_top.best.eq(score),
                         stack.next_top.best_move.eq(frame.move)]
            with m.If(above_alpha):
                m.d.comb += stack.next_top.alpha.eq(score)
                m.d.comb += cutoff.eq(cuts)
        with m.If(cutoff):
            m.d.comb += self.value.next.eq(score)
            self.goto("RETURN")
        with m.Else():
            self.goto("NEXT_MOVE")

    # --- the module ------------------------------------------------------------------------------

    def build(self):
        m, core = self.m, self.core
        board, stack, top = self.board, self.stack, self.top
        self.generate_stage()
        position = board.position   # the decide stage's view: normalised, white to move
        self.own = own_squares(m, position)
        # a pawn giving check may be taken en passant: its square is not the move's to-square;
        # added to the evasions in the decide stage, from the board it reads (the one the
        # generate stage saw), off the TestCheck's path
        self.ep_evasion = en_passant_square(m, position.ep, "evasion")

        # Evaluate follows the board's ops (the make's inputs are the Board's; SUM_ROOT reads the
        # root's squares one by one) and is given the sums of the node on top of the stack:
        # its ``after`` in the cycle after an op is the sums of the board as the op left it
        # (the child's in TEST_LEGAL), and its score one cycle later (in STAND_PAT, EVAL_LEAF).
        # The op's ports are the decide stage's (the table reads are registered: they feed the
        # generate stage of the same thread), ``sums`` and the bounds the generate stage's.
        evaluate = self.evaluate
        self.root_piece = root_piece = Signal(Piece)
        m.d.comb += [
            root_piece.eq(position.squares[self.root_square.now]),
            evaluate.op.eq(EvalOp.HOLD),
            evaluate.move.eq(board.move), evaluate.moving.eq(board.moving),
            evaluate.castle.eq(board.castle), evaluate.captured.eq(board.undo.captured),
            evaluate.ep.eq(position.ep),
            evaluate.square.eq(self.root_square.now), evaluate.piece.eq(root_piece),
        ]

        # --- defaults: the stack holds, next_top is the top, the board idles ---
        m.d.comb += [stack.op.eq(StackOp.HOLD), stack.next_top.eq(top), stack.store.eq(top)]
        self.move_to_make()
        self.returned = self.value_returned()
        busy = self.result.now.status == Status.BUSY
        with m.If(busy):
            m.d.comb += self.cycles.next.eq(self.cycles.now + core.threads)
        self.thread_ports()

        with m.Switch(self.fsm.now):
            for state in STATES:
                self.state = state
                with m.Case(AlphaBetaState[state]):
                    if state == "IDLE":
                        self._state_idle()
                        continue
                    with m.If(self.abort):
                        # abort: the implicit edge of every busy state (not in STATES)
                        m.d.comb += [self.result.next.status.eq(Status.ABORTED),
                                     self.fsm.next.eq(AlphaBetaState.IDLE)]
                    with m.Else():
                        getattr(self, f"_state_{state.lower()}")()
        return m

    def generate_stage(self):
        """The blocks on the board and the top frame as the generate stage sees them (the
        registers' ``early`` copies), and their outputs as the decide stage reads them."""
        m, lanes, board = self.m, self.lanes, self.board
        position = board.early_position
        top = self.stack.early_top
        fsm = self.fsm.early
        m.d.comb += [
            self.genvictim.position.eq(position),
            self.genaggressor.position.eq(position),
            self.castlestatus.position.eq(position),
            self.side_check.position.eq(position),
            self.side_check.square.eq(board.early_king_squares[Color.WHITE.value]),
            self.side_check.by.eq(Color.BLACK),
            # GenAggressor walks the frame's victim
            self.genaggressor.victim.eq(top.victim),
            self.genaggressor.captures_only.eq(top.captures_only),
            self.evaluate.sums.eq(top.sums),
        ]
        if self.evalterms is not None:
            # the normalised board: white is the side to move, so white's view is its view
            m.d.comb += [self.evalterms.position.eq(position),
                         self.evaluate.terms.eq(self.evalterms.total)]
        # the bounds are read where the compares are: the generate stage, or (split) the decide
        bounds_from = self.stack.top if self.evaluate.split else top
        for i, name in enumerate(SCORE_BOUNDS):
            bound = -getattr(bounds_from, name) + (1 if name == "beta" else 0)
            m.d.comb += self.evaluate.bound[i].eq(bound)
        # GenVictim: where the state enters a node (ENTER_ROOT the root, TEST_LEGAL the child on
        # the board) it finds the node's first victim (nothing disabled, full width), for the
        # whole state: its inputs must not wait on the state's choice (in TEST_LEGAL the push
        # depends on the child's stand-pat compare, and GenVictim's tree behind that choice was
        # the core's longest path), nor on the TestCheck of the same pass (a quiescent node's
        # first victim is the full-width one when a capture exists: ``capture_valid``, chosen in
        # ``enter``). Where the node is not entered the victim found is not used. Elsewhere it
        # looks past the frame's victim (the next victim, for NEXT_MOVE).
        entering = ((fsm == AlphaBetaState.TEST_LEGAL) | (fsm == AlphaBetaState.ENTER_ROOT))
        # A node in check (full width) skips, unmade, the moves that cannot end the check: the
        # frame keeps TestCheck's evasions (the checkers and the rays between a slider and the
        # king, and the en-passant square) from the node's entry, and a piece other than the
        # king may only go there. GenVictim looks past victims outside the evasions and the
        # king's reach; GenAggressor offers only the king for a victim outside the evasions.
        # The legal moves and their order are unchanged (TEST_LEGAL still tests each move
        # made); a node's first victim, found as it is entered, is not filtered. The king's
        # reach is TestCheck's king-step squares around the king it radiates from.
        off_evasions = Signal(SQUARES, name="off_evasions")
        m.d.comb += [
            off_evasions.eq(Mux(top.in_check, ~(top.evasions | self.side_check.neighbours), 0)),
            self.genaggressor.king_only.eq(top.king_only),
            self.genaggressor.mask.eq(top.mask),
            # the king never steps onto a square the enemy attacks: skipped unmade
            self.genaggressor.safe_king.eq(1),
        ]
        with m.If(entering):
            m.d.comb += [self.genvictim.mask.eq(0), self.genvictim.captures_only.eq(0)]
        with m.Else():
            m.d.comb += [self.genvictim.mask.eq(top.mask | onehot(top.victim) | off_evasions),
                         self.genvictim.captures_only.eq(top.captures_only)]

        cut = lanes.cut
        self.victims = SimpleNamespace(
            victim=cut(self.genvictim.victim, "victim"),
            valid=cut(self.genvictim.valid, "victim_valid"),
            capture_valid=cut(self.genvictim.capture_valid, "capture_valid"),
            king_attacked=cut(self.genvictim.king_attacked, "king_attacked"))
        self.aggressors = SimpleNamespace(**{
            name: cut(getattr(self.genaggressor, name), name)
            for name in ("aggressor", "valid", "aggressor_type", "promotion", "more")})
        self.castling = SimpleNamespace(
            kingside_ok=cut(self.castlestatus.kingside_ok, "kingside_ok"),
            queenside_ok=cut(self.castlestatus.queenside_ok, "queenside_ok"))
        self.in_check = cut(self.side_check.attacked, "in_check")
        self.evasions = cut(self.side_check.evasions, "evasions")
        if self.evaluate.split:
            self.after, self.after_score, self.at_least = (
                self.evaluate.after, self.evaluate.after_score, self.evaluate.at_least)
        else:
            self.after = cut(self.evaluate.after, "after")
            self.after_score = cut(self.evaluate.after_score, "after_score")
            self.at_least = cut(self.evaluate.at_least, "at_least")
        m.d.comb += self.static_score.next.eq(self.after_score)

    def thread_ports(self):
        """The core's ports of the thread in the decide stage: ``self.start``, ``self.job_in``
        and ``self.abort`` for the states; its result and busy out. With two threads a start
        waits in ``pending`` until its thread takes it, and the states read start and abort
        from registers loaded the cycle before the thread's turn."""
        m, core, lanes = self.m, self.core, self.lanes
        ports = [core.thread_ports(t) for t in range(core.threads)]
        idle = self.fsm.now == AlphaBetaState.IDLE
        if core.threads == 1:
            job, start, abort, result, busy = ports[0]
            self.job_in, self.start, self.abort = job, start, abort
            self.job_bad = job_bad(job)
            m.d.comb += [result.eq(self.result.early),
                         busy.eq(self.result.early.status == Status.BUSY)]
            return
        # the decide stage reads start and abort from registers loaded a cycle ahead with the
        # thread whose turn is next: no thread-steered multiplexer in front of the FSM's choice
        pending = Signal(core.threads)
        self.job_in = core.job
        # the job's depth and window checked a cycle ahead too (the job port holds from start
        # until the thread takes it): the compares' carry chains are off the load's path
        self.job_bad = Signal(name="job_bad_turn")
        m.d.sync += self.job_bad.eq(job_bad(core.job))
        # and its king squares (the scan of its 64 squares was the path in front of the
        # board's king registers at the load)
        self.job_kings = Signal(KingSquares, name="job_kings_turn")
        found = king_squares_of(m, core.job.position, "job_king")
        m.d.sync += [self.job_kings[c.value].eq(found[c.value]) for c in Color]
        self.start = Signal(name="start_turn")
        self.abort = Signal(name="abort_turn")
        for t, (_, start, abort, result, busy) in enumerate(ports):
            turn = lanes.thread == t
            with m.If(turn):
                m.d.sync += result.eq(self.result.next)
            with m.Else():     # thread t decides next cycle
                m.d.sync += [self.start.eq(pending[t] | start), self.abort.eq(abort)]
            m.d.sync += pending[t].eq((pending[t] | start) & ~(turn & idle & self.start))
            m.d.comb += busy.eq(pending[t] | (result.status == Status.BUSY))
        m.d.comb += core.trace_thread.eq(lanes.thread)

    # --- one method per state ----------------------------------------------------------------

    def _state_idle(self):
        m, board, stack = self.m, self.board, self.stack
        job = self.job_in
        with m.If(self.start):
            # the kings are counted in SUM_ROOT, which reads every square anyway (a check of the
            # 64 squares here, in front of the board's load, was about 4,300 LUT4 of the core)
            with m.If(self.job_bad):
                m.d.comb += self.result.next.status.eq(Status.BAD_JOB)
                self.goto("IDLE")
            with m.Else():
                m.d.comb += [self.job.next.eq(job), self.nodes.next.eq(0),
                             self.cycles.next.eq(0), self.result.next.status.eq(Status.BUSY)]
                if self.core.threads > 1:
                    m.d.comb += board.load_kings.eq(self.job_kings)
                m.d.comb += [board.op.eq(BoardOp.LOAD), board.load_position.eq(job.position),
                             stack.op.eq(StackOp.CLEAR),
                             stack.next_top.as_value().eq(0),
                             stack.next_top.depth.eq(job.depth),
                             stack.next_top.alpha.eq(job.alpha),
                             stack.next_top.beta.eq(job.beta),
                             stack.next_top.best.eq(-INF)]
                m.d.comb += self.root_square.next.eq(0)
                m.d.comb += [seen.next.eq(0) for seen in self.kings_seen]
                self.goto("SUM_ROOT")

    def _state_sum_root(self):
        # one square a cycle into the root frame's sums (cleared at the load); the last square's
        # term arrives in ENTER_ROOT
        m, stack = self.m, self.stack
        m.d.comb += [self.evaluate.op.eq(EvalOp.SQUARE), stack.op.eq(StackOp.WRITE),
                     stack.next_top.sums.eq(self.after),
                     self.root_square.next.eq(self.root_square.now + 1)]
        # the Board's king-square registers and TestCheck need exactly one king a side
        one_king_each = Const(1, 1)
        for color, seen in zip(Color, self.kings_seen):
            king = (self.root_piece.type == PieceType.KING) & (self.root_piece.color == color)
            count = Mux(king & (seen.now != 2), seen.now + 1, seen.now)
            m.d.comb += seen.next.eq(count)
            one_king_each = one_king_each & (count == 1)
        with m.If(self.root_square.now == SQUARES - 1):
            with m.If(one_king_each):
                self.goto("ENTER_ROOT")
            with m.Else():
                m.d.comb += self.result.next.status.eq(Status.BAD_JOB)
                self.goto("IDLE")
        with m.Else():
            self.goto("SUM_ROOT")

    def _state_enter_root(self):
        m, core, stack, top = self.m, self.core, self.stack, self.top
        m.d.comb += [core.trace_valid.eq(1), core.trace_ply.eq(0), core.trace_move.eq(0)]
        with m.If(~self.searching & (top.depth == 0)):
            self.finish(Status.DONE, node_count=1)  # perft 0: the root is the one leaf
        with m.Else():
            in_check = self.in_check
            quiescent = self.searching & (top.depth == 0) & ~in_check
            with m.If(self.searching):
                m.d.comb += self.nodes.next.eq(1)
            m.d.comb += [stack.op.eq(StackOp.WRITE), stack.next_top.sums.eq(self.after)]
            self.enter(stack.next_top, in_check, quiescent)
            with m.If(quiescent):
                self.goto("STAND_PAT")
            with m.Else():
                self.goto("NEXT_MOVE")

    def _state_next_move(self):
        m, stack, top = self.m, self.stack, self.top
        next_top = stack.next_top
        victims, aggressors, castling = self.victims, self.aggressors, self.castling
        victim_bit = onehot(top.victim)
        full_width = ~top.captures_only
        # Evaluate reads the make's ports in every NEXT_MOVE (its op waits on the state alone);
        # only the TEST_LEGAL after a make uses what it computes
        m.d.comb += self.evaluate.op.eq(EvalOp.MAKE)

        def victim_done():
            # the victim has no aggressor left: disable it, give the own pieces back, take the
            # next victim (GenVictim ran on the mask with this victim disabled)
            m.d.comb += [next_top.mask.eq((top.mask | victim_bit) & ~self.own),
                         next_top.victim.eq(victims.victim),
                         next_top.victim_valid.eq(victims.valid),
                         next_top.king_only.eq(
                             self.king_only(top.in_check, top.evasions, victims.victim))]

        def castle(stage_after):
            m.d.comb += next_top.stage.eq(stage_after)
            self.make()

        with m.If(top.promoting):
            # the same pawn, the same victim, the next promotion piece
            last = top.promo == len(PROMOTION_ORDER) - 1
            m.d.comb += [next_top.promo.eq(Mux(last, 0, top.promo + 1)),
                         next_top.promoting.eq(~last)]
            with m.If(last & top.more):
                m.d.comb += next_top.mask.eq(top.mask | onehot(top.move.from_sq))
            with m.Elif(last):
                victim_done()
            self.make()
        with m.Elif((top.stage == GenStage.VICTIMS) & top.victim_valid):
            aggressor = aggressors.aggressor
            with m.If(~aggressors.valid):
                # a victim whose aggressors the filters bar (``generate_stage``): a node's first
                # victim in check, off the evasions, not the king's to take; or a victim whose
                # only aggressor is a king barred from an attacked square. Never a later step of
                # a victim (every receiver has a transmitter, the own pieces are enabled again
                # with each new victim, and ``more`` counts only the aggressors not barred)
                m.d.comb += stack.op.eq(StackOp.WRITE)
                victim_done()
                self.goto("NEXT_MOVE")
            with m.Elif(aggressors.promotion):
                m.d.comb += [next_top.promoting.eq(1), next_top.promo.eq(1),
                             next_top.more.eq(aggressors.more)]
                self.make()
            with m.Else():
                with m.If(aggressors.more):
                    m.d.comb += next_top.mask.eq(top.mask | onehot(aggressor))
                with m.Else():
                    victim_done()
                self.make()
        # victims exhausted: kingside castling, then queenside, in this same cycle if allowed
        with m.Elif((top.stage == GenStage.VICTIMS) & full_width & castling.kingside_ok):
            castle(GenStage.CASTLE_QUEENSIDE)
        with m.Elif(((top.stage == GenStage.VICTIMS) | (top.stage == GenStage.CASTLE_QUEENSIDE))
                    & full_width & castling.queenside_ok):
            castle(GenStage.DONE)
        with m.Else():
            # the moves are exhausted: the node's value (mated, stalemate or its best:
            # ``value_returned``) goes to the parent
            self.return_value()

    def _state_test_legal(self):
        m, core, board, stack, top = self.m, self.core, self.board, self.stack, self.top
        # the board now holds the child: GenVictim's KING receiver is the mover's king attacked
        child_ply = stack.ply + 1
        child_depth = Mux(top.depth == 0, 0, top.depth - 1)
        in_check = self.in_check
        quiescent = self.searching & (child_depth == 0) & ~in_check
        leaf = self.searching & stack.child_at_max
        # the child's static score, from the sums its make gave (this cycle), its window, and
        # its compares with the window (IncrementalEvaluate's, beside the taper: SCORE_BOUNDS)
        score = self.after_score
        at_least = dict(zip(SCORE_BOUNDS, self.at_least))
        child_alpha = Signal(Score)
        child_beta = Signal(Score)
        stands = Signal()   # a stand-pat cutoff if the child is a quiescence node
        above_alpha = Signal()  # score > child_alpha
        m.d.comb += [child_alpha.eq(-top.beta), child_beta.eq(-top.alpha),
                     stands.eq(at_least["alpha"]),        # score >= child_beta
                     above_alpha.eq(at_least["beta"])]    # score >= child_alpha + 1
        # GenVictim ran on the child as a node just entered (``generate_stage``): its first
        # victim, used if the child is pushed; its KING receiver, the legality test, does not
        # look at those inputs
        with m.If(self.victims.king_attacked):
            m.d.comb += board.op.eq(BoardOp.UNMAKE)
            self.goto("NEXT_MOVE")
        with m.Elif(~self.searching & (top.depth == 1)):
            m.d.comb += [self.nodes.next.eq(self.nodes.now + 1), board.op.eq(BoardOp.UNMAKE)]
            self.goto("NEXT_MOVE")
        with m.Else():
            with m.If(self.searching):
                m.d.comb += self.nodes.next.eq(self.nodes.now + 1)
                # the move is in the mover's frame; the board's side is now the mover's opponent
                mover = Mux(board.side == Color.BLACK, Color.WHITE, Color.BLACK)
                m.d.comb += [core.trace_valid.eq(1), core.trace_ply.eq(child_ply),
                             core.trace_move.eq(absolute_move(top.move, mover))]
            with m.If(quiescent & ~leaf & (stands | ~self.first_victim_valid(1))):
                # the child stands pat at or above its beta, or has no capture (its value is
                # then its static score too): it is never pushed; its score goes to the node on
                # top as a value returned (the move is taken back)
                m.d.comb += [board.op.eq(BoardOp.UNMAKE), stack.op.eq(StackOp.WRITE),
                             stack.next_top.has_legal.eq(1)]
                # -score > best, -score > alpha, -score >= beta
                self.take_value(top, -score, compares=(~at_least["best"], ~at_least["alpha"],
                                                      ~at_least["beta"]))
            with m.Else():
                m.d.comb += [
                    stack.op.eq(StackOp.PUSH),
                    stack.store.has_legal.eq(1),
                    stack.next_top.as_value().eq(0),
                    stack.next_top.depth.eq(child_depth),
                    stack.next_top.alpha.eq(child_alpha),
                    stack.next_top.beta.eq(child_beta),
                    stack.next_top.best.eq(-INF),
                    stack.next_top.sums.eq(self.after),
                ]
                self.enter(stack.next_top, in_check, quiescent)
                with m.If(leaf):
                    self.goto("EVAL_LEAF")
                with m.Else():
                    with m.If(quiescent):
                        # stand pat below beta: the static score is the best so far
                        m.d.comb += stack.next_top.best.eq(score)
                        with m.If(above_alpha):
                            m.d.comb += stack.next_top.alpha.eq(score)
                    self.goto("NEXT_MOVE")

    def _state_stand_pat(self):
        m, stack, top = self.m, self.stack, self.top
        score = self.static_score.now
        with m.If(score >= top.beta):
            self.finish_root(score)
        with m.Else():
            m.d.comb += [stack.op.eq(StackOp.WRITE), stack.next_top.best.eq(score)]
            with m.If(score > top.alpha):
                m.d.comb += stack.next_top.alpha.eq(score)
            self.goto("NEXT_MOVE")

    def _state_eval_leaf(self):
        self.return_value(may_be_root=False)  # max_ply >= 1: not root

    def _state_return(self):
        self.return_value()


def job_bad(job):
    """A job the core refuses at once: depth above MAX_DEPTH, or in search mode a window that
    is not -INF <= alpha < beta <= INF (a position without one king a side is found in
    SUM_ROOT)."""
    bad_window = (job.mode == Mode.SEARCH) & (
        (job.alpha < -INF) | (job.beta > INF) | (job.alpha >= job.beta))
    return (job.depth > MAX_DEPTH) | bad_window


def absolute_move(move, side):
    """A move given in the frame of ``side`` (the side that plays it), in absolute squares
    (NO_MOVE, a1a1, stays NO_MOVE: no real move has its from-square for its to-square)."""
    mirror = Mux((side == Color.BLACK) & (move.as_value() != NO_MOVE), MIRROR, 0)
    return Move(Cat(move.from_sq.as_value() ^ mirror, move.to_sq.as_value() ^ mirror,
                    move.promo.as_value()))


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
