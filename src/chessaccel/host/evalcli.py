"""``chessaccel eval``: the static evaluation of a position, term by term.

    chessaccel eval POSITION [--evaluation pst|terms] [--backend B] [--json]
    chessaccel eval --epd FILE [--evaluation pst|terms] [--backend B] [--json]

The model gives each term's (mg, eg) from white's view and what the taper makes of it from the
side to move's view (docs/semantics.md section 6). Another backend reports the total only: it
answers a one-node job whose window lies below every score (depth 0, alpha -INF, beta -INF + 1),
so the stand pat is its static evaluation, returned fail-soft; the model's total is printed
beside it. With the side to move in check there is no stand pat, so such a backend cannot
report that position's evaluation.
"""

from chessaccel.contract.defs import INF
from chessaccel.contract.evalweights import (DEFAULT_EVALUATION, EVALUATIONS, TERMS,
                                             WEIGHTS_VERSION, check_evaluation)
from chessaccel.contract.evaltables import PHASE_WEIGHT, TAPER_SHIFT
from chessaccel.model.evalterms import evaluator, term_values
from chessaccel.model.evaluate import material_pst, phase, taper
from chessaccel.model.position import chess_from_board
from chessaccel.model.testcheck import in_check

__all__ = ["add_arguments", "run", "breakdown"]


def add_arguments(sp, common):
    """The eval subcommand's arguments (``common`` adds --backend and --json)."""
    sp.add_argument("position", nargs="?",
                    help="FEN or EPD line (quoted), or 'startpos'; or --epd FILE")
    common(sp, position=False)
    sp.add_argument("--epd", metavar="FILE", help="evaluate every position of an EPD/FEN file")
    sp.add_argument("--evaluation", default=DEFAULT_EVALUATION, metavar="NAME",
                    help=f"{' or '.join(EVALUATIONS)} (default {DEFAULT_EVALUATION})")


def breakdown(board, evaluation):
    """The evaluation of ``board`` by the model, term by term: a dict with the phase, the taper
    weight, each term's (mg, eg) from white's view and its tapered part from the side to move's
    view, the sums and the score."""
    terms = term_values(board) if evaluation == "terms" else {"material_pst": material_pst(board)}
    game_phase = phase(board)
    sign = -1 if board.side == 1 else 1
    rows = {name: {"mg": mg, "eg": eg, "tapered": taper(sign * mg, sign * eg, game_phase)}
            for name, (mg, eg) in terms.items()}
    mg = sum(v[0] for v in terms.values())
    eg = sum(v[1] for v in terms.values())
    return {"evaluation": evaluation, "side_to_move": "black" if board.side else "white",
            "phase": game_phase, "weight": PHASE_WEIGHT[game_phase], "terms": rows,
            "white_mg": mg, "white_eg": eg, "score": evaluator(evaluation)(board)}


def _backend_score(backend, board):
    """The backend's static evaluation of ``board`` (a one-node job), or None in check."""
    if in_check(board, board.side):
        return None
    return backend.search(board, 0, -INF, -INF + 1)["score"]


def _lines(fen, result, backend_name):
    width = max(len(name) for name in TERMS)
    out = [f"position: {fen}",
           f"evaluation: {result['evaluation']}"
           + (f" (weights version {WEIGHTS_VERSION})" if result["evaluation"] == "terms" else ""),
           f"side to move: {result['side_to_move']}  phase {result['phase']}  "
           f"taper weight {result['weight']}/{1 << TAPER_SHIFT}",
           f"{'term':<{width}}  {'mg':>6}  {'eg':>6}  {'tapered':>7}   (mg, eg: white's view; "
           "tapered: side to move's)"]
    for name, row in result["terms"].items():
        out.append(f"{name:<{width}}  {row['mg']:>6}  {row['eg']:>6}  {row['tapered']:>7}")
    out.append(f"{'sum':<{width}}  {result['white_mg']:>6}  {result['white_eg']:>6}")
    out.append(f"score: {result['score']} (side to move's view; the taper of the sums, which "
               "may differ from the tapered parts' sum by rounding)")
    if backend_name != "model":
        got = result["backend_score"]
        out.append(f"{backend_name}: " + ("cannot report it (the side to move is in check: no "
                                          "stand pat)" if got is None else
                                          f"{got} ({'equal' if got == result['score'] else 'DIFFERS'})"))
    return out


def _positions(args, read_board, usage_error):
    """(text, board) of the positions asked for."""
    if (args.position is None) == (args.epd is None):
        raise usage_error("eval needs a POSITION or --epd FILE (one of them)")
    if args.position is not None:
        return [(args.position, read_board(args.position))]
    try:
        with open(args.epd, encoding="utf-8", errors="replace") as f:
            lines = [line.strip() for line in f]
    except OSError as e:
        raise usage_error(f"cannot read {args.epd}: {e.strerror}") from None
    out = []
    for number, line in enumerate(lines, 1):
        if line and not line.startswith("#"):
            try:
                out.append((line, read_board(line)))
            except ValueError as e:
                raise usage_error(f"{args.epd} line {number}: {e}") from None
    if not out:
        raise usage_error(f"{args.epd} holds no position")
    return out


def run(args, backend, read_board, emit, usage_error):
    """Evaluate the positions of ``args`` on the model (and on ``backend`` when it is another)."""
    try:
        check_evaluation(args.evaluation)
    except ValueError as e:
        raise usage_error(str(e)) from None
    positions = _positions(args, read_board, usage_error)
    results, lines = [], []
    for text, board in positions:
        result = breakdown(board, args.evaluation)
        fen = chess_from_board(board).fen()
        result = {"fen": fen, "weights_version": WEIGHTS_VERSION
                  if args.evaluation == "terms" else None, **result}
        if args.backend != "model":
            result["backend"] = args.backend
            result["backend_score"] = _backend_score(backend, board)
        results.append(result)
        if lines:
            lines.append("")
        lines += _lines(fen, result, args.backend)
    emit(results[0] if args.position is not None else {"positions": results}, lines)
    differs = any(r.get("backend_score") not in (None, r["score"]) for r in results)
    return 1 if differs else 0
