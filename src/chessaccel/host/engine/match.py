"""``chessaccel match --opponent CMD --games N --tc BASE+INC``: play any UCI engine.

The engine (``chessaccel uci`` on ``--backend``, or any ``--engine CMD``) meets the opponent
through python-chess's engine driver. Games start from a set of openings (engine/openings.py or
``--openings FILE``), each opening played twice with the colours swapped. The runner keeps both
clocks itself: the time from sending ``go`` to reading ``bestmove`` is taken off the mover's
clock (so the pipes and the driver count against the engine, as in any GUI), the increment is
added after the move, and a clock below zero loses on time. Games end by the rules, draws
claimed as a GUI would (threefold repetition, fifty moves), or at ``--max-plies`` (a draw).

After every game: a progress line on stderr, the game appended to the PGN, and the whole record
(games, per-move depth and nodes of our engine, score, Elo with its 95 % error bar) rewritten
to the JSON, so an interrupted match loses at most the game in progress; ``--resume`` goes on
from the JSON. A plot of the running score and Elo is drawn beside it.
"""

import datetime
import json
import os
import shlex
import sys
import time

import chess
import chess.engine
import chess.pgn

from .elo import estimate
from .openings import OPENINGS, opening_board, read_openings

__all__ = ["add_arguments", "run", "MatchError", "parse_tc", "parse_option"]

ENGINE_COMMAND = [sys.executable, "-P", "-m", "chessaccel.host.cli", "uci"]
#: Seconds the driver waits for an engine to start and answer uci/isready.
START_TIMEOUT = 120


class MatchError(ValueError):
    """Bad match settings: one line, exit status 2."""


def parse_tc(text):
    """'10+0.1' -> (10.0, 0.1); '60' -> (60.0, 0.0)."""
    base, _, inc = text.partition("+")
    try:
        base, inc = float(base), float(inc or 0)
    except ValueError:
        raise MatchError(f"time control {text!r}: expected BASE+INC in seconds, e.g. 10+0.1") from None
    if base <= 0 or inc < 0:
        raise MatchError(f"time control {text!r}: base must be positive, increment not negative")
    return base, inc


def parse_option(text):
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise MatchError(f"option {text!r}: expected Name=Value")
    return name.strip(), value.strip()


def add_arguments(parser):
    parser.add_argument("--opponent", required=True,
                        help="the opponent's command line, e.g. /usr/games/stockfish")
    parser.add_argument("--opponent-option", action="append", default=[], metavar="NAME=VALUE",
                        help="UCI option for the opponent (repeatable)")
    parser.add_argument("--engine", help="our side's command line (default: chessaccel uci)")
    parser.add_argument("--engine-option", action="append", default=[], metavar="NAME=VALUE",
                        help="UCI option for our side (repeatable)")
    parser.add_argument("--backend", default="model", help="our engine's Backend (default model)")
    parser.add_argument("--accelerators", type=int, default=1, help="our engine's Accelerators")
    parser.add_argument("--hardware-plies", type=int, default=3, help="our engine's HardwarePlies")
    parser.add_argument("--games", type=int, required=True, help="games to play")
    parser.add_argument("--tc", required=True, help="time control BASE+INC seconds, e.g. 10+0.1")
    parser.add_argument("--openings", help="file of FEN/EPD lines or UCI move lists")
    parser.add_argument("--max-plies", type=int, default=400, help="adjudicate a draw after this")
    parser.add_argument("--pgn", help="PGN file (default: beside the JSON)")
    parser.add_argument("--out", help="JSON record (default out/match-NAME.json)")
    parser.add_argument("--name", help="name of this match in file names and the PGN's Event")
    parser.add_argument("--resume", action="store_true", help="go on from the JSON's games")


def _open(command, options, label):
    try:
        engine = chess.engine.SimpleEngine.popen_uci(command, timeout=START_TIMEOUT,
                                                     stderr=None)
    except (OSError, chess.engine.EngineError, chess.engine.EngineTerminatedError,
            TimeoutError) as error:
        raise MatchError(f"{label} {' '.join(command)!r} does not start as a UCI engine: "
                         f"{error}") from None
    try:
        engine.configure(options)
    except (chess.engine.EngineError, ValueError, TypeError) as error:
        engine.quit()
        raise MatchError(f"{label}: {error}") from None
    return engine


def _typed(engine_options, name, value):
    """A --x-option value in the type the engine declares (check/spin options)."""
    option = engine_options.get(name)
    if option is None:
        return value
    if option.type == "check":
        if value.lower() not in ("true", "false"):
            raise MatchError(f"option {name} is a check: true or false, got {value!r}")
        return value.lower() == "true"
    if option.type == "spin":
        try:
            return int(value)
        except ValueError:
            raise MatchError(f"option {name} is a number, got {value!r}") from None
    return value


class Side:
    """One engine of the match (restarted after a crash)."""

    def __init__(self, label, command, options):
        self.label, self.command, self.raw_options = label, command, options
        self.engine = None
        self.name = label

    def start(self):
        probe = _open(self.command, {}, self.label)
        try:
            options = {n: _typed(probe.options, n, v) for n, v in self.raw_options}
            unknown = [n for n in options if n not in probe.options]
            if unknown:
                raise MatchError(f"{self.label} has no option {unknown[0]!r}")
            probe.configure(options)
            probe.ping()    # isready: options that start something (a backend) finish first,
            #                 before any clock runs
        except chess.engine.EngineTerminatedError as error:
            raise MatchError(f"{self.label} {' '.join(self.command)!r} ended while being set "
                             f"up: {error}") from None
        except (MatchError, chess.engine.EngineError, TimeoutError) as error:
            probe.quit()
            raise MatchError(str(error)) from None
        except BaseException:
            # anything else (a bug, an interrupt): the engine's thread is not a daemon, so an
            # engine left running keeps the whole process from exiting
            try:
                probe.quit()
            except Exception:   # the engine may be gone already
                pass
            raise
        self.engine = probe
        self.name = probe.id.get("name", self.label)

    def stop(self):
        if self.engine is not None:
            try:
                self.engine.quit()
            except (chess.engine.EngineError, chess.engine.EngineTerminatedError, TimeoutError):
                pass
            self.engine = None


def play_game(ours, theirs, start_board, our_colour, base, inc, max_plies, game_id):
    """One game; returns (pgn game, record)."""
    board = start_board.copy()
    clocks = {chess.WHITE: base, chess.BLACK: base}
    least = {chess.WHITE: base, chess.BLACK: base}
    moves_info = []
    result, termination, loser = None, None, None
    sides = {our_colour: ours, not our_colour: theirs}
    while True:
        outcome = board.outcome(claim_draw=True)
        if outcome is not None:
            result, termination = outcome.result(), outcome.termination.name.lower()
            break
        if board.ply() - start_board.ply() >= max_plies:
            result, termination = "1/2-1/2", "adjudicated (move limit)"
            break
        mover = board.turn
        side = sides[mover]
        limit = chess.engine.Limit(white_clock=clocks[chess.WHITE], black_clock=clocks[chess.BLACK],
                                   white_inc=inc, black_inc=inc)
        started = time.monotonic()
        try:
            played = side.engine.play(board, limit, game=game_id, info=chess.engine.INFO_ALL)
        except (chess.engine.EngineError, chess.engine.EngineTerminatedError) as error:
            result = "0-1" if mover == chess.WHITE else "1-0"
            termination, loser = f"{side.label} failed: {str(error)[:80]}", side
            break
        used = time.monotonic() - started
        clocks[mover] -= used
        if clocks[mover] < 0:
            result = "0-1" if mover == chess.WHITE else "1-0"
            termination = "time forfeit"
            break
        least[mover] = min(least[mover], clocks[mover])
        clocks[mover] += inc
        if played.move is None or played.move not in board.legal_moves:
            result = "0-1" if mover == chess.WHITE else "1-0"
            termination, loser = f"{side.label} played an illegal move {played.move}", side
            break
        if side is ours:
            info = played.info
            moves_info.append({"ply": board.ply(), "seconds": round(used, 4),
                               "depth": info.get("depth"), "nodes": info.get("nodes"),
                               "score": _score_text(info.get("score"), mover)})
        board.push(played.move)
    game = chess.pgn.Game.from_board(board)
    our_points = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}[result]
    if our_colour == chess.BLACK:
        our_points = 1.0 - our_points
    record = {
        "game": game_id, "our_colour": "white" if our_colour == chess.WHITE else "black",
        "result": result, "points": our_points, "termination": termination,
        "plies": board.ply() - start_board.ply(),
        "our_least_clock": round(least[our_colour], 3),
        "their_least_clock": round(least[not our_colour], 3),
        "our_time_loss": termination == "time forfeit" and board.turn == our_colour,
        "their_time_loss": termination == "time forfeit" and board.turn != our_colour,
        "our_moves": moves_info,
        "crashed": loser.label if loser else None,
    }
    game.headers["Result"] = result
    game.headers["Termination"] = termination
    return game, record


def _write_json(path, obj):
    """Replace ``path`` at once: an interruption never leaves half a record to resume from."""
    with open(path + ".tmp", "w") as f:
        json.dump(obj, f, indent=1)
    os.replace(path + ".tmp", path)


def _score_text(score, mover):
    if score is None:
        return None
    pov = score.pov(mover)
    return f"mate {pov.mate()}" if pov.is_mate() else pov.score()


def _summary(args, games, names):
    wins = sum(g["points"] == 1.0 for g in games)
    draws = sum(g["points"] == 0.5 for g in games)
    losses = sum(g["points"] == 0.0 for g in games)
    elo = estimate(wins, draws, losses)
    depths = [m["depth"] for g in games for m in g["our_moves"] if m["depth"]]
    nodes = [m["nodes"] for g in games for m in g["our_moves"] if m["nodes"]]
    seconds = [m["seconds"] for g in games for m in g["our_moves"]]
    return {
        "name": names["match"], "engine": names["ours"], "opponent": names["theirs"],
        "opponent_options": args.opponent_option, "engine_options": names["our_options"],
        "tc": args.tc, "games_planned": args.games, "games": len(games),
        "wins": wins, "draws": draws, "losses": losses, "score": round(elo.score, 4),
        "elo": None if elo.elo is None else round(elo.elo, 1),
        "elo_low": None if elo.low is None else round(elo.low, 1),
        "elo_high": None if elo.high is None else round(elo.high, 1),
        "elo_bound": elo.bound, "elo_text": elo.text(),
        "our_time_losses": sum(g["our_time_loss"] for g in games),
        "their_time_losses": sum(g["their_time_loss"] for g in games),
        "our_least_clock": min((g["our_least_clock"] for g in games), default=None),
        "our_mean_depth": round(sum(depths) / len(depths), 2) if depths else None,
        "our_mean_nodes_per_move": round(sum(nodes) / len(nodes)) if nodes else None,
        "our_nodes_per_second": round(sum(nodes) / sum(seconds)) if seconds and nodes else None,
        "records": games,
    }


def run(args):
    base, inc = parse_tc(args.tc)
    if args.games < 1:
        raise MatchError(f"--games must be at least 1, got {args.games}")
    if args.max_plies < 1:
        raise MatchError(f"--max-plies must be at least 1, got {args.max_plies}")
    opponent_options = [parse_option(t) for t in args.opponent_option]
    engine_options = [parse_option(t) for t in args.engine_option]
    if args.engine:
        our_command = shlex.split(args.engine)
    else:
        our_command = ENGINE_COMMAND
        engine_options = [("Backend", args.backend), ("Accelerators", str(args.accelerators)),
                          ("HardwarePlies", str(args.hardware_plies))] + engine_options
    their_command = shlex.split(args.opponent)
    if not their_command:
        raise MatchError("--opponent is empty")
    if args.openings:
        try:
            openings = read_openings(args.openings)
        except (OSError, ValueError) as error:
            raise MatchError(str(error)) from None
    else:
        openings = [(name, opening_board(moves)) for name, moves in OPENINGS]
    match_name = args.name or f"vs-{os.path.basename(their_command[0])}-{args.tc}"
    out = args.out or os.path.join("out", f"match-{match_name}.json")
    pgn_path = args.pgn or os.path.splitext(out)[0] + ".pgn"
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    games = []
    if args.resume and os.path.exists(out):
        with open(out) as f:
            games = json.load(f)["records"]
    elif os.path.exists(pgn_path):
        os.remove(pgn_path)

    ours = Side("engine", our_command, engine_options)
    theirs = Side("opponent", their_command, opponent_options)
    ours.start()
    try:
        theirs.start()
    except BaseException:      # whatever stops the opponent's start, our engine is not left running
        ours.stop()
        raise
    names = {"match": match_name, "ours": ours.name, "theirs": theirs.name,
             "our_options": [f"{n}={v}" for n, v in engine_options]}
    try:
        for game_id in range(len(games), args.games):
            name, start = openings[(game_id // 2) % len(openings)]
            our_colour = chess.WHITE if game_id % 2 == 0 else chess.BLACK
            for side in (ours, theirs):
                if side.engine is None:
                    side.start()
            game, record = play_game(ours, theirs, start, our_colour, base, inc,
                                     args.max_plies, game_id)
            record["opening"] = name
            if record["crashed"]:
                (ours if record["crashed"] == "engine" else theirs).stop()
            games.append(record)
            white, black = (ours.name, theirs.name) if our_colour == chess.WHITE \
                else (theirs.name, ours.name)
            game.headers.update({"Event": match_name, "Site": "chessaccel match",
                                 "Date": datetime.date.today().strftime("%Y.%m.%d"),
                                 "Round": str(game_id + 1), "White": white, "Black": black,
                                 "TimeControl": f"{base:g}+{inc:g}", "Opening": name})
            with open(pgn_path, "a") as f:
                print(game, file=f, end="\n\n")
            summary = _summary(args, games, names)
            _write_json(out, summary)
            colour = record["our_colour"]
            print(f"game {game_id + 1}/{args.games}: {ours.name} ({colour}) {record['result']} "
                  f"[{record['termination']}, {record['plies']} plies]  "
                  f"{summary['elo_text']}", file=sys.stderr, flush=True)
    finally:
        ours.stop()
        theirs.stop()
    summary = _summary(args, games, names)
    plot = os.path.splitext(out)[0] + ".png"
    _plot(summary, plot)
    print(f"{ours.name} vs {theirs.name} at {args.tc}: {summary['elo_text']}")
    print(f"time losses: ours {summary['our_time_losses']}, theirs "
          f"{summary['their_time_losses']}; least clock left ours "
          f"{summary['our_least_clock']} s; mean depth {summary['our_mean_depth']}")
    print(f"wrote {out}, {pgn_path} and {plot}")
    return 0


def _plot(summary, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    records = summary["records"]
    if not records:
        return
    points, running, elos, lows, highs = 0.0, [], [], [], []
    wins = draws = losses = 0
    for record in records:
        points += record["points"]
        running.append(points / (len(running) + 1))
        wins += record["points"] == 1.0
        draws += record["points"] == 0.5
        losses += record["points"] == 0.0
        e = estimate(wins, draws, losses)
        elos.append(e.elo)
        lows.append(e.low if e.low is not None else e.elo)
        highs.append(e.high if e.high is not None else e.elo)
    games = range(1, len(records) + 1)
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
    top.plot(games, running)
    top.axhline(0.5, color="grey", linestyle=":")
    top.set_ylabel("score per game")
    top.set_title(f"{summary['engine']} vs {summary['opponent']} at {summary['tc']}: "
                  f"{summary['wins']}-{summary['draws']}-{summary['losses']}\n"
                  f"({' '.join(summary['opponent_options'])})", fontsize=10)
    bottom.plot(games, elos, label="Elo")
    bottom.fill_between(games, lows, highs, alpha=0.3, label="95 %")
    bottom.set_ylabel("Elo difference")
    bottom.set_xlabel("games")
    bottom.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
