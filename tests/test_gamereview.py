"""lab/gamereview.py: a match's games scored move by move by a stronger engine, and what each
side did with its castling rights."""

import json
import shutil

import chess
import chess.pgn
import pytest

from chessaccel.lab import gamereview

STOCKFISH = shutil.which("stockfish") or shutil.which("/usr/games/stockfish")


def game_of(moves, white="chessaccel", black="Stockfish"):
    game = chess.pgn.Game()
    game.headers["White"], game.headers["Black"] = white, black
    node, board = game, chess.Board()
    for san in moves.split():
        move = board.parse_san(san)
        node = node.add_variation(move)
        board.push(move)
    game.headers["Result"] = board.result(claim_draw=True)
    return game


def test_castling_fates():
    castled = game_of("e4 e5 Nf3 Nc6 Bc4 Bc5 O-O Nf6")
    assert gamereview.castling_fates(castled) == {chess.WHITE: "castled", chess.BLACK: "kept"}
    # the rook leaves h1 (the king-side right lost, the queen-side one kept), black's king walks
    rook = game_of("Nf3 e5 g3 Ke7 Bg2 Nf6 Rf1 Nc6 Rh1")
    assert gamereview.castling_fates(rook) == {chess.WHITE: "a rook's right lost first",
                                               chess.BLACK: "king moved"}
    # a right taken away by a capture on the rook's square
    taken = game_of("g3 b5 Bg2 b4 Bxa8")
    assert gamereview.castling_fates(taken)[chess.BLACK] == "a rook's right lost first"


def test_bad_input_is_one_line(tmp_path, capsys):
    assert gamereview.main([str(tmp_path / "missing.pgn"), "--no-engine"]) == 2
    assert "cannot read" in capsys.readouterr().err
    pgn = tmp_path / "g.pgn"
    pgn.write_text(str(game_of("e4 e5", white="someone", black="else")) + "\n")
    assert gamereview.main([str(pgn), "--no-engine"]) == 2
    assert "no game of 'chessaccel'" in capsys.readouterr().err
    assert gamereview.main([str(pgn), "--depth", "0"]) == 2
    assert "--depth must be" in capsys.readouterr().err


def test_the_castling_table_alone(tmp_path, capsys):
    pgn = tmp_path / "g.pgn"
    pgn.write_text("\n\n".join(str(g) for g in (
        game_of("e4 e5 Nf3 Nc6 Bc4 Bc5 O-O Nf6"),
        game_of("Nf3 e5 g3 Ke7 Bg2 Nf6 Rf1 Nc6 Rh1", white="Stockfish", black="chessaccel"))))
    out = tmp_path / "r.json"
    assert gamereview.main([str(pgn), "--no-engine", "--out", str(out)]) == 0
    record = json.loads(out.read_text())
    assert record["games"] == 2
    assert record["castling"]["player"] == {"castled": 1, "king moved": 1,
                                            "a rook's right lost first": 0, "kept": 0}
    assert record["castling"]["opponent"] == {"castled": 0, "king moved": 0,
                                              "a rook's right lost first": 1, "kept": 1}
    assert "castling, player: castled 1, king moved 1" in capsys.readouterr().out


@pytest.mark.skipif(STOCKFISH is None, reason="stockfish is not installed")
def test_a_blunder_is_found_and_summed():
    # black's 3... Nf6?? allows mate in one (4. Qxf7#)
    game = game_of("e4 e5 Qh5 Nc6 Bc4 Nf6 Qxf7#", white="Stockfish", black="chessaccel")
    engine = chess.engine.SimpleEngine.popen_uci(STOCKFISH)
    try:
        rows = gamereview.review_game(game, chess.BLACK, engine, 10)
    finally:
        engine.quit()
    assert [r["move"] for r in rows] == ["e7e5", "b8c6", "g8f6"]
    blunder = rows[2]
    assert blunder["after"] == -gamereview.CLAMP and blunder["loss"] >= gamereview.BLUNDER
    assert chess.Move.from_uci(blunder["best"]) in chess.Board(blunder["fen"]).legal_moves
    summary = gamereview.summary([{"game": 1, "moves": rows}])
    assert summary["blunders"] >= 1 and summary["first_losses"][0]["move"] == "g8f6"
    assert summary["phases"][0]["plies"] == "1-20"


@pytest.mark.skipif(STOCKFISH is None, reason="stockfish is not installed")
def test_the_command_reviews_games_with_two_engines(tmp_path, capsys):
    pgn = tmp_path / "g.pgn"
    pgn.write_text("\n\n".join(str(g) for g in (
        game_of("e4 e5 Qh5 Nc6 Bc4 Nf6 Qxf7#", white="Stockfish", black="chessaccel"),
        game_of("f3 e5 g4 Qh4#", white="chessaccel", black="Stockfish"))))
    out = tmp_path / "r.json"
    assert gamereview.main([str(pgn), "--engine", STOCKFISH, "--depth", "8", "--workers", "2",
                            "--out", str(out)]) == 0
    record = json.loads(out.read_text())
    assert [len(g["moves"]) for g in record["reviewed"]] == [3, 2]
    assert record["reviewed"][1]["moves"][1]["move"] == "g2g4"
    assert record["reviewed"][1]["moves"][1]["after"] == -gamereview.CLAMP
    assert record["summary"]["blunders"] >= 2 and (tmp_path / "r.png").exists()
    assert "first losses of 100 cp or more: 2 games" in capsys.readouterr().out
    # the same record summed up again without the engine
    again = tmp_path / "again.json"
    assert gamereview.main(["--from-json", str(out), "--out", str(again)]) == 0
    assert json.loads(again.read_text())["summary"] == record["summary"]
    assert gamereview.main(["--from-json", str(pgn), "--out", str(again)]) == 2
    assert "is not a review record" in capsys.readouterr().err
    assert gamereview.main([]) == 2
