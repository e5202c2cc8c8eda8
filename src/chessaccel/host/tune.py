"""The work of ``chessaccel tune`` (its command line: host/tunecli.py): Texel's method, the terms
evaluation's weights fitted to the results of the project's own games (docs/engine.md, "Tuning
the evaluation").

    chessaccel tune data PGN... --out DATA.npz [--skip-plies N]
    chessaccel tune label DATA.npz --engine COMMAND --out LABELLED.npz [--depth N] [--workers N]
    chessaccel tune fit DATA.npz --out WEIGHTS.json [--target result|engine|mix:L]
                        [--iterations N] [--holdout F] [--seed S] [--prior-sd CP] [--free-signs]
                        [--only NAMES]
                        [--folds N] [--start WEIGHTS.json] [--squares CP] [--plot PNG]
                        [--summary JSON] [--json]

``data`` turns games into a data set: every quiet position after the opening of every finished
game, labelled with the game's result from white's view (1, 0.5, 0), with the model's feature
counts (model/evalterms.py, ``feature_counts``) so that the evaluation of any weight vector over
the whole set is one matrix product. A position is quiet when the side to move is not in check,
has a legal move and no legal promotion, and the model's quiescence search with the fixed
material + piece-square evaluation ("pst", docs/semantics.md section 5) returns its stand pat:
no capture sequence improves on the static evaluation. A position met twice in one game is kept
once.

``fit`` first fits the scaling constant K of the logistic p = 1 / (1 + exp(-K * eval / 400))
(eval in centipawns from white's view) to the results with the starting weights, then the
weights (mg and eg of every WEIGHT_NAMES entry; the mobility centres stay fixed, and so do the
material + piece-square tables unless ``--squares`` fits the terms evaluation's own tables too,
every entry mg and eg, with a prior of its own) by damped Gauss-Newton (Levenberg-Marquardt)
on the mean squared error between p and the results, pulled towards the starting weights as by
a Gaussian prior of ``--prior-sd`` centipawns. The weights are then rounded to integers and clamped to the weight's width
(WEIGHT_BITS), and every loss reported is that of the evaluation exactly as the model computes
it (integer sums, the floored taper). A share of the games (``--holdout``, by game, never by
position) is kept out of the fit and its loss reported beside the training loss.

``label`` adds a stronger engine's opinion of every position: a UCI engine (Debian's stockfish)
searches each one to a fixed depth, and its score (centipawns from white's view; a mate counts
ENGINE_MATE_CP) is kept as ``engine_cp``. ``fit --target engine`` then fits to that score turned
into an expected result, ``1 / (1 + exp(-K_e * engine_cp / 400))`` with K_e the constant that
best maps the engine's scores to the games' results, instead of to the games' results
themselves (a game's result labels all its positions alike, a blunder's before and after);
``--target mix:L`` to L times the result plus 1 - L times the engine's expected result.
"""

import json
import os
import time
import zipfile

import numpy as np

from chessaccel.contract.defs import EVAL_MAX, INF
from chessaccel.contract.evaltables import PHASE_WEIGHT, TAPER_SHIFT
from chessaccel.contract.evalweights import (MOBILITY_CENTRE, SQUARE_BITS, SQUARE_PIECES,
                                             WEIGHT_BITS, WEIGHT_NAMES, WeightsError,
                                             load_weights, raw_weights, square_tables,
                                             weight_vectors, weights_json)

__all__ = ["TuneError", "make_data", "load_data", "label_data", "square_features", "exact_eval",
           "mse", "fit_k", "Start", "bounds", "fit", "cross_validate", "run_fit", "targets",
           "castling_check"]

#: The data set's format: a data set of another format (or other WEIGHT_NAMES) is refused.
DATA_FORMAT = 1
RESULTS = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}
#: The centipawns an engine's mate score counts for in ``label`` (either sign); larger scores are
#: clipped to it too.
ENGINE_MATE_CP = 2000
_MOBILE_NAMES = ("knight", "bishop", "rook", "queen")


class TuneError(ValueError):
    """Bad input to ``chessaccel tune``: the message is one line."""


# --- the data set -------------------------------------------------------------------------------

def _game_builder():
    import chess.pgn

    class Builder(chess.pgn.GameBuilder):
        """python-chess's builder, keeping its errors in game.errors without logging them
        (the command reports the first in one line)."""
        def handle_error(self, error):
            self.game.errors.append(error)
    return Builder


def _read_games(paths, finished_only=True):
    """[(path, game number, result, python-chess game)] of every finished game of the files
    (with ``finished_only`` False, the unfinished ones too, their result None); (the games, how
    many were unfinished)."""
    import chess.pgn
    games, unfinished = [], 0
    builder = _game_builder()
    for path in paths:
        try:
            handle = open(path, encoding="utf-8", errors="replace")
        except OSError as e:
            raise TuneError(f"cannot read {path}: {e.strerror}") from None
        with handle:
            number = found = 0
            while True:
                try:
                    game = chess.pgn.read_game(handle, Visitor=builder)
                except (ValueError, UnicodeDecodeError) as e:
                    raise TuneError(f"{path} game {number + 1}: {e}") from None
                if game is None:
                    break
                number += 1
                if game.errors:
                    raise TuneError(f"{path} game {number}: {str(game.errors[0]).splitlines()[0]}")
                if game.headers.get("Variant", "Standard").lower() not in ("standard", "chess"):
                    raise TuneError(f"{path} game {number}: variant "
                                    f"{game.headers['Variant']!r} is not standard chess")
                if not any(True for _ in game.mainline_moves()):
                    continue
                found += 1
                result = game.headers.get("Result", "*")
                if result not in RESULTS:
                    unfinished += 1
                    if finished_only:
                        continue
                games.append((path, number, RESULTS.get(result), game))
            if not found:
                raise TuneError(f"{path} holds no game (is it a PGN file?)")
    return games, unfinished


def _quiet(cb, board):
    """Whether the position is quiet: not in check, a legal move and no legal promotion, and the
    model's quiescence search on material + PST returns the static evaluation."""
    from chessaccel.model.evaluate import evaluate
    from chessaccel.model.search import search
    if cb.is_check():
        return False
    moves = list(cb.legal_moves)
    if not moves or any(m.promotion for m in moves):
        return False
    return search(board, 0, -INF, INF, evaluation="pst").score == evaluate(board)


def make_data(paths, out, skip_plies, command="", progress=None):
    """Write the data set of the games of ``paths`` to ``out``; returns a summary dict."""
    from chessaccel.model.evalterms import feature_counts
    from chessaccel.model.evaluate import material_pst, phase
    from chessaccel.model.position import board_from_chess
    games, unfinished = _read_games(paths)
    if not games:
        raise TuneError("the PGN files hold no finished game (1-0, 0-1 or 1/2-1/2)")
    rows = {k: [] for k in ("counts", "material", "phase", "side", "result", "game", "fen")}
    skipped = {"opening": 0, "check_or_promotion": 0, "not_quiet": 0, "repeated": 0}
    t0 = time.perf_counter()
    for index, (path, number, result, game) in enumerate(games):
        cb, seen = game.board(), set()
        for ply, move in enumerate(game.mainline_moves(), 1):
            cb.push(move)
            if ply <= skip_plies:
                skipped["opening"] += 1
                continue
            key = cb.epd()
            if key in seen:
                skipped["repeated"] += 1
                continue
            seen.add(key)
            board = board_from_chess(cb)
            if cb.is_check() or any(m.promotion for m in cb.legal_moves) or cb.is_game_over():
                skipped["check_or_promotion"] += 1
                continue
            if not _quiet(cb, board):
                skipped["not_quiet"] += 1
                continue
            rows["counts"].append(feature_counts(board))
            rows["material"].append(material_pst(board))
            rows["phase"].append(phase(board))
            rows["side"].append(board.side)
            rows["result"].append(result)
            rows["game"].append(index)
            rows["fen"].append(cb.fen())
        if progress and ((index + 1) % 10 == 0 or index + 1 == len(games)):
            progress(f"game {index + 1}/{len(games)}: {len(rows['fen'])} positions "
                         f"({time.perf_counter() - t0:.0f} s)")
    if not rows["fen"]:
        raise TuneError("no quiet position after the opening in these games")
    names = sorted({path for path, *_ in games})
    recipe = (f"{command or 'chessaccel tune data'}: {len(rows['fen'])} quiet positions of "
              f"{len(games)} finished games in {', '.join(names)}; the first {skip_plies} "
              "plies of each game skipped, then positions in check, with a legal promotion or "
              "none, repeated in the game, or where the model's quiescence on material + PST "
              "differs from the static evaluation")
    directory = os.path.dirname(out)
    if directory:
        os.makedirs(directory, exist_ok=True)
    try:
        with open(out, "wb") as f:
            np.savez_compressed(
                f, format=np.array(DATA_FORMAT), names=np.array(WEIGHT_NAMES),
                centres=np.array([MOBILITY_CENTRE[t] for t in sorted(MOBILITY_CENTRE)]),
                counts=np.array(rows["counts"], dtype=np.int16),
                material=np.array(rows["material"], dtype=np.int32),
                phase=np.array(rows["phase"], dtype=np.int8),
                side=np.array(rows["side"], dtype=np.int8),
                result=np.array(rows["result"], dtype=np.float32),
                game=np.array(rows["game"], dtype=np.int32),
                fen=np.array(rows["fen"]), files=np.array(names), recipe=np.array(recipe))
    except OSError as e:
        raise TuneError(f"cannot write {out}: {e.strerror}") from None
    return {"out": out, "positions": len(rows["fen"]), "games": len(games), "files": len(names),
            "unfinished_games": unfinished, "skipped": skipped, "recipe": recipe}


_DATA_KEYS = {"format": (), "names": (), "centres": (), "counts": (), "material": (),
              "phase": (), "side": (), "result": (), "game": (), "fen": (), "recipe": ()}


def load_data(path):
    """The data set of ``path`` as a dict of arrays; TuneError (one line) when it is not one of
    this format, holds no position or was made for other weights."""
    if os.path.exists(path) and not zipfile.is_zipfile(path):
        raise TuneError(f"{path} is not a data set of `chessaccel tune data` (not an .npz "
                        "archive)")
    try:
        with np.load(path, allow_pickle=False) as z:
            missing = [k for k in _DATA_KEYS if k not in z.files]
            if missing:
                raise TuneError(f"{path} is not a data set of `chessaccel tune data` "
                                f"(no {missing[0]!r})")
            d = {k: z[k] for k in z.files}
    except OSError as e:
        raise TuneError(f"cannot read {path}: {e.strerror or e}") from None
    except (ValueError, zipfile.BadZipFile, EOFError) as e:
        raise TuneError(f"{path} is not a data set of `chessaccel tune data` ({e})") from None
    if int(d["format"]) != DATA_FORMAT or tuple(str(n) for n in d["names"]) != WEIGHT_NAMES:
        raise TuneError(f"{path} was made for other weights or by another version; remake it "
                        "with `chessaccel tune data`")
    n = len(d["result"])
    if n == 0:
        raise TuneError(f"{path} holds no position")
    shapes = {"counts": (n, len(WEIGHT_NAMES)), "material": (n, 2), "phase": (n,),
              "side": (n,), "game": (n,), "fen": (n,)}
    for key, shape in shapes.items():
        if d[key].shape != shape:
            raise TuneError(f"{path} is damaged: {key} has shape {d[key].shape}, not {shape}")
    if "engine_cp" in d and (d["engine_cp"].shape != (n,)
                             or np.abs(d["engine_cp"]).max() > ENGINE_MATE_CP):
        raise TuneError(f"{path} is damaged: engine_cp has shape {d['engine_cp'].shape} or a "
                        f"score beyond {ENGINE_MATE_CP}")
    if (not np.isin(d["result"], (0.0, 0.5, 1.0)).all() or not np.isin(d["side"], (0, 1)).all()
            or d["phase"].min() < 0 or d["phase"].max() >= len(PHASE_WEIGHT)):
        raise TuneError(f"{path} is damaged: a result, side or phase out of range")
    return d


def label_data(path, out, engine, depth, workers=2, command="", progress=None):
    """Write the data set of ``path`` to ``out`` with ``engine_cp``: the UCI engine ``engine``'s
    score of each position at ``depth`` (centipawns, white's view, within +-ENGINE_MATE_CP),
    ``workers`` engine processes at once (one search thread each); returns a summary dict."""
    import shlex
    import threading

    import chess
    import chess.engine
    d = load_data(path)
    fens = [str(f) for f in d["fen"]]
    scores = np.zeros(len(fens), dtype=np.int32)
    engines, failures, done = [], [], [0]
    lock = threading.Lock()
    t0 = time.perf_counter()
    try:
        for _ in range(workers):
            try:
                engines.append(chess.engine.SimpleEngine.popen_uci(shlex.split(engine)))
            except (OSError, chess.engine.EngineError, chess.engine.EngineTerminatedError) as e:
                raise TuneError(f"cannot start the engine {engine!r}: {e}") from None
            for option, value in (("Threads", 1), ("Hash", 16)):
                if option in engines[-1].options:
                    engines[-1].configure({option: value})

        name = engines[0].id.get("name", engine)

        def work(k):
            try:
                for i in range(k, len(fens), workers):
                    info = engines[k].analyse(chess.Board(fens[i]),
                                              chess.engine.Limit(depth=depth))
                    cp = info["score"].white().score(mate_score=ENGINE_MATE_CP)
                    scores[i] = max(-ENGINE_MATE_CP, min(ENGINE_MATE_CP, cp))
                    with lock:
                        done[0] += 1
                        if progress and done[0] % 1000 == 0:
                            progress(f"labelled {done[0]}/{len(fens)} positions "
                                     f"({time.perf_counter() - t0:.0f} s)")
            except (chess.engine.EngineError, chess.engine.EngineTerminatedError, KeyError) as e:
                failures.append(f"the engine {engine!r} failed on {fens[i]!r}: {e or 'no score'}")

        threads = [threading.Thread(target=work, args=(k,)) for k in range(workers)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        for e in engines:
            try:
                e.quit()
            except chess.engine.EngineTerminatedError:
                pass
    if failures:
        raise TuneError(failures[0])
    recipe = (f"{d['recipe']}; each position then scored by {name} at depth {depth} "
              f"(`{command or 'chessaccel tune label'}`, mates as {ENGINE_MATE_CP} cp)")
    arrays = {k: v for k, v in d.items() if k not in ("recipe", "engine_cp")}
    directory = os.path.dirname(out)
    if directory:
        os.makedirs(directory, exist_ok=True)
    try:
        with open(out, "wb") as f:
            np.savez_compressed(f, **arrays, engine_cp=scores, recipe=np.array(recipe))
    except OSError as e:
        raise TuneError(f"cannot write {out}: {e.strerror}") from None
    return {"out": out, "positions": len(fens), "engine": name, "depth": depth,
            "seconds": round(time.perf_counter() - t0, 1), "recipe": recipe}


def targets(d, kind, mask):
    """What ``fit`` fits the evaluation to, per position, and K_e (None for the results):
    ``result``, the game's result; ``engine``, the engine's score as an expected result with the
    K_e fitted to the results of the positions of ``mask``; ``mix:L``, L * result + (1 - L) *
    the engine's."""
    results = d["result"].astype(np.float64)
    if kind == "result":
        return results, None
    if "engine_cp" not in d:
        raise TuneError(f"--target {kind} needs the engine's scores: label the data set first "
                        "(`chessaccel tune label`)")
    engine = d["engine_cp"].astype(np.float64)
    k_engine = fit_k(engine[mask], results[mask])
    expected = _sigmoid(k_engine * engine / 400.0)
    if kind == "engine":
        return expected, k_engine
    share = float(kind.partition(":")[2])
    return share * results + (1 - share) * expected, k_engine


# --- the evaluation as matrix products ---------------------------------------------------------

#: The piece types of the terms evaluation's table, in the order of square_features' columns.
_SQUARE_TYPES = tuple(sorted(SQUARE_PIECES.values()))
_FEN_TYPES = {c: _SQUARE_TYPES[i] for i, c in enumerate("pnbrqk")}


def square_features(d):
    """n x 384 (int16): for each position of ``d``, how often each (piece type, square) entry
    of the material + piece-square table is added from white's view: +1 for a white piece on
    the square, -1 for a black piece on its mirrored square. Column ``i * 64 + s`` is the i-th
    type of _SQUARE_TYPES on square s. Read from the positions' FENs once, then kept in ``d``."""
    if "_squares" in d:
        return d["_squares"]
    out = np.zeros((len(d["fen"]), 64 * len(_SQUARE_TYPES)), dtype=np.int16)
    column = {t: i * 64 for i, t in enumerate(_SQUARE_TYPES)}
    for row, fen in enumerate(d["fen"]):
        rank, file = 7, 0
        for c in str(fen).split(" ", 1)[0]:
            if c == "/":
                rank, file = rank - 1, 0
            elif c.isdigit():
                file += int(c)
            else:
                square = rank * 8 + file
                if c.isupper():
                    out[row, column[_FEN_TYPES[c.lower()]] + square] += 1
                else:
                    out[row, column[_FEN_TYPES[c]] + (square ^ 56)] -= 1
                file += 1
    d["_squares"] = out
    return out


def _square_vectors(squares):
    """(mg, eg): the 384 values of the tables ``squares`` ((mg, eg), each {PieceType value: 64
    values}) in square_features' column order."""
    return tuple(np.array([v for t in _SQUARE_TYPES for v in table[t]], dtype=np.int64)
                 for table in squares)


def _square_tables(mg, eg):
    """The inverse of _square_vectors."""
    return tuple({t: tuple(int(v) for v in vector[i * 64:(i + 1) * 64])
                  for i, t in enumerate(_SQUARE_TYPES)} for vector in (mg, eg))


def exact_eval(d, mg, eg, squares=None):
    """The terms evaluation of every position of ``d`` with the integer weight vectors ``mg``
    and ``eg`` (WEIGHT_NAMES order) and the material + piece-square tables ``squares`` ((mg,
    eg) tables; default the package's terms tables), from white's view: exactly the model's
    evaluate_terms (negated with black to move), since the sums are integers and the taper and
    clamp are the model's."""
    if squares is None:
        squares = square_tables("terms")
    square_mg, square_eg = _square_vectors(squares)
    counts = d["counts"].astype(np.int64)
    table = square_features(d).astype(np.int64)
    mg_sum = table @ square_mg + counts @ np.asarray(mg, dtype=np.int64)
    eg_sum = table @ square_eg + counts @ np.asarray(eg, dtype=np.int64)
    sign = np.where(d["side"] == 0, 1, -1).astype(np.int64)
    w = np.asarray(PHASE_WEIGHT, dtype=np.int64)[d["phase"].astype(np.int64)]
    score = (sign * mg_sum * w + sign * eg_sum * ((1 << TAPER_SHIFT) - w)) >> TAPER_SHIFT
    return sign * np.clip(score, -EVAL_MAX, EVAL_MAX)


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-np.clip(x, -500, 500)))


def mse(evals, results, k):
    """Mean squared error of the logistic of ``evals`` against ``results``."""
    return float(np.mean((_sigmoid(k * evals / 400.0) - results) ** 2))


def fit_k(evals, results):
    """The K that minimises mse(evals, results, K) (golden-section search on 0.01..10)."""
    lo, hi = 0.01, 10.0
    g = (5 ** 0.5 - 1) / 2
    a, b = hi - g * (hi - lo), lo + g * (hi - lo)
    fa, fb = mse(evals, results, a), mse(evals, results, b)
    for _ in range(80):
        if fa < fb:
            hi, b, fb = b, a, fa
            a = hi - g * (hi - lo)
            fa = mse(evals, results, a)
        else:
            lo, a, fa = a, b, fb
            b = lo + g * (hi - lo)
            fb = mse(evals, results, b)
    return (lo + hi) / 2


class Start:
    """What a fit starts from and may change: the weight vectors ``mg`` and ``eg`` (WEIGHT_NAMES
    order), the material + piece-square tables ``squares`` ((mg, eg) tables), and whether the
    tables are fitted too (``fit_squares``, pulled towards the start by their own prior,
    ``squares_sd`` centipawns). theta, the fitted vector, is (mg weights, [mg table], eg weights,
    [eg table]), the tables' 384 entries each in square_features' order."""

    def __init__(self, mg, eg, squares, fit_squares=False, squares_sd=0.0, only=None):
        self.mg, self.eg, self.squares = tuple(mg), tuple(eg), squares
        self.fit_squares, self.squares_sd = fit_squares, squares_sd
        self.table_mg, self.table_eg = _square_vectors(squares)
        # the weights the fit may move (WEIGHT_NAMES indices; None: all): the others keep their
        # starting values, as a new term's weights are fitted beside tuned ones
        self.only = None if only is None else frozenset(only)

    def free(self):
        """Which entries of theta the fit moves (the tables' always, where they are fitted)."""
        n, tables = len(WEIGHT_NAMES), len(self.table_mg) if self.fit_squares else 0
        weights = np.array([self.only is None or i in self.only for i in range(n)])
        half = np.concatenate([weights, np.ones(tables, dtype=bool)])
        return np.concatenate([half, half])

    def theta(self):
        if self.fit_squares:
            return np.concatenate([self.mg, self.table_mg, self.eg, self.table_eg]).astype(np.float64)
        return np.concatenate([self.mg, self.eg]).astype(np.float64)

    def split(self, theta):
        """(mg, eg, squares) of a theta, rounded to integers and clamped to their widths."""
        n = len(WEIGHT_NAMES)
        half = len(theta) // 2
        low, high = -(1 << (WEIGHT_BITS - 1)), (1 << (WEIGHT_BITS - 1)) - 1
        mg = np.clip(np.rint(theta[:n]), low, high).astype(int)
        eg = np.clip(np.rint(theta[half:half + n]), low, high).astype(int)
        if not self.fit_squares:
            return [int(v) for v in mg], [int(v) for v in eg], self.squares
        low, high = -(1 << (SQUARE_BITS - 1)), (1 << (SQUARE_BITS - 1)) - 1
        tables = (np.clip(np.rint(theta[n:half]), low, high),
                  np.clip(np.rint(theta[half + n:]), low, high))
        return [int(v) for v in mg], [int(v) for v in eg], _square_tables(*tables)

    def prior_sd(self, weights_sd):
        """Each entry of theta's prior standard deviation."""
        n, tables = len(WEIGHT_NAMES), len(self.table_mg) if self.fit_squares else 0
        half = np.concatenate([np.full(n, float(weights_sd)), np.full(tables, float(self.squares_sd))])
        return np.concatenate([half, half])

    def design(self, d):
        """(offset, D): the evaluation from white's view without the floor is offset + D @ theta."""
        w = (np.asarray(PHASE_WEIGHT, dtype=np.float64)[d["phase"].astype(np.int64)]
             / (1 << TAPER_SHIFT))
        counts = d["counts"].astype(np.float64)
        table = square_features(d).astype(np.float64)
        if self.fit_squares:
            features = np.hstack([counts, table])
            return np.zeros(len(w)), np.hstack([features * w[:, None], features * (1 - w)[:, None]])
        offset = (table @ self.table_mg) * w + (table @ self.table_eg) * (1 - w)
        return offset, np.hstack([counts * w[:, None], counts * (1 - w)[:, None]])

    def bounds(self, keep_signs=True):
        """(low, high) of each entry of theta: a weight's width and, with ``keep_signs``, its
        sign (a bonus stays >= 0 and a penalty <= 0, the sign being that of the starting value,
        or of the other phase's where it is 0 (the king-safety weights' eg), or free where both
        are 0); a table entry's width."""
        low, high = bounds(self.mg, self.eg, keep_signs)
        if not self.fit_squares:
            return low, high
        n, tables = len(WEIGHT_NAMES), len(self.table_mg)
        t_low = np.full(tables, -(1 << (SQUARE_BITS - 1)), dtype=np.float64)
        t_high = np.full(tables, (1 << (SQUARE_BITS - 1)) - 1, dtype=np.float64)
        return (np.concatenate([low[:n], t_low, low[n:], t_low]),
                np.concatenate([high[:n], t_high, high[n:], t_high]))


def bounds(start_mg, start_eg, keep_signs=True):
    """(low, high): the range of each weight of (mg, eg), the weight's width; with
    ``keep_signs`` also its sign: a bonus stays >= 0 and a penalty <= 0, the sign being that of
    the starting value, or of the other phase's where it is 0 (the king-safety weights' eg), or
    free where both are 0."""
    start = np.concatenate([start_mg, start_eg]).astype(np.float64)
    other = np.concatenate([start_eg, start_mg]).astype(np.float64)
    sign = np.where(start != 0, np.sign(start), np.sign(other)) if keep_signs else 0 * start
    low = np.where(sign > 0, 0, -(1 << (WEIGHT_BITS - 1))).astype(np.float64)
    high = np.where(sign < 0, 0, (1 << (WEIGHT_BITS - 1)) - 1).astype(np.float64)
    return low, high


def fit(train, held, start, k, iterations, prior_sd, progress=None, keep_signs=True):
    """Levenberg-Marquardt on the mean squared error of the logistic over ``train`` (a data-set
    dict), from ``start`` (a Start), plus the prior's pull, each step clipped to its bounds.
    Returns (theta, history): the real-valued theta (Start's layout) and per iteration
    (iteration, train loss, held-out loss or None), both losses without the prior and without
    the floor."""
    offset, design = start.design(train)
    y = train["result"].astype(np.float64)
    theta0 = start.theta()
    low, high = start.bounds(keep_signs)
    games = len(np.unique(train["game"]))
    held_design = start.design(held) if held is not None else None

    def loss(theta):
        p = _sigmoid(k * (offset + design @ theta) / 400.0)
        return float(np.mean((p - y) ** 2))

    def held_loss(theta):
        if held_design is None:
            return None
        p = _sigmoid(k * (held_design[0] + held_design[1] @ theta) / 400.0)
        return float(np.mean((p - held["result"]) ** 2))

    base = loss(theta0)
    # the prior: (base loss / games) * sum(((theta - theta0) / sd)^2), one game one observation;
    # an sd of 0 is no prior
    sd = start.prior_sd(prior_sd)
    lam = np.where(sd > 0, base / games / np.where(sd > 0, sd, 1.0) ** 2, 0.0)

    def objective(theta):
        return loss(theta) + float(np.sum(lam * (theta - theta0) ** 2))

    free = start.free()
    theta, damping = theta0.copy(), 1e-3
    history = [(0, base, held_loss(theta))]
    if progress:
        progress(f"iteration 0: train loss {base:.6f}"
                 + (f"  held-out {history[0][2]:.6f}" if held is not None else ""))
    current = objective(theta)
    n = len(y)
    for it in range(1, iterations + 1):
        p = _sigmoid(k * (offset + design @ theta) / 400.0)
        jac = design * (k / 400.0 * p * (1 - p))[:, None]
        grad = 2.0 / n * jac.T @ (p - y) + 2 * lam * (theta - theta0)
        hess = 2.0 / n * jac.T @ jac + np.diag(2 * lam)
        improved, previous = False, current
        grad, hess = grad[free], hess[np.ix_(free, free)]
        for _ in range(20):
            step = np.zeros_like(theta)
            step[free] = np.linalg.solve(hess + damping * np.diag(np.diag(hess) + 1e-12), -grad)
            candidate = np.clip(theta + step, low, high)
            value = objective(candidate)
            if value < current:
                theta, current, damping, improved = candidate, value, damping / 3, True
                break
            damping *= 4
        history.append((it, loss(theta), held_loss(theta)))
        if progress:
            progress(f"iteration {it}: train loss {history[-1][1]:.6f}"
                     + (f"  held-out {history[-1][2]:.6f}" if held is not None else ""))
        if not improved or previous - current < 1e-10:
            break
    return theta, history


def _subset(d, mask):
    n = len(d["game"])
    return {k: (v[mask] if getattr(v, "shape", ()) and v.shape[0] == n else v)
            for k, v in d.items()}


def cross_validate(d, start, folds, iterations, prior_sd, seed, progress=None, keep_signs=True):
    """Split the games into ``folds`` parts; fit K and the weights (and tables, as ``start``
    says) without each part and measure the part's loss before and after (integer values).
    Returns {"folds", "before", "after" (the losses over every position, each scored by the fit
    that did not see it), "folds_worse"}."""
    games = np.random.default_rng(seed).permutation(np.unique(d["game"]))
    before = exact_eval(d, start.mg, start.eg, start.squares).astype(np.float64)
    y = d["result"].astype(np.float64)
    se_before = se_after = 0.0
    worse = 0
    for i, part in enumerate(np.array_split(games, folds), 1):
        mask = np.isin(d["game"], part)
        k = fit_k(before[~mask], y[~mask])
        theta, _ = fit(_subset(d, ~mask), None, start, k, iterations, prior_sd,
                       keep_signs=keep_signs)
        after = exact_eval(d, *start.split(theta)).astype(np.float64)
        b, a = mse(before[mask], y[mask], k), mse(after[mask], y[mask], k)
        se_before += b * mask.sum()
        se_after += a * mask.sum()
        worse += a > b
        if progress:
            progress(f"fold {i}/{folds} ({len(part)} games held out): loss {b:.6f} -> {a:.6f}")
    return {"folds": folds, "before": float(se_before / len(y)),
            "after": float(se_after / len(y)),
            "folds_worse": int(worse)}


# --- fit: the command ---------------------------------------------------------------------------

def _start_weights(path):
    if path is None:
        return load_weights()
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise TuneError(f"cannot read {path}: {e.strerror}") from None
    except UnicodeDecodeError:
        raise TuneError(f"{path} is not a weights file (not text)") from None
    try:
        return load_weights(text)
    except WeightsError as e:
        raise TuneError(f"{path}: {e}") from None


def _held_out(d, holdout, seed):
    """(mask of the held-out games' positions, how many games are held out)."""
    games = np.unique(d["game"])
    held_count = int(round(holdout * len(games)))
    if holdout > 0 and len(games) >= 2:
        held_count = max(1, held_count)
    held_count = min(held_count, len(games) - 1)
    held_games = np.random.default_rng(seed).permutation(games)[:held_count]
    return np.isin(d["game"], held_games), held_count


def _split(d, holdout, seed, held=None):
    """(training set, held-out set or None, held-out games); ``held``: _held_out's answer."""
    mask, held_count = held or _held_out(d, holdout, seed)
    return _subset(d, ~mask), (_subset(d, mask) if held_count else None), held_count


#: Least middlegame gain (cp) of the king's own part of castling (e1 -> g1 or c1) before
#: `tune fit` warns: below it a rook's move alone is worth about as much as castling, and the
#: engine gives the right away (docs/engine.md, "What the games against stockfish show").
CASTLING_KING_GAIN = 10


def castling_check(squares):
    """What the middlegame tables (``squares``: (mg, eg) tables by PieceType value) make of
    castling, white's squares (black's mirror them): for each side, castling's gain, the rook's
    move to its castled square alone, and the king's part (the difference): a table fitted to
    games in which the rooks of uncastled kings stand in their corners learns the corner as bad
    (a confound: the king on e1 with or without its rights is one feature to the tables), and
    then a rook's move alone is worth nearly what castling is. ``warn``: a king's part below
    CASTLING_KING_GAIN."""
    king, rook = squares[0][SQUARE_PIECES["king"]], squares[0][SQUARE_PIECES["rook"]]
    out = {}
    for side, (k_to, r_from, r_to) in (("king side", (6, 7, 5)), ("queen side", (2, 0, 3))):
        king_part, rook_part = king[k_to] - king[4], rook[r_to] - rook[r_from]
        out[side] = {"castling": int(king_part + rook_part), "rook_alone": int(rook_part),
                     "king_part": int(king_part), "warn": bool(king_part < CASTLING_KING_GAIN)}
    return out


def _only(text):
    """The WEIGHT_NAMES indices of ``--only`` (comma-separated names; a name without its
    ``.piece`` or ``[rank]`` takes every such weight), None for all; TuneError naming an unknown
    one."""
    if not text:
        return None
    out = set()
    for name in (n.strip() for n in text.split(",") if n.strip()):
        found = [i for i, w in enumerate(WEIGHT_NAMES)
                 if w == name or w.startswith(name + ".") or w.startswith(name + "[")]
        if not found:
            raise TuneError(f"--only: no weight {name!r} (the weights: {', '.join(WEIGHT_NAMES)})")
        out.update(found)
    return sorted(out)


def run_fit(args, emit, command, progress=None):
    """``tune fit`` of the parsed ``args``: writes the weights, the plot and the summary."""
    start = _start_weights(args.start)
    d = load_data(args.data)
    centres = tuple(int(c) for c in d["centres"])
    if centres != tuple(start["mobility_centre"][t] for t in sorted(start["mobility_centre"])):
        raise TuneError(f"the starting weights' mobility centres {list(centres)} differ from "
                        f"the data set's; remake the data set or start from other weights")
    if args.folds > len(np.unique(d["game"])):
        raise TuneError(f"{args.folds} folds need as many games; the data set holds "
                        f"{len(np.unique(d['game']))}")
    target = getattr(args, "target", "result")
    split = _held_out(d, args.holdout, args.seed)
    d["result"], k_engine = targets(d, target, ~split[0])     # K_e from the training games
    train, held, held_games = _split(d, args.holdout, args.seed, split)
    start_mg, start_eg = weight_vectors(start)
    squares_sd = getattr(args, "squares_sd", None)
    only = _only(getattr(args, "only", None))
    begin = Start(start_mg, start_eg, (start["square_mg"], start["square_eg"]),
                  fit_squares=squares_sd is not None, squares_sd=squares_sd or 0.0, only=only)
    before = exact_eval(d, start_mg, start_eg, begin.squares)
    train_mask = np.isin(d["game"], np.unique(train["game"]))

    def own_k(evals):
        """The K that fits ``evals`` best on the training games."""
        return fit_k(evals[train_mask].astype(np.float64), train["result"].astype(np.float64))
    k = own_k(before)
    if progress:
        progress(f"{len(d['result'])} positions of {len(np.unique(d['game']))} games "
                 f"({held_games} games held out); K = {k:.4f}")
    theta, history = fit(train, held, begin, k, args.iterations, args.prior_sd,
                         progress, keep_signs=not args.free_signs)
    mg, eg, squares = begin.split(theta)
    after = exact_eval(d, mg, eg, squares)

    def losses(evals, scale):
        out = {"train": mse(evals[train_mask], d["result"][train_mask], scale)}
        out["held_out"] = (mse(evals[~train_mask], d["result"][~train_mask], scale)
                           if held is not None else None)
        return out
    loss_before, loss_after = losses(before, k), losses(after, k)
    # The fit keeps the K of its start, so its losses compare it with its start only; fits
    # from different starts compare at each one's own K, fitted again on the same training
    # games (what a later fit from the written file starts from).
    k_after = own_k(after)
    loss_own_k = losses(after, k_after)
    if args.folds:
        folds = cross_validate(d, begin, args.folds, args.iterations,
                               args.prior_sd, args.seed, progress,
                               keep_signs=not args.free_signs)
    else:
        folds = None
    if target == "result":
        fitted_to = "the games' results"
    else:
        engine_part = f"the engine's scores as expected results (K_e = {k_engine:.4f})"
        fitted_to = (engine_part if target == "engine" else
                     f"{target.partition(':')[2]} times the games' results plus the rest times "
                     + engine_part)
    about = (f"Tuned from weights version {start['version']} by `{command}` (Texel's method, "
             f"fitted to {fitted_to}: K = {k:.4f}; loss on the training games "
             f"{loss_before['train']:.6f} -> "
             f"{loss_after['train']:.6f}"
             + (f", on the {held_games} held-out games {loss_before['held_out']:.6f} -> "
                f"{loss_after['held_out']:.6f}" if held is not None else "")
             + (f"; the material + piece-square tables fitted too (prior {squares_sd} cp)"
                if squares_sd is not None else "")
             + f"), over the data set made by {str(d['recipe'])}. Each entry is [mg, eg] in "
             "centipawns for one occurrence of the feature, from the side that has it; "
             "`squares`, where present, are the terms evaluation's material + piece-square "
             "values of a white piece on each square a1..h8 "
             "(docs/semantics.md section 6); read only through chessaccel.contract.evalweights.")
    own_squares = squares != tuple(dict(t) for t in square_tables("pst"))
    raw = raw_weights(mg, eg, start["version"] + 1, about, start["mobility_centre"],
                      squares=squares if own_squares else None)
    text = weights_json(raw)
    try:
        load_weights(text)
    except WeightsError as e:
        raise TuneError(f"the fitted weights do not fit the hardware: {e}") from None
    changes = sorted(({"weight": name, "phase": phase, "before": int(b), "after": int(a)}
                      for phase, bv, av in (("mg", start_mg, mg), ("eg", start_eg, eg))
                      for name, b, a in zip(WEIGHT_NAMES, bv, av) if a != b),
                     key=lambda c: -abs(c["after"] - c["before"]))
    piece_names = {t: name for name, t in SQUARE_PIECES.items()}
    square_changes = sorted(
        ({"weight": f"squares.{piece_names[t]}[{'abcdefgh'[sq % 8]}{sq // 8 + 1}]",
          "phase": phase, "before": int(old[t][sq]), "after": int(new[t][sq])}
         for phase, old, new in (("mg", begin.squares[0], squares[0]),
                                 ("eg", begin.squares[1], squares[1]))
         for t in _SQUARE_TYPES for sq in range(64) if old[t][sq] != new[t][sq]),
        key=lambda c: -abs(c["after"] - c["before"]))
    base = os.path.splitext(args.out)[0]
    plot = args.plot or base + ".png"
    summary_path = args.summary or base + "-summary.json"
    summary = {"command": command, "data": args.data, "recipe": str(d["recipe"]),
               "positions": int(len(d["result"])), "games": int(len(np.unique(d["game"]))),
               "train_positions": int(train_mask.sum()),
               "held_out_positions": int((~train_mask).sum()), "held_out_games": held_games,
               "seed": args.seed, "prior_sd": args.prior_sd, "squares_sd": squares_sd,
               "keep_signs": not args.free_signs,
               "only": [WEIGHT_NAMES[i] for i in only] if only is not None else None,
               "target": target, "K_engine": k_engine, "K": k,
               "loss_before": loss_before, "loss_after": loss_after,
               "K_after": k_after, "loss_after_own_k": loss_own_k, "cross_validation": folds,
               "iterations": len(history) - 1,
               "history": [{"iteration": i, "train": t, "held_out": h} for i, t, h in history],
               "version": raw["version"], "weights": args.out, "plot": plot,
               "changes": changes, "square_changes": square_changes,
               "castling": castling_check(squares)}
    for path in (args.out, plot, summary_path):
        directory = os.path.dirname(path)
        if directory:
            os.makedirs(directory, exist_ok=True)
    try:
        with open(args.out, "w") as f:
            f.write(text)
        _plot(summary, d, before, after, k, plot)
        with open(summary_path, "w") as f:
            json.dump(summary, f, indent=2)
    except OSError as e:
        raise TuneError(f"cannot write {e.filename}: {e.strerror}") from None
    held_text = (f"  held-out {loss_before['held_out']:.6f} -> {loss_after['held_out']:.6f}"
                 if held is not None else "")
    lines = [f"K = {k:.4f}; loss (integer weights, the model's evaluation): train "
             f"{loss_before['train']:.6f} -> {loss_after['train']:.6f}{held_text}",
             f"at the fitted weights' own K = {k_after:.4f}: train {loss_own_k['train']:.6f}"
             + (f"  held-out {loss_own_k['held_out']:.6f}" if held is not None else "")
             + " (compare fits from different starts by these)",
             *([f"cross-validated over {folds['folds']} folds of the games: loss "
                f"{folds['before']:.6f} -> {folds['after']:.6f} ({folds['folds_worse']} folds "
                "worse)"] if folds else []),
             "largest changes: " + (", ".join(f"{c['weight']} {c['phase']} {c['before']} -> "
                                              f"{c['after']}" for c in changes[:8]) or "none"),
             *([f"{len(square_changes)} table entries changed, the largest: "
                + ", ".join(f"{c['weight']} {c['phase']} {c['before']} -> {c['after']}"
                            for c in square_changes[:6])] if squares_sd is not None else []),
             *[f"castling {side} gains {c['castling']} cp in the middlegame, the rook's move "
               f"alone {c['rook_alone']}: the king's part {c['king_part']}"
               + (f" (below {CASTLING_KING_GAIN}: a rook's move alone is worth about as much, "
                  "and the engine will give the right away; docs/engine.md)" if c["warn"] else "")
               for side, c in summary["castling"].items()],
             f"wrote {args.out} (version {raw['version']}), {plot} and {summary_path}"]
    emit(summary, lines)
    return 0


def _plot(summary, d, before, after, k, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.5))
    hist = summary["history"]
    left.plot([h["iteration"] for h in hist], [h["train"] for h in hist], "o-", ms=3,
              label="training games")
    if hist and hist[0]["held_out"] is not None:
        left.plot([h["iteration"] for h in hist], [h["held_out"] for h in hist], "s-", ms=3,
                  label=f"held-out games ({summary['held_out_games']})")
    left.set_xlabel("iteration")
    left.set_ylabel("mean squared error (no rounding)")
    left.set_title("loss per iteration")
    left.legend()
    edges = np.arange(-1000, 1001, 100)
    centres = (edges[:-1] + edges[1:]) / 2
    result = d["result"].astype(np.float64)
    for evals, name, marker in ((before, f"version {summary['version'] - 1}", "o"),
                                (after, f"version {summary['version']} (tuned)", "s")):
        index = np.digitize(np.clip(evals, edges[0], edges[-1] - 1), edges) - 1
        means = [result[index == i].mean() if (index == i).sum() >= 5 else np.nan
                 for i in range(len(centres))]
        right.plot(centres, means, marker, ls="", label=f"{name}: mean result")
    x = np.linspace(edges[0], edges[-1], 200)
    right.plot(x, _sigmoid(k * x / 400.0), "k-", lw=1, label=f"logistic, K = {k:.3f}")
    right.set_xlabel("evaluation, centipawns from white's view (bucket of 100)")
    right.set_ylabel("white's score")
    right.set_title("predicted and actual results, all games")
    right.legend(fontsize=8)
    fig.suptitle(f"chessaccel tune: {summary['positions']} positions of {summary['games']} games")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
