"""``chessaccel tune`` (host/tunecli.py, host/tune.py): the data set of quiet positions and their
results, the fit that lowers the training loss (recomputed here from the written weights with
the model's own evaluation), the files it writes, and bad input as one line.

The games are tests/data/tune-games.pgn: the first 12 games of the project's self-play record
docs/benchmarks/selective-2026-11-28/selective-v2-local.pgn (tests/data/SOURCES.md).
"""

import json
import os
import shutil

import chess
import chess.pgn
import numpy as np
import pytest

from chessaccel.contract import evalweights
from chessaccel.contract.defs import INF
from chessaccel.host.cli import main
from chessaccel.host.tune import castling_check, exact_eval, load_data
from chessaccel.model import evalterms
from chessaccel.model.evalterms import evaluate_terms, feature_counts
from chessaccel.model.evaluate import evaluate
from chessaccel.model.position import board_from_chess
from chessaccel.model.search import search

GAMES = os.path.join(os.path.dirname(__file__), "data", "tune-games.pgn")
STOCKFISH = shutil.which("stockfish") or (
    "/usr/games/stockfish" if shutil.which("/usr/games/stockfish") else None)


def run(capsys, *argv):
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """The data set of tune-games.pgn (made once for the module) and the command's JSON."""
    path = tmp_path_factory.mktemp("tune") / "games.npz"
    status = main(["tune", "data", GAMES, "--out", str(path), "--json"])
    assert status == 0
    return path


def _pgn_games():
    with open(GAMES) as f:
        games = []
        while (game := chess.pgn.read_game(f)) is not None:
            games.append(game)
    return games


def test_data_holds_quiet_positions_after_the_opening_with_their_results(data):
    d = load_data(data)
    games = _pgn_games()
    results = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}
    assert len(d["result"]) > 300 and len(np.unique(d["game"])) == len(games) == 12
    fens_of_game = {}
    for i, game in enumerate(games):
        cb, fens = game.board(), []
        for ply, move in enumerate(game.mainline_moves(), 1):
            cb.push(move)
            fens.append((ply, cb.fen()))
        fens_of_game[i] = dict((fen, ply) for ply, fen in reversed(fens))
    for fen, game, result, side in zip(d["fen"], d["game"], d["result"], d["side"]):
        fen = str(fen)
        ply = fens_of_game[int(game)].get(fen)
        assert ply is not None and ply > 8, f"{fen} is not after the opening of game {game}"
        assert result == results[games[int(game)].headers["Result"]]
        cb = chess.Board(fen)
        assert not cb.is_check() and not any(m.promotion for m in cb.legal_moves)
        assert side == (0 if cb.turn == chess.WHITE else 1)
    # a position is kept once per game
    keys = {(int(g), " ".join(str(f).split()[:4])) for f, g in zip(d["fen"], d["game"])}
    assert len(keys) == len(d["fen"])


def test_data_positions_are_quiet_and_counted_as_the_model_counts(data):
    """Every tenth position: the model's quiescence (material + PST) stands pat, and the stored
    counts, material and phase give the model's terms evaluation exactly."""
    d = load_data(data)
    sample = range(0, len(d["fen"]), 10)
    evals = exact_eval(d, *evalweights.weight_vectors())
    for i in sample:
        board = board_from_chess(chess.Board(str(d["fen"][i])))
        assert search(board, 0, -INF, INF).score == evaluate(board)
        assert tuple(d["counts"][i]) == feature_counts(board)
        sign = -1 if board.side else 1
        assert evals[i] == sign * evaluate_terms(board)


def test_data_shows_progress_and_says_what_it_wrote(capsys, tmp_path):
    out = tmp_path / "sub" / "d.npz"
    status, stdout, err = run(capsys, "tune", "data", GAMES, "--out", str(out), "--skip-plies",
                              "20")
    assert status == 0 and out.exists()
    assert "game 10/12:" in err and "game 12/12:" in err
    assert stdout.startswith(f"wrote {out}: ") and "positions of 12 games" in stdout
    assert "first 20 plies" in str(load_data(out)["recipe"])


def _use_weights(monkeypatch, weights):
    for key in ("passed_pawn_mg", "passed_pawn_eg", "king_zone_attack", "mobility_per_square",
                *(n for n in evalweights.WEIGHT_NAMES if "[" not in n and "." not in n)):
        monkeypatch.setattr(evalterms, key.upper(), weights[key])
    monkeypatch.setattr(evalterms, "_SQUARES", (weights["square_mg"], weights["square_eg"]))


def _loss(d, k):
    """The mean squared error of the logistic over the data set's FENs, by the model."""
    total = 0.0
    for fen, result in zip(d["fen"], d["result"]):
        board = board_from_chess(chess.Board(str(fen)))
        white = evaluate_terms(board) * (-1 if board.side else 1)
        total += (1 / (1 + np.exp(-k * white / 400)) - result) ** 2
    return total / len(d["fen"])


def test_fit_lowers_the_training_loss_as_the_model_evaluates(capsys, data, tmp_path,
                                                              monkeypatch):
    """A fit with no games held out: the summary's losses before and after are the model's
    evaluate_terms with the old and the written weights (recomputed here position by position),
    and the loss after is lower; the written file is a weights file of the next version."""
    out = tmp_path / "w.json"
    status, stdout, err = run(capsys, "tune", "fit", str(data), "--out", str(out),
                              "--holdout", "0", "--iterations", "8", "--json")
    assert status == 0
    summary = json.loads(stdout)
    assert "K = " in err and "iteration 1: train loss" in err
    assert summary["held_out_games"] == 0 and summary["loss_after"]["held_out"] is None
    text = out.read_text()
    new = evalweights.load_weights(text)
    assert new["version"] == evalweights.WEIGHTS_VERSION + 1
    assert "chessaccel tune fit" in json.loads(text)["about"]
    assert new["mobility_centre"] == evalweights.MOBILITY_CENTRE
    assert new["passed_pawn_mg"][0] == new["passed_pawn_eg"][7] == 0
    d = load_data(data)
    k = summary["K"]
    before = _loss(d, k)
    assert summary["loss_before"]["train"] == pytest.approx(before, abs=1e-9)
    _use_weights(monkeypatch, new)
    after = _loss(d, k)
    assert summary["loss_after"]["train"] == pytest.approx(after, abs=1e-9)
    assert after < before - 1e-4, (before, after)
    assert evalweights.weight_vectors(new) != evalweights.weight_vectors()
    # signs kept: a bonus stays >= 0, a penalty <= 0 (king safety's eg: its mg's sign)
    for old_pair, new_pair in zip(zip(*evalweights.weight_vectors()),
                                  zip(*evalweights.weight_vectors(new))):
        for old, other, value in ((old_pair[0], old_pair[1], new_pair[0]),
                                  (old_pair[1], old_pair[0], new_pair[1])):
            sign = (old > 0) - (old < 0) or (other > 0) - (other < 0)
            assert value * sign >= 0, (old_pair, new_pair)
    assert summary["changes"] and all(c["before"] != c["after"] for c in summary["changes"])
    # the plot and the summary beside the weights
    assert (tmp_path / "w.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert json.loads((tmp_path / "w-summary.json").read_text())["K"] == k


def test_fit_only_moves_the_named_weights(capsys, data, tmp_path):
    """`--only`: the named weights (a family by its stem: mobility is every piece's) are fitted,
    every other weight is written as it started, and the summary names what was fitted."""
    out = tmp_path / "w.json"
    status, stdout, _ = run(capsys, "tune", "fit", str(data), "--out", str(out), "--holdout",
                            "0", "--iterations", "8", "--only", "threat_by_pawn,mobility",
                            "--free-signs", "--json")
    assert status == 0
    summary = json.loads(stdout)
    fitted = {"threat_by_pawn", "mobility.knight", "mobility.bishop", "mobility.rook",
              "mobility.queen"}
    assert set(summary["only"]) == fitted
    new = evalweights.load_weights(out.read_text())
    moved = set()
    for name, old, now in zip(evalweights.WEIGHT_NAMES, zip(*evalweights.weight_vectors()),
                              zip(*evalweights.weight_vectors(new))):
        if old != now:
            moved.add(name)
    assert moved and moved <= fitted, moved
    assert summary["loss_after"]["train"] < summary["loss_before"]["train"]


def test_fit_with_squares_fits_the_tables_as_the_model_evaluates(capsys, data, tmp_path,
                                                                 monkeypatch):
    """``--squares``: the material + piece-square tables are fitted with the weights; the file
    holds them as ``squares``, the model's terms evaluation with the written file gives the
    summary's loss (recomputed here), lower than before; a later fit from that file without
    ``--squares`` keeps its tables."""
    out = tmp_path / "sq.json"
    status, stdout, err = run(capsys, "tune", "fit", str(data), "--out", str(out), "--holdout",
                              "0", "--iterations", "4", "--squares", "20", "--json")
    assert status == 0
    summary = json.loads(stdout)
    assert summary["squares_sd"] == 20 and summary["square_changes"]
    raw = json.loads(out.read_text())
    assert set(raw["squares"]) == set(evalweights.SQUARE_PIECES)
    new = evalweights.load_weights(out.read_text())
    pst = evalweights.square_tables("pst")
    assert (new["square_mg"], new["square_eg"]) != (dict(pst[0]), dict(pst[1]))
    for change in summary["square_changes"][:20]:
        name, square = change["weight"][len("squares."):-1].split("[")
        t = evalweights.SQUARE_PIECES[name]
        index = "abcdefgh".index(square[0]) + 8 * (int(square[1]) - 1)
        assert new[f"square_{change['phase']}"][t][index] == change["after"]
    d = load_data(data)
    k = summary["K"]
    assert summary["loss_before"]["train"] == pytest.approx(_loss(d, k), abs=1e-9)
    _use_weights(monkeypatch, new)
    after = _loss(d, k)
    assert summary["loss_after"]["train"] == pytest.approx(after, abs=1e-9)
    assert after < summary["loss_before"]["train"] - 1e-4
    again = tmp_path / "again.json"
    status, _, _ = run(capsys, "tune", "fit", str(data), "--out", str(again), "--holdout", "0",
                       "--iterations", "2", "--start", str(out))
    assert status == 0
    assert json.loads(again.read_text())["squares"] == raw["squares"]
    # the fit reports what its tables make of castling (the summary's table, one line each)
    assert summary["castling"] == castling_check((new["square_mg"], new["square_eg"]))


def test_the_castling_check_finds_a_rook_move_worth_as_much_as_castling(capsys, data, tmp_path):
    """pst's tables: the king's shelter makes castling worth 30 cp more than the rook's move.
    Tables in which the rook's corner is the bad square (weights version 2's, fitted to games
    whose uncastled kings kept their rooks there) make Rh1-f1 alone worth nearly what castling
    is: the check warns."""
    pst = castling_check(evalweights.square_tables("pst"))
    assert pst["king side"] == {"castling": 30, "rook_alone": 0, "king_part": 30, "warn": False}
    assert pst["queen side"]["king_part"] == 10 and not pst["queen side"]["warn"]
    mg, eg = (dict(t) for t in evalweights.square_tables("pst"))
    king, rook = list(mg[evalweights.SQUARE_PIECES["king"]]), list(mg[evalweights.SQUARE_PIECES["rook"]])
    king[4], king[6], rook[7], rook[5] = 16, 17, 461, 506      # e1, g1, h1, f1 of version 2
    mg[evalweights.SQUARE_PIECES["king"]], mg[evalweights.SQUARE_PIECES["rook"]] = king, rook
    confounded = castling_check((mg, eg))["king side"]
    assert confounded == {"castling": 46, "rook_alone": 45, "king_part": 1, "warn": True}
    # tune fit says it, one line a side, of its start's tables at 0 iterations
    status, stdout, _ = run(capsys, "tune", "fit", str(data), "--out", str(tmp_path / "w.json"),
                            "--holdout", "0", "--iterations", "0")
    assert status == 0
    start = evalweights.load_weights()
    expected = castling_check((start["square_mg"], start["square_eg"]))
    lines = [line for line in stdout.splitlines() if line.startswith("castling")]
    assert len(lines) == 2
    for line, (side, c) in zip(lines, expected.items()):
        assert line.startswith(f"castling {side} gains {c['castling']} cp in the middlegame, the "
                               f"rook's move alone {c['rook_alone']}: the king's part "
                               f"{c['king_part']}")
        assert ("the engine will give the right away" in line) == c["warn"]


def test_fit_holds_out_whole_games_and_cross_validates(capsys, data, tmp_path):
    out = tmp_path / "w.json"
    status, stdout, err = run(capsys, "tune", "fit", str(data), "--out", str(out),
                              "--holdout", "0.25", "--iterations", "3", "--folds", "3",
                              "--plot", str(tmp_path / "p.png"), "--summary",
                              str(tmp_path / "s.json"))
    assert status == 0
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["held_out_games"] == 3 and summary["games"] == 12
    assert summary["held_out_positions"] + summary["train_positions"] == summary["positions"]
    assert summary["loss_after"]["held_out"] is not None
    assert summary["cross_validation"]["folds"] == 3 and "fold 3/3" in err
    assert (tmp_path / "p.png").exists() and "held-out" in stdout and "cross-validated" in stdout
    # the losses at the fitted weights' own K: what a fit from the written file starts from
    own = summary["loss_after_own_k"]
    assert own["train"] <= summary["loss_after"]["train"] + 1e-9
    assert f"own K = {summary['K_after']:.4f}" in stdout
    status, _, _ = run(capsys, "tune", "fit", str(data), "--out", str(tmp_path / "again.json"),
                       "--holdout", "0.25", "--iterations", "0", "--start", str(out),
                       "--summary", str(tmp_path / "again.json.summary"))
    assert status == 0
    again = json.loads((tmp_path / "again.json.summary").read_text())
    assert again["K"] == pytest.approx(summary["K_after"], abs=1e-9)
    assert again["loss_before"]["train"] == pytest.approx(own["train"], abs=1e-9)
    assert again["loss_before"]["held_out"] == pytest.approx(own["held_out"], abs=1e-9)


# --- bad input: one line, status 2, no traceback ------------------------------------------------

def _write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def _bad(capsys, argv, *words):
    """The command fails with status 2 and one error line naming ``words`` (after progress
    lines, if any), nothing on stdout."""
    status, out, err = run(capsys, *argv)
    assert status == 2 and out == "", (status, out, err)
    lines = err.strip().splitlines()    # progress lines may come before the error
    assert lines[-1].startswith("chessaccel: error: ") and "Traceback" not in err, err
    assert sum("error" in line for line in lines) == 1, err
    for word in words:
        assert word in lines[-1], (word, lines[-1])


def test_bad_pgn_input_is_one_line(capsys, tmp_path):
    out = str(tmp_path / "d.npz")
    _bad(capsys, ["tune", "data", str(tmp_path / "none.pgn"), "--out", out], "cannot read",
         "none.pgn")
    illegal = _write(tmp_path, "illegal.pgn", '[Result "1-0"]\n\n1. e4 e5 2. Ke3 1-0\n')
    _bad(capsys, ["tune", "data", illegal, "--out", out], "illegal.pgn game 1", "Ke3")
    _bad(capsys, ["tune", "data", _write(tmp_path, "text.pgn", "hello, world\n"), "--out", out],
         "text.pgn holds no game")
    unfinished = _write(tmp_path, "unfinished.pgn", '[Result "*"]\n\n1. e4 e5 2. Nf3 *\n')
    _bad(capsys, ["tune", "data", unfinished, "--out", out], "no finished game")
    short = _write(tmp_path, "short.pgn",
                   '[Result "0-1"]\n\n1. f3 e5 2. g4 Qh4# 0-1\n')
    _bad(capsys, ["tune", "data", short, "--out", out], "no quiet position")
    _bad(capsys, ["tune", "data", GAMES, "--out", out, "--skip-plies", "-1"],
         "--skip-plies", ">= 0")
    _bad(capsys, ["tune", "data", "--out", out], "PGN")
    assert not os.path.exists(out)


def test_bad_data_and_weights_input_is_one_line(capsys, tmp_path, data):
    w = str(tmp_path / "w.json")
    _bad(capsys, ["tune", "fit", str(tmp_path / "none.npz"), "--out", w], "cannot read")
    _bad(capsys, ["tune", "fit", _write(tmp_path, "junk.npz", "junk"), "--out", w],
         "junk.npz is not a data set")
    other = tmp_path / "other.npz"
    np.savez(other, x=np.zeros(3))
    _bad(capsys, ["tune", "fit", str(other), "--out", w], "is not a data set", "'format'")
    d = dict(load_data(data))
    empty = tmp_path / "empty.npz"
    np.savez(empty, **{k: (v[:0] if v.shape and v.shape[0] == len(d["fen"]) else v)
                       for k, v in d.items()})
    _bad(capsys, ["tune", "fit", str(empty), "--out", w], "holds no position")
    renamed = tmp_path / "renamed.npz"
    np.savez(renamed, **dict(d, names=d["names"][::-1]))
    _bad(capsys, ["tune", "fit", str(renamed), "--out", w], "other weights", "remake it")
    bad_weights = _write(tmp_path, "bad.json", json.dumps(dict(
        json.loads(evalweights.weights_json(evalweights.raw_weights(
            *evalweights.weight_vectors(), 1, ""))), tempo=[300, 0])))
    _bad(capsys, ["tune", "fit", str(data), "--out", w, "--start", bad_weights],
         "bad.json", "does not fit")
    _bad(capsys, ["tune", "fit", str(data), "--out", w, "--start", str(tmp_path / "no.json")],
         "cannot read")
    raw = evalweights.raw_weights(*evalweights.weight_vectors(), 1, "",
                                  {t: c + 1 for t, c in evalweights.MOBILITY_CENTRE.items()})
    moved = _write(tmp_path, "moved.json", evalweights.weights_json(raw))
    _bad(capsys, ["tune", "fit", str(data), "--out", w, "--start", moved], "mobility centres")
    short = json.loads(evalweights.weights_json(evalweights.raw_weights(
        *evalweights.weight_vectors(), 1, "", squares=evalweights.square_tables("pst"))))
    short["squares"]["knight"]["mg"] = short["squares"]["knight"]["mg"][:63]
    short_path = _write(tmp_path, "short.json", json.dumps(short))
    _bad(capsys, ["tune", "fit", str(data), "--out", w, "--start", short_path],
         "squares.knight.mg must list 64 integers")
    wide = json.loads(evalweights.weights_json(evalweights.raw_weights(
        *evalweights.weight_vectors(), 1, "", squares=evalweights.square_tables("pst"))))
    wide["squares"]["queen"]["eg"][27] = 5000
    wide_path = _write(tmp_path, "wide.json", json.dumps(wide))
    _bad(capsys, ["tune", "fit", str(data), "--out", w, "--start", wide_path],
         "squares.queen.eg: 5000 does not fit")
    _bad(capsys, ["tune", "fit", str(data), "--out", w, "--squares", "-3"], "--squares")
    _bad(capsys, ["tune", "fit", str(data), "--out", w, "--holdout", "1"], "held-out share")
    _bad(capsys, ["tune", "fit", str(data), "--out", w, "--prior-sd", "x"], "--prior-sd")
    _bad(capsys, ["tune", "fit", str(data), "--out", w, "--folds", "13"], "13 folds")
    _bad(capsys, ["tune", "fit", str(data), "--out", w, "--only", "tempo,threats"], "--only",
         "'threats'")
    _bad(capsys, ["tune"], "{data,label,fit}")
    assert not os.path.exists(w)


# --- a stronger engine's scores: tune label, fit --target --------------------------------------

@pytest.fixture(scope="module")
def labelled(data, tmp_path_factory):
    """The data set scored by Debian's stockfish at depth 4 (made once for the module)."""
    if STOCKFISH is None:
        pytest.skip("stockfish is not installed")
    path = tmp_path_factory.mktemp("label") / "labelled.npz"
    assert main(["tune", "label", str(data), "--engine", STOCKFISH, "--depth", "4",
                 "--out", str(path)]) == 0
    return path


def test_label_scores_every_position_from_whites_view(labelled, data):
    """Every position keeps its row and gets a score in range; the scores are white's view:
    they follow the material + PST balance from white's view (a score from the side to move's
    view would not, half the positions being black's), and the recipe says who scored them."""
    d, plain = load_data(labelled), load_data(data)
    assert list(d["fen"]) == list(plain["fen"]) and (d["counts"] == plain["counts"]).all()
    cp = d["engine_cp"].astype(np.float64)
    assert cp.shape == d["result"].shape and np.abs(cp).max() <= 2000
    white_material = np.array([evaluate(board_from_chess(chess.Board(str(f)))) *
                               (1 if chess.Board(str(f)).turn == chess.WHITE else -1)
                               for f in d["fen"]], dtype=np.float64)
    assert np.corrcoef(cp, white_material)[0, 1] > 0.5
    assert "Stockfish" in str(d["recipe"]) and "at depth 4" in str(d["recipe"])


def test_fit_to_the_engines_scores(capsys, labelled, tmp_path):
    """--target engine: the targets are the engine's expected results (K_e fitted to the
    games), and the fit lowers the loss against them; mix:L blends them with the results."""
    out = tmp_path / "w.json"
    status, stdout, err = run(capsys, "tune", "fit", str(labelled), "--out", str(out),
                              "--target", "engine", "--holdout", "0", "--iterations", "6",
                              "--json")
    assert status == 0
    summary = json.loads(stdout)
    assert summary["target"] == "engine" and summary["K_engine"] > 0
    assert summary["loss_after"]["train"] < summary["loss_before"]["train"]
    assert "the engine's scores as expected results" in json.loads(out.read_text())["about"]
    status, stdout, _ = run(capsys, "tune", "fit", str(labelled), "--out", str(out),
                            "--target", "mix:0.5", "--holdout", "0", "--iterations", "2",
                            "--json")
    assert status == 0 and json.loads(stdout)["target"] == "mix:0.5"


def test_bad_label_and_target_input_is_one_line(capsys, tmp_path, data):
    w, out = str(tmp_path / "w.json"), str(tmp_path / "l.npz")
    _bad(capsys, ["tune", "fit", str(data), "--out", w, "--target", "engine"],
         "label the data set first")
    _bad(capsys, ["tune", "fit", str(data), "--out", w, "--target", "mix:2"],
         "expected result, engine or mix:L")
    _bad(capsys, ["tune", "label", str(data), "--engine", "/no/such/engine", "--out", out],
         "cannot start the engine")
    _bad(capsys, ["tune", "label", str(data), "--engine", "x", "--out", out, "--depth", "0"],
         "--depth")
    assert not os.path.exists(w) and not os.path.exists(out)
