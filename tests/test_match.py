"""``chessaccel match``: a short real match against Debian's stockfish (clocks, colours,
openings, PGN, JSON record, Elo), the Elo arithmetic, and bad settings."""

import json
import math
import shutil
import sys
from pathlib import Path

import chess
import chess.pgn
import pytest

from chessaccel.host.cli import main
from chessaccel.host.engine.elo import estimate, elo_of_score
from chessaccel.host.engine.match import MatchError, parse_option, parse_tc
from chessaccel.host.engine.openings import OPENINGS, opening_board

STOCKFISH = shutil.which("stockfish") or (
    "/usr/games/stockfish" if shutil.which("/usr/games/stockfish") else None)
needs_stockfish = pytest.mark.skipif(STOCKFISH is None,
                                     reason="stockfish is not installed (apt-get install stockfish)")


@needs_stockfish
def test_a_two_game_match_writes_pgn_json_and_elo(tmp_path, capsys):
    out = tmp_path / "m.json"
    status = main(["match", "--opponent", STOCKFISH, "--opponent-option", "UCI_LimitStrength=true",
                   "--opponent-option", "UCI_Elo=1350", "--games", "2", "--tc", "4+0.1",
                   "--hardware-plies", "1", "--max-plies", "30", "--out", str(out),
                   # the model's pst evaluation: 2.4 times the nodes/s of its terms (Evaluation
                   # auto's on the model), so that depth 1 fits 4 s + 0.1 s on a loaded machine
                   "--engine-option", "Evaluation=pst"])
    captured = capsys.readouterr()
    assert status == 0
    summary = json.loads(out.read_text())
    assert (summary["games"], summary["engine"], summary["opponent"]) == \
        (2, "chessaccel", "Stockfish 15.1")
    assert summary["opponent_options"] == ["UCI_LimitStrength=true", "UCI_Elo=1350"]
    assert "HardwarePlies=1" in summary["engine_options"]
    records = summary["records"]
    assert [r["our_colour"] for r in records] == ["white", "black"]
    assert [r["opening"] for r in records] == [OPENINGS[0][0]] * 2
    assert summary["wins"] + summary["draws"] + summary["losses"] == 2
    assert summary["score"] == sum(r["points"] for r in records) / 2
    forfeits = sum(r["termination"] == "time forfeit" for r in records)
    assert summary["our_time_losses"] + summary["their_time_losses"] == forfeits
    assert all(r["plies"] <= 30 for r in records)
    ours = [m for r in records for m in r["our_moves"]]
    assert len(ours) >= 10 and sum(m["depth"] is not None and m["depth"] >= 1 for m in ours) \
        >= len(ours) // 2     # at 4 s + 0.1 s a move may come before depth 1 is done
    games = []
    with open(tmp_path / "m.pgn") as f:
        while (game := chess.pgn.read_game(f)) is not None:
            games.append(game)
    assert len(games) == 2
    assert [g.headers["White"] for g in games] == ["chessaccel", "Stockfish 15.1"]
    assert all(g.headers["TimeControl"] == "4+0.1" for g in games)
    for game, record in zip(games, records):
        moves = list(game.mainline_moves())
        assert [m.uci() for m in moves[:6]] == OPENINGS[0][1].split()
        assert game.headers["Result"] == record["result"]
    assert [l.split(":")[0] for l in captured.err.splitlines()] == ["game 1/2", "game 2/2"]
    assert "Elo" in captured.out
    assert (tmp_path / "m.png").stat().st_size > 1000


@pytest.mark.parametrize("argv, problem", [
    (["--tc", "ten"], "time control 'ten'"),
    (["--tc", "0+1"], "base must be positive"),
    (["--games", "0"], "at least 1"),
    (["--opponent-option", "UCI_Elo"], "expected Name=Value"),
    (["--opponent", "/nonexistent/engine"], "does not start as a UCI engine"),
])
def test_bad_settings_are_one_line(capsys, tmp_path, argv, problem):
    base = {"--opponent": STOCKFISH or "/usr/games/stockfish", "--games": "1", "--tc": "1+0"}
    args = ["match", "--out", str(tmp_path / "x.json")]
    for key, value in base.items():
        if key not in argv:
            args += [key, value]
    assert main(args + argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and problem in err[0], err


@needs_stockfish
def test_an_unknown_opponent_option_is_one_line(capsys, tmp_path):
    assert main(["match", "--opponent", STOCKFISH, "--opponent-option", "Strength=9000",
                 "--games", "1", "--tc", "1+0", "--out", str(tmp_path / "x.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["chessaccel: error: opponent has no option 'Strength'"]


def test_backend_settings_reach_our_engine_and_an_engine_command_only_where_given():
    import argparse
    from chessaccel.host.engine.match import engine_settings

    def args(**given):
        fields = {"engine": None, "backend": None, "accelerators": None, "hardware_plies": None}
        return argparse.Namespace(**{**fields, **given})
    assert engine_settings(args()) == [("Backend", "model"), ("Accelerators", "1"),
                                       ("HardwarePlies", "-1")]
    assert engine_settings(args(backend="opencl", accelerators=2))[:2] == [
        ("Backend", "opencl"), ("Accelerators", "2")]
    assert engine_settings(args(engine="stockfish")) == []
    assert engine_settings(args(engine="env X=1 chessaccel uci", backend="opencl",
                                hardware_plies=2)) == [("Backend", "opencl"),
                                                       ("HardwarePlies", "2")]


def test_time_controls_and_options_parse():
    assert parse_tc("10+0.1") == (10.0, 0.1) and parse_tc("60") == (60.0, 0.0)
    assert parse_option("UCI_Elo=1350") == ("UCI_Elo", "1350")
    assert parse_option("Backend=serial:/dev/ttyUSB0") == ("Backend", "serial:/dev/ttyUSB0")
    with pytest.raises(MatchError):
        parse_tc("10+-1")


@needs_stockfish
def test_a_side_whose_set_up_fails_in_any_way_closes_its_engine(monkeypatch):
    """Not only the expected errors: whatever fails while a side is being set up, its engine
    is quit (python-chess's engine thread is not a daemon: one left running keeps the process
    from ever exiting, as a match whose option list went wrong once did)."""
    from chessaccel.host.engine import match
    opened = []
    real_open = match._open
    monkeypatch.setattr(match, "_open", lambda *a: opened.append(real_open(*a)) or opened[-1])

    def broken(*args):
        raise RuntimeError("not an expected error")
    monkeypatch.setattr(match, "_typed", broken)
    side = match.Side("opponent", [STOCKFISH], [("Hash", "16")])
    with pytest.raises(RuntimeError, match="not an expected error"):
        side.start()
    assert side.engine is None and len(opened) == 1
    assert opened[0].protocol.returncode.done(), "the engine was left running"


def test_openings_are_legal_and_distinct():
    boards = [opening_board(moves) for _, moves in OPENINGS]
    assert len({b.fen() for b in boards}) == len(OPENINGS) >= 20
    assert all(b.ply() <= 8 and not b.is_game_over() for b in boards)


def _eco_rows():
    """(eco, name, position) of each row of tests/data/openings-eco.tsv (Lichess's opening
    table, copied by hand; its header says from where); the position is the row's moves played
    from the start, as python-chess's EPD."""
    rows = []
    with open(Path(__file__).parent / "data" / "openings-eco.tsv", encoding="utf-8") as f:
        for line in f:
            if line.startswith("#") or line.startswith("eco\t") or not line.strip():
                continue
            eco, name, pgn = line.rstrip("\n").split("\t")
            board = chess.Board()
            for token in pgn.split():
                if not token.endswith("."):
                    board.push_san(token)
            rows.append((eco, name, board.epd()))
    return rows


def test_opening_names_are_the_eco_names_of_their_lines():
    """Each opening's name (the PGN's Opening tag) is the name the Lichess opening table gives
    the deepest position along its moves that the table names: an independent naming, looked up
    by position as Lichess does (the Reti line ends on a position the table reaches by another
    move order); every row of the data file belongs to one opening."""
    rows = _eco_rows()
    by_position = {epd: (eco, name) for eco, name, epd in rows}
    assert len(by_position) == len(rows) == len(OPENINGS)
    used = []
    for name, moves in OPENINGS:
        board, named = chess.Board(), None
        for uci in moves.split():
            board.push_uci(uci)
            named = by_position.get(board.epd(), named)
        assert named is not None and named[1] == name, (name, named)
        used.append(named)
    assert sorted(used) == sorted(by_position.values())


def test_elo_from_scores():
    assert elo_of_score(0.5) == 0
    assert elo_of_score(0.75) == pytest.approx(190.85, abs=0.01)
    e = estimate(10, 5, 5)
    assert (e.games, e.score) == (20, 0.625)
    assert e.elo == pytest.approx(88.74, abs=0.01)
    spread = 1.959964 * math.sqrt((10 * 0.375 ** 2 + 5 * 0.125 ** 2 + 5 * 0.625 ** 2) / 20 / 20)
    assert e.low == pytest.approx(elo_of_score(0.625 - spread))
    assert e.high == pytest.approx(elo_of_score(0.625 + spread))
    assert e.text() == "+10 =5 -5, score 0.625, Elo +89 +- 144 (95 % interval [-40, +248])"


def test_elo_at_the_edges():
    lost = estimate(0, 0, 30)
    assert lost.bound == "<" and lost.elo == pytest.approx(elo_of_score(1 / 60))
    assert lost.error is None and "every game lost" in lost.text()
    won = estimate(4, 0, 0)
    assert won.bound == ">" and won.elo == pytest.approx(elo_of_score(1 - 1 / 8))
    nearly = estimate(0, 1, 29)
    assert nearly.low is None and nearly.high is not None and "[-inf," in nearly.text()
    assert estimate(0, 0, 0).text() == "no games"


def test_elo_texts_at_the_edges_worked_by_hand():
    """-400 log10(59) = -708.3 (score 1/60: half a point of 30 games, or one draw in 30);
    score 7/8: -400 log10(1/7) = +338.0; 1 win 1 draw: score 0.75, +190.8, spread
    1.96 sqrt(0.0625 / 2) = 0.3465: low score 0.4035 -> -67.9, high above 1: unbounded."""
    texts = {games: estimate(*games) for games in ((0, 0, 30), (4, 0, 0), (0, 1, 29), (1, 1, 0))}
    assert {games: (e.text(), e.bound, e.error) for games, e in texts.items()} == {
        (0, 0, 30): ("+0 =0 -30, score 0.000, Elo < -708 (every game lost: a bound from half a "
                     "point)", "<", None),
        (4, 0, 0): ("+4 =0 -0, score 1.000, Elo > +338 (every game won: a bound from half a "
                    "point)", ">", None),
        (0, 1, 29): ("+0 =1 -29, score 0.017, Elo -708, 95 % interval [-inf, -516]", None, None),
        (1, 1, 0): ("+1 =1 -0, score 0.750, Elo +191, 95 % interval [-68, +inf]", None, None)}
    assert estimate(0, 0, 0) == estimate(0, 0, 0).__class__(0, 0, 0, 0, 0.0, None, None, None, None)


@needs_stockfish
def test_a_match_starts_afresh_unless_resumed(tmp_path, capsys):
    """An old record is replaced by a new match; with --resume the match goes on after the
    games it holds (docs: an interrupted match loses at most the game in progress)."""
    out = tmp_path / "m.json"
    base = ["match", "--opponent", STOCKFISH, "--tc", "1+0", "--hardware-plies", "1",
            "--max-plies", "2", "--out", str(out)]
    assert main(base + ["--games", "1"]) == 0
    [first] = json.loads(out.read_text())["records"]
    capsys.readouterr()
    assert main(base + ["--games", "1"]) == 0
    assert "game 1/1:" in capsys.readouterr().err, "played again, not taken from the old record"
    assert len(json.loads(out.read_text())["records"]) == 1
    assert main(base + ["--games", "2", "--resume"]) == 0
    err = capsys.readouterr().err
    assert "game 2/2:" in err and "game 1/2:" not in err
    records = json.loads(out.read_text())["records"]
    assert len(records) == 2 and records[0]["our_colour"] != records[1]["our_colour"]
    with open(tmp_path / "m.pgn") as pgn:
        assert [chess.pgn.read_game(pgn).headers["Round"] for _ in range(2)] == ["1", "2"]
        assert chess.pgn.read_game(pgn) is None


def _children(pid):
    """Process ids whose parent is ``pid`` (from /proc)."""
    import os
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid and fields[0] != "Z":
                found.append(int(entry))
    return found


def test_an_opponent_that_dies_while_set_up_is_one_line_and_stops_our_engine(capsys, tmp_path):
    """An opponent that answers ``uci`` and then exits (at ``isready``): one error line, status
    2, and the engine started before it is not left running."""
    import os
    dying = tmp_path / "dying-engine"
    dying.write_text("#!/bin/sh\nread line\necho 'id name dying'\necho uciok\nread line\nexit 3\n")
    dying.chmod(0o755)
    before = set(_children(os.getpid()))
    assert main(["match", "--opponent", str(dying), "--games", "1", "--tc", "1+0",
                 "--out", str(tmp_path / "x.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "ended while being set up" in err[0], err
    assert set(_children(os.getpid())) <= before


# --- play_game, the summary and the plot with scripted sides ---------------------------------

class _Played:
    def __init__(self, move, info=None):
        self.move, self.info = move, info or {}


class _ScriptedEngine:
    """An engine driver stand-in: plays the given moves in turn (None: no move; an exception:
    raised), each taking ``seconds`` on the match's clock."""

    def __init__(self, moves, clock, seconds=0.5, info=None):
        self.moves, self.clock, self.seconds, self.info = list(moves), clock, seconds, info
        self.limits = []

    def play(self, board, limit, game=None, info=None):
        self.limits.append(limit)
        self.clock.now += self.seconds
        move = self.moves.pop(0)
        if isinstance(move, Exception):
            raise move
        return _Played(None if move is None else chess.Move.from_uci(move), dict(self.info or {}))


class _Clock:
    def __init__(self):
        self.now = 1000.0

    def monotonic(self):
        return self.now


def _sides(monkeypatch, ours_moves, theirs_moves, our_seconds=0.5, their_seconds=0.25, info=None):
    from chessaccel.host.engine import match
    clock = _Clock()
    monkeypatch.setattr(match, "time", clock)
    ours, theirs = match.Side("engine", ["ours"], []), match.Side("opponent", ["theirs"], [])
    ours.engine = _ScriptedEngine(ours_moves, clock, our_seconds, info)
    theirs.engine = _ScriptedEngine(theirs_moves, clock, their_seconds)
    return ours, theirs


FOOLS_MATE_BLACK = ["e7e5", "d8h4"]


def test_a_scripted_game_to_mate_records_every_figure(monkeypatch):
    """Fool's mate against us (white): 0-1, 0 points, the clocks (10 s + 1 s: our least clock
    is 9.5 s, theirs 9.75 s), our moves' depth, nodes and score (mate and centipawns, from our
    side), and the PGN's result and termination."""
    from chessaccel.host.engine import match
    info = {"depth": 7, "nodes": 1234, "score": chess.engine.PovScore(chess.engine.Cp(-35), chess.WHITE)}
    ours, theirs = _sides(monkeypatch, ["f2f3", "g2g4"], FOOLS_MATE_BLACK, info=info)
    game, record = match.play_game(ours, theirs, chess.Board(), chess.WHITE, 10.0, 1.0, 100, 7)
    assert record == {"game": 7, "our_colour": "white", "result": "0-1", "points": 0.0,
                      "termination": "checkmate", "plies": 4, "our_least_clock": 9.5,
                      "their_least_clock": 9.75, "our_time_loss": False, "their_time_loss": False,
                      "our_moves": [{"ply": 0, "seconds": 0.5, "depth": 7, "nodes": 1234, "score": -35},
                                    {"ply": 2, "seconds": 0.5, "depth": 7, "nodes": 1234, "score": -35}],
                      "crashed": None}
    assert (game.headers["Result"], game.headers["Termination"]) == ("0-1", "checkmate")
    assert [m.uci() for m in game.mainline_moves()] == ["f2f3", "e7e5", "g2g4", "d8h4"]
    # the clocks handed to the engines: each side's time less what it used, plus the increment
    first, second = ours.engine.limits
    assert (first.white_clock, first.black_clock, first.white_inc, first.black_inc) == (10.0, 10.0, 1.0, 1.0)
    assert (second.white_clock, second.black_clock) == (10.5, 10.75)


def test_a_scripted_win_with_black_scores_1_and_mate_text(monkeypatch):
    from chessaccel.host.engine import match
    info = {"depth": 3, "nodes": 99, "score": chess.engine.PovScore(chess.engine.Mate(1), chess.BLACK)}
    ours, theirs = _sides(monkeypatch, FOOLS_MATE_BLACK, ["f2f3", "g2g4"], info=info)
    _, record = match.play_game(ours, theirs, chess.Board(), chess.BLACK, 5.0, 0.0, 100, 0)
    assert (record["our_colour"], record["result"], record["points"]) == ("black", "0-1", 1.0)
    assert [m["score"] for m in record["our_moves"]] == ["mate 1", "mate 1"]
    assert [m["ply"] for m in record["our_moves"]] == [1, 3]


def test_a_game_from_a_later_position_to_the_move_limit_with_exact_rounding(monkeypatch):
    """From a position 39 plies into a game (black to move, ours), 3 plies to the limit: a
    draw by adjudication, plies counted from the start position, each move's seconds to 4
    digits (0.1236), each least clock to 3 (10 - 2 x 0.1236 = 9.7528 -> 9.753; theirs
    10 - 0.2341 = 9.7659 -> 9.766)."""
    from chessaccel.host.engine import match
    info = {"depth": 5, "nodes": 77, "score": chess.engine.PovScore(chess.engine.Cp(40), chess.WHITE)}
    ours, theirs = _sides(monkeypatch, ["e7e5", "b8c6"], ["e2e4"], our_seconds=0.1236,
                          their_seconds=0.2341, info=info)
    start = chess.Board("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq - 0 20")
    game, record = match.play_game(ours, theirs, start, chess.BLACK, 10.0, 0.0, 3, 2)
    assert record == {"game": 2, "our_colour": "black", "result": "1/2-1/2", "points": 0.5,
                      "termination": "adjudicated (move limit)", "plies": 3,
                      "our_least_clock": 9.753, "their_least_clock": 9.766,
                      "our_time_loss": False, "their_time_loss": False,
                      "our_moves": [{"ply": 39, "seconds": 0.1236, "depth": 5, "nodes": 77, "score": -40},
                                    {"ply": 41, "seconds": 0.1236, "depth": 5, "nodes": 77, "score": -40}],
                      "crashed": None}
    assert (game.headers["Result"], game.headers["Termination"]) == \
        ("1/2-1/2", "adjudicated (move limit)")


@pytest.mark.parametrize("ours_too_slow", [True, False])
def test_a_clock_below_zero_loses_on_time(monkeypatch, ours_too_slow):
    from chessaccel.host.engine import match
    slow, fast = 3.0, 0.1
    ours, theirs = _sides(monkeypatch, ["e2e4", "d2d4", "c2c4"], ["e7e5", "d7d5", "c7c5"],
                          slow if ours_too_slow else fast, fast if ours_too_slow else slow)
    _, record = match.play_game(ours, theirs, chess.Board(), chess.WHITE, 5.0, 0.0, 100, 0)
    assert record["termination"] == "time forfeit"
    assert (record["our_time_loss"], record["their_time_loss"]) == (ours_too_slow, not ours_too_slow)
    assert record["result"] == ("0-1" if ours_too_slow else "1-0")
    assert record["points"] == (0.0 if ours_too_slow else 1.0)
    assert record["plies"] == (2 if ours_too_slow else 3)


def test_an_illegal_move_or_a_failing_engine_loses(monkeypatch):
    from chessaccel.host.engine import match
    ours, theirs = _sides(monkeypatch, ["e7e5"], ["e2e4", "e2e4"])
    _, record = match.play_game(ours, theirs, chess.Board(), chess.BLACK, 5.0, 0.0, 100, 0)
    assert (record["result"], record["points"], record["crashed"]) == ("0-1", 1.0, "opponent")
    assert record["termination"] == "opponent played an illegal move e2e4"
    ours, theirs = _sides(monkeypatch, [None], [])
    _, record = match.play_game(ours, theirs, chess.Board(), chess.WHITE, 5.0, 0.0, 100, 0)
    assert (record["result"], record["crashed"]) == ("0-1", "engine")
    assert record["termination"] == "engine played an illegal move None"
    ours, theirs = _sides(monkeypatch, ["e2e4", chess.engine.EngineTerminatedError("x" * 100)],
                          ["e7e5"])
    _, record = match.play_game(ours, theirs, chess.Board(), chess.WHITE, 5.0, 0.0, 100, 0)
    assert (record["result"], record["points"], record["crashed"]) == ("0-1", 0.0, "engine")
    assert record["termination"] == "engine failed: " + "x" * 80
    assert record["our_moves"][0]["ply"] == 0 and len(record["our_moves"]) == 1


def test_an_engine_that_reports_an_error_stops_the_match(monkeypatch):
    # a UCI engine whose backend cannot search still answers with a move, after saying so
    from chessaccel.host.engine import match
    info = {"string": "error: no backend can search: playing the first legal move"}
    ours, theirs = _sides(monkeypatch, ["e2e4"], [], info=info)
    with pytest.raises(MatchError) as e:
        match.play_game(ours, theirs, chess.Board(), chess.WHITE, 5.0, 0.0, 100, 6)
    assert str(e.value).startswith("engine reported an error in game 7 at ply 0: no backend can "
                                   "search: playing the first legal move; the match stops")
    ours, theirs = _sides(monkeypatch, FOOLS_MATE_BLACK, ["f2f3", "g2g4"],
                          info={"string": "HardwarePlies 2: inline"})
    _, record = match.play_game(ours, theirs, chess.Board(), chess.BLACK, 5.0, 0.0, 100, 0)
    assert record["termination"] == "checkmate", "other info strings are no error"


def test_an_engine_that_reports_an_error_while_set_up_stops_the_match():
    """Our engine asked for a backend that cannot start says so while its options are set and
    would search every game on the model instead: the match stops before any game, naming the
    line; with a backend that starts, the same engine is set up without a word."""
    from chessaccel.host.engine.match import Side
    command = [sys.executable, "-P", "-m", "chessaccel.host.cli", "uci"]
    side = Side("engine", command, [("Backend", "opencl:NO-SUCH-PLATFORM")])
    with pytest.raises(MatchError) as e:
        side.start()
    assert str(e.value).startswith("engine reported an error while being set up: backend "
                                   "'opencl:NO-SUCH-PLATFORM'"), str(e.value)
    assert str(e.value).endswith("; the match stops")
    side = Side("engine", command, [("Backend", "model")])
    side.start()
    try:
        assert side.engine is not None
    finally:
        side.stop()


def test_a_failing_black_engine_loses_1_0_and_a_failing_white_one_0_1(monkeypatch):
    from chessaccel.host.engine import match
    ours, theirs = _sides(monkeypatch, [chess.engine.EngineError("y" * 81)], ["d2d4"])
    _, record = match.play_game(ours, theirs, chess.Board(), chess.BLACK, 5.0, 0.0, 100, 0)
    assert (record["result"], record["points"], record["crashed"]) == ("1-0", 0.0, "engine")
    assert (record["termination"], record["plies"]) == ("engine failed: " + "y" * 80, 1)
    ours, theirs = _sides(monkeypatch, ["e7e5"], ["e2e4", chess.engine.EngineError("gone")])
    _, record = match.play_game(ours, theirs, chess.Board(), chess.BLACK, 5.0, 0.0, 100, 0)
    assert (record["result"], record["points"], record["crashed"]) == ("0-1", 1.0, "opponent")
    assert (record["termination"], record["plies"]) == ("opponent failed: gone", 2)


def test_a_threefold_repetition_is_claimed_as_a_draw(monkeypatch):
    """The knights go out and back twice: white's 8th ply would bring the start position a
    third time, so the draw is claimed before it, after 7 plies (without the claim the game
    would go on to the fivefold repetition)."""
    from chessaccel.host.engine import match
    ours, theirs = _sides(monkeypatch, ["g1f3", "f3g1"] * 3, ["g8f6", "f6g8"] * 3)
    _, record = match.play_game(ours, theirs, chess.Board(), chess.WHITE, 60.0, 0.0, 100, 0)
    assert (record["result"], record["points"], record["plies"]) == ("1/2-1/2", 0.5, 7)
    assert record["termination"] == "threefold_repetition"


def test_the_move_limit_adjudicates_a_draw(monkeypatch):
    from chessaccel.host.engine import match
    start = chess.Board()
    start.push_uci("e2e4")       # the limit counts plies from the opening's position
    ours, theirs = _sides(monkeypatch, ["e7e5", "g8f6"], ["g1f3", "b1c3"])
    _, record = match.play_game(ours, theirs, start, chess.BLACK, 5.0, 0.0, 3, 0)
    assert (record["result"], record["termination"], record["plies"]) == \
        ("1/2-1/2", "adjudicated (move limit)", 3)
    assert record["points"] == 0.5


def _args(**kw):
    import argparse
    base = dict(opponent_option=["UCI_Elo=1350"], tc="10+0.1", games=4)
    return argparse.Namespace(**{**base, **kw})


def _record(points, depths=(), nodes=(), seconds=(), least=5.0, our_loss=False, their_loss=False):
    return {"points": points, "our_least_clock": least, "our_time_loss": our_loss,
            "their_time_loss": their_loss,
            "our_moves": [{"depth": d, "nodes": n, "seconds": s}
                          for d, n, s in zip(depths, nodes, seconds)]}


def test_the_summary_of_scripted_records():
    from chessaccel.host.engine import match
    games = [_record(1.0, (4, 6), (1000, 3000), (0.5, 1.5), least=3.25),
             _record(0.5, (None, 5), (None, 2000), (0.25, 0.75), least=2.5, their_loss=True),
             _record(0.0, (), (), (), least=7.0, our_loss=True)]
    names = {"match": "m", "ours": "chessaccel", "theirs": "Stockfish", "our_options": ["Backend=model"]}
    s = match._summary(_args(), games, names)
    e = estimate(1, 1, 1)
    assert s == {**s, "name": "m", "engine": "chessaccel", "opponent": "Stockfish",
                 "opponent_options": ["UCI_Elo=1350"], "engine_options": ["Backend=model"],
                 "tc": "10+0.1", "games_planned": 4, "games": 3, "wins": 1, "draws": 1,
                 "losses": 1, "score": 0.5, "elo": round(e.elo, 1), "elo_text": e.text(),
                 "elo_low": round(e.low, 1), "elo_high": round(e.high, 1), "elo_bound": e.bound,
                 "our_time_losses": 1, "their_time_losses": 1, "our_least_clock": 2.5,
                 "our_mean_depth": 5.0, "our_mean_nodes_per_move": 2000,
                 "our_nodes_per_second": round(6000 / 3.0), "records": games}
    empty = match._summary(_args(), [], names)
    assert (empty["games"], empty["our_least_clock"], empty["our_mean_depth"],
            empty["our_mean_nodes_per_move"], empty["our_nodes_per_second"]) == (0, None, None, None, None)
    assert empty["elo_text"] == "no games"


def test_the_plot_titles_the_match_with_its_result(tmp_path, monkeypatch):
    """The chart (8 x 6 inches at 100 dpi): the title names both engines, the time control,
    wins-draws-losses and the opponent's settings (none: no second line); the lower panel's Elo
    curve ends at the match's estimate."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.image
    import matplotlib.pyplot as plt
    from chessaccel.host.engine import match
    kept = []
    real_close = plt.close
    monkeypatch.setattr(plt, "close", lambda fig=None: kept.append(fig))
    games = [_record(1.0), _record(0.5), _record(1.0), _record(0.0)]
    names = {"match": "m", "ours": "chessaccel", "theirs": "Stockfish 15.1", "our_options": []}
    summary = match._summary(_args(opponent_option=["UCI_LimitStrength=true", "UCI_Elo=1350"]),
                             games, names)
    path = tmp_path / "m.png"
    match._plot(summary, str(path))
    [fig] = kept
    try:
        top, bottom = fig.axes
        assert top.get_title() == ("chessaccel vs Stockfish 15.1 at 10+0.1: 2-1-1\n"
                                   "(UCI_LimitStrength=true UCI_Elo=1350)")
        assert list(top.lines[0].get_ydata()) == [1.0, 0.75, 2.5 / 3, 0.625]
        assert bottom.lines[0].get_ydata()[-1] == pytest.approx(estimate(2, 1, 1).elo)
    finally:
        real_close(fig)
    assert matplotlib.image.imread(path).shape[:2] == (600, 800)
    # no options: no second line; a self-play opponent's engine options are its settings
    titles = []
    monkeypatch.setattr(plt, "close", lambda fig=None: (titles.append(fig.axes[0].get_title()),
                                                        real_close(fig)))
    match._plot(match._summary(_args(opponent_option=[]), games, names),
                str(tmp_path / "plain.png"))
    match._plot(match._summary(_args(opponent_option=[]), games,
                               {**names, "their_options": ["JobReductions=false"]}),
                str(tmp_path / "self.png"))
    assert titles == ["chessaccel vs Stockfish 15.1 at 10+0.1: 2-1-1",
                      "chessaccel vs Stockfish 15.1 at 10+0.1: 2-1-1\n(JobReductions=false)"]
    match._plot(match._summary(_args(), [], names), str(tmp_path / "none.png"))
    assert not (tmp_path / "none.png").exists()


def test_option_values_take_the_engines_declared_type():
    from types import SimpleNamespace
    from chessaccel.host.engine import match
    declared = {"Ponder": SimpleNamespace(type="check"), "Hash": SimpleNamespace(type="spin"),
                "Backend": SimpleNamespace(type="string")}
    assert match._typed(declared, "Ponder", "TRUE") is True
    assert match._typed(declared, "Ponder", "false") is False
    assert match._typed(declared, "Hash", "64") == 64
    assert match._typed(declared, "Backend", "model") == "model"
    assert match._typed(declared, "Unknown", "7") == "7"
    with pytest.raises(MatchError, match="^option Ponder is a check: true or false, got 'yes'$"):
        match._typed(declared, "Ponder", "yes")
    with pytest.raises(MatchError, match="^option Hash is a number, got 'lots'$"):
        match._typed(declared, "Hash", "lots")


@pytest.mark.parametrize("text, problem", [
    ("=5", "option '=5': expected Name=Value"),
    ("x", "option 'x': expected Name=Value"),
])
def test_bad_options_are_named(text, problem):
    with pytest.raises(MatchError) as raised:
        parse_option(text)
    assert str(raised.value) == problem
    assert parse_option(" Hash = 16 ") == ("Hash", "16")
    assert parse_tc("5+") == (5.0, 0.0)
    with pytest.raises(MatchError, match=r"^time control '1\+x': expected BASE\+INC in seconds"):
        parse_tc("1+x")


def test_the_match_options_help_follows_the_command_lines_rule():
    """match's options (host/engine/match.py) under test_cli's rule for every help text."""
    from test_cli import test_every_help_text_is_lower_case_and_names_real_options as rule
    rule()


def test_a_clock_at_exactly_zero_does_not_lose(monkeypatch):
    """The module's rule: a clock *below* zero loses on time; a move that uses exactly the
    time left (here 2 s of 2 s, no increment) stands, with a least clock of 0."""
    from chessaccel.host.engine import match
    ours, theirs = _sides(monkeypatch, ["f2f3", "g2g4"], FOOLS_MATE_BLACK, 1.0, 0.5)
    _, record = match.play_game(ours, theirs, chess.Board(), chess.WHITE, 2.0, 0.0, 100, 0)
    assert (record["termination"], record["our_least_clock"]) == ("checkmate", 0.0)
    assert not record["our_time_loss"]


def _scripted_match(monkeypatch, points):
    """match's runner with engines that start at once and games whose results are scripted
    (``points[game_id]`` for our side); each game takes a few milliseconds, later ones often
    less than earlier ones, so that games played at once finish out of order."""
    import random
    import time as time_
    from chessaccel.host.engine import match

    def start(side):
        side.engine, side.name = object(), side.label

    def stop(side):
        side.engine = None
    played = []

    def play(ours, theirs, start_board, our_colour, base, inc, max_plies, game_id, stop_=None):
        time_.sleep(random.Random(game_id).choice([0.0, 0.01, 0.03]))
        if stop_ is not None and stop_.is_set():
            return None, None
        played.append(game_id)
        p = points[game_id]
        result = {1.0: "1-0", 0.5: "1/2-1/2", 0.0: "0-1"}[p if our_colour == chess.WHITE else 1 - p]
        game = chess.pgn.Game()
        game.headers["Result"] = result
        return game, {"game": game_id, "our_colour": "white" if our_colour == chess.WHITE
                      else "black", "result": result, "points": p, "termination": "scripted",
                      "plies": 0, "our_least_clock": 1.0, "their_least_clock": 1.0,
                      "our_time_loss": False, "their_time_loss": False, "our_moves": [],
                      "crashed": None}
    monkeypatch.setattr(match.Side, "start", start)
    monkeypatch.setattr(match.Side, "stop", stop)
    monkeypatch.setattr(match, "play_game", play)
    monkeypatch.setattr(match, "_plot", lambda summary, path: None)
    monkeypatch.setattr(match.os, "sched_getaffinity", lambda pid: set(range(8)), raising=False)
    return played


@pytest.mark.parametrize("concurrency", [1, 3])
def test_the_sprt_stops_the_match_once_it_decides(monkeypatch, tmp_path, capsys, concurrency):
    """Every game won, SPRT between 0 and 200 Elo at alpha = beta = 0.05: each win adds
    log(mu(200) / 0.5) = log(0.75975 / 0.5) = 0.4182 to the LLR, so 7 wins (2.93) stay below
    log(0.95 / 0.05) = 2.944 and the 8th (3.35) accepts H1: the match stops at game 8 of at
    most 50, with games played at once recorded in their order all the same."""
    played = _scripted_match(monkeypatch, [1.0] * 50)
    out = tmp_path / "s.json"
    assert main(["match", "--opponent", "x", "--games", "50", "--tc", "1+0", "--sprt", "0,200",
                 "--concurrency", str(concurrency), "--out", str(out)]) == 0
    captured = capsys.readouterr()
    summary = json.loads(out.read_text())
    assert summary["games"] == 8 and [r["game"] for r in summary["records"]] == list(range(8))
    assert summary["sprt"]["verdict"] == "H1 accepted"
    step = math.log((1 / (1 + 10 ** -0.5)) / 0.5)
    assert [r["llr"] for r in summary["records"]] == [round(n * step, 4) for n in range(1, 9)]
    assert (summary["sprt"]["lower"], summary["sprt"]["upper"]) == (-2.9444, 2.9444)
    lines = captured.err.strip().splitlines()
    assert [l.split(":")[0] for l in lines] == [f"game {n}/50" for n in range(1, 9)]
    assert lines[-1].endswith(f"LLR {8 * step:+.2f} [-2.94, +2.94]")
    assert captured.out.strip().splitlines()[-1] == (
        f"SPRT elo0 0 elo1 200 (alpha 0.05, beta 0.05): H1 accepted after 8 games, "
        f"LLR {8 * step:+.2f} [-2.94, +2.94]")
    # no game starts more than 2 x concurrency games ahead of the first unrecorded one
    assert len(played) <= 8 + 2 * concurrency, "the games after the decision are abandoned"
    with open(tmp_path / "s.pgn") as pgn:
        assert [chess.pgn.read_game(pgn).headers["Round"] for _ in range(8)] == \
            [str(n) for n in range(1, 9)]
        assert chess.pgn.read_game(pgn) is None
    # resumed, the match is decided already: no game is played
    played.clear()
    assert main(["match", "--opponent", "x", "--games", "50", "--tc", "1+0", "--sprt", "0,200",
                 "--resume", "--out", str(out)]) == 0
    assert played == [] and "H1 accepted after 8 games" in capsys.readouterr().out


def test_an_undecided_sprt_is_inconclusive_at_the_game_limit(monkeypatch, tmp_path, capsys):
    """Wins and losses in turn, SPRT between 0 and 5: the LLR stays near 0 and the test is
    inconclusive when the 6 games are played; resumed to 10 with 2 games at once, the later
    games follow the first 6 in order."""
    played = _scripted_match(monkeypatch, [1.0, 0.0] * 5)
    out = tmp_path / "s.json"
    base = ["match", "--opponent", "x", "--tc", "1+0", "--sprt", "0,5", "--out", str(out)]
    assert main(base + ["--games", "6"]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1].startswith(
        "SPRT elo0 0 elo1 5 (alpha 0.05, beta 0.05): inconclusive at the game limit (6 games), "
        "LLR ")
    summary = json.loads(out.read_text())
    assert summary["sprt"]["verdict"] == "inconclusive" and summary["games"] == 6
    assert main(base + ["--games", "10", "--resume", "--concurrency", "2"]) == 0
    summary = json.loads(out.read_text())
    assert [r["game"] for r in summary["records"]] == list(range(10))
    assert [r["our_colour"] for r in summary["records"]] == ["white", "black"] * 5
    assert sorted(played) == list(range(10))
    assert summary["sprt"]["llr"] == round(__import__(
        "chessaccel.host.engine.sprt", fromlist=["llr"]).llr(5, 0, 5, 0, 5), 4)


@pytest.mark.parametrize("argv, problem", [
    (["--sprt", "5,0"], "--sprt '5,0': ELO0 must be below ELO1"),
    (["--sprt", "0"], "expected ELO0,ELO1"),
    (["--sprt", "0,5", "--alpha", "0"], "--alpha 0: an error rate strictly between 0 and 1"),
    (["--sprt", "0,5", "--beta", "1.5"], "--beta 1.5: an error rate strictly between 0 and 1"),
    (["--concurrency", "0"], "--concurrency must be at least 1, got 0"),
    (["--opponent-commit", "HEAD"], "not both"),
])
def test_bad_sprt_and_concurrency_settings_are_one_line(capsys, tmp_path, argv, problem):
    assert main(["match", "--opponent", "x", "--games", "1", "--tc", "1+0",
                 "--out", str(tmp_path / "x.json")] + argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and problem in err[0], err


def test_too_many_games_at_once_warn_in_one_line(monkeypatch, tmp_path, capsys):
    import os
    _scripted_match(monkeypatch, [0.5] * 2)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1})
    assert main(["match", "--opponent", "x", "--games", "2", "--tc", "1+0", "--concurrency",
                 "2", "--accelerators", "2", "--out", str(tmp_path / "w.json")]) == 0
    warnings = [l for l in capsys.readouterr().err.splitlines() if l.startswith("warning")]
    assert warnings == ["warning: --concurrency 2 x 2 threads a game is more than the 2 cores "
                        "here: the engines' clocks will suffer"]


def test_self_play_needs_an_opponent_and_a_real_commit(capsys, tmp_path):
    out = ["--games", "1", "--tc", "1+0", "--out", str(tmp_path / "x.json")]
    assert main(["match"] + out) == 2
    assert capsys.readouterr().err.strip() == (
        "chessaccel: error: no opponent: give --opponent CMD, --opponent-engine-option or "
        "--opponent-commit")
    assert main(["match", "--opponent-commit", "no-such-rev-xyz"] + out) == 2
    assert capsys.readouterr().err.strip() == (
        "chessaccel: error: --opponent-commit 'no-such-rev-xyz': no such commit")
    assert main(["match", "--opponent-engine-option", "Hash"] + out) == 2
    assert "expected Name=Value" in capsys.readouterr().err


def _git(*argv):
    import subprocess
    return subprocess.run(["git", *argv], capture_output=True, text=True,
                          cwd=Path(__file__).parent.parent).stdout.strip()


def test_self_play_with_another_option_two_games_at_once(tmp_path, capsys):
    """Our engine against itself with HardwarePlies 2 instead of 1, both games at once (each
    with its own two engines): the opponent is named by its options, the games are recorded
    in order."""
    out = tmp_path / "self.json"
    assert main(["match", "--opponent-engine-option", "HardwarePlies=2", "--games", "2",
                 "--concurrency", "2", "--tc", "2+0", "--hardware-plies", "1",
                 "--max-plies", "2", "--out", str(out)]) == 0
    summary = json.loads(out.read_text())
    assert (summary["engine"], summary["opponent"]) == ("chessaccel", "chessaccel [HardwarePlies=2]")
    assert [r["game"] for r in summary["records"]] == [0, 1]
    assert "HardwarePlies=1" in summary["engine_options"]
    assert summary["opponent_options"] == []
    assert summary["opponent_settings"] == ["Backend=model", "Accelerators=1", "HardwarePlies=2"]
    with open(tmp_path / "self.pgn") as pgn:
        assert [chess.pgn.read_game(pgn).headers["White"] for _ in range(2)] == \
            ["chessaccel", "chessaccel [HardwarePlies=2]"]


@pytest.mark.skipif(not _git("rev-parse", "HEAD"), reason="not in a git checkout")
def test_self_play_against_a_commit_runs_its_checkout_and_removes_it(tmp_path, capsys,
                                                                        monkeypatch):
    """--opponent-commit HEAD: the opponent runs from a temporary worktree of HEAD (its
    src/ on PYTHONPATH, its compiled host board prepared in our build cache before the first
    game), which is gone afterwards; a commit from before the src/ layout (the
    parent of the one that added src/chessaccel/host/cli.py) is refused in one line, and
    leaves no worktree either."""
    from chessaccel.host.engine import match
    monkeypatch.chdir(Path(__file__).parent.parent)
    before = _git("worktree", "list")
    seen = []
    real_open = match._open
    monkeypatch.setattr(match, "_open", lambda *a: seen.append(a) or real_open(*a))
    out = tmp_path / "c.json"
    assert main(["match", "--opponent-commit", "HEAD", "--games", "1", "--tc", "2+0",
                 "--hardware-plies", "1", "--max-plies", "1", "--out", str(out)]) == 0
    head = _git("rev-parse", "HEAD")
    summary = json.loads(out.read_text())
    assert summary["opponent"] == f"chessaccel @{head[:12]}"
    [(_, _, label, env)] = [a for a in seen if len(a) == 4]
    assert label == "opponent" and env["PYTHONPATH"].endswith("/tree/src")
    assert not Path(env["PYTHONPATH"]).exists()
    # its compiled host board was built (or found) in our build cache before game 1, not
    # inside its first move
    assert list(Path(env["CHESSACCEL_NATIVE_BUILD"]).glob("hostboard-*.so"))
    assert _git("worktree", "list") == before
    added = _git("log", "--format=%H", "--diff-filter=A", "--", "src/chessaccel/host/cli.py")
    old = added.splitlines()[-1] + "^"
    capsys.readouterr()
    assert main(["match", "--opponent-commit", old, "--games", "1", "--tc", "1+0",
                 "--out", str(tmp_path / "o.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].endswith("predates the src/ layout (no "
                                             "src/chessaccel/host/cli.py): not supported"), err
    assert _git("worktree", "list") == before
