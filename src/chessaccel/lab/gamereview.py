"""What loses a match's games: every move of one player scored by a stronger engine before and
after it, and what the player did with its castling rights.

    python -m chessaccel.lab.gamereview GAMES.pgn [...] [--player chessaccel]
        [--engine /usr/games/stockfish] [--depth 12] [--workers 2] [--no-engine]
        [--out out/gamereview.json]
    python -m chessaccel.lab.gamereview --from-json RECORD.json --out RECORD.json

For each move of ``--player`` (by the PGN's White / Black tags) the engine's score of the
position before the move and after it, both from the player's view, at ``--depth``; the move's
loss is the drop, with scores clamped to +-1,000 cp (a mate is 3,000 before the clamp) so that
a lost game's last moves do not swamp the sums. Summed up per phase (plies 1-20, 21-40, ...,
81-100, 101 on): the mean loss of the moves made from a position within +-400 cp, and the
blunders (a loss of at least 150 cp from a position not already lost, above -300 cp); per game,
the first move that lost at least 100 cp from a position above -200 cp, with its position and
the engine's move. Castling, for both players over each game's first 80 plies: what first took
a right away (it castled, the king moved, or a rook moved or was taken while the king stayed),
or none did. ``--workers`` engines review games side by side (one process each); ``--no-engine``
gives the castling table alone (no engine needed); ``--from-json`` sums up and draws an earlier
record again. Writes the JSON record and a chart of the mean loss per phase beside it; prints a
summary. docs/engine.md ("What the games against stockfish show") has what it found.
"""
import argparse
import io
import json
import os
import sys
from collections import Counter
from concurrent.futures import ProcessPoolExecutor

import chess
import chess.engine
import chess.pgn

from chessaccel.host.cli import EXIT_SIGPIPE
from chessaccel.host.tune import TuneError, _read_games
from chessaccel.lab.record import write_record

__all__ = ["castling_fates", "review_game", "summary", "main", "FATES"]

#: What a player did with its castling rights in a game's first PLIES_WATCHED plies.
FATES = ("castled", "king moved", "a rook's right lost first", "kept")
PLIES_WATCHED = 80
CLAMP = 1000
MATE = 3000
PHASE_PLIES = 20
#: Plies past PHASES * PHASE_PLIES form one last phase (long endings: few moves, little lost).
PHASES = 5
BLUNDER = 150
FIRST_LOSS = 100


class ReviewError(ValueError):
    """A PGN that cannot be read or holds no game of the player."""


def read_games(paths):
    """Every game of the PGN files, finished or not, read as `chessaccel tune` reads them (one
    line for a file that cannot be read or is not PGN)."""
    try:
        games, _ = _read_games(paths, finished_only=False)
    except TuneError as e:
        raise ReviewError(str(e)) from None
    return [game for *_, game in games]


def castling_fates(game):
    """{colour: fate} over the game's first PLIES_WATCHED plies: the first thing that took a
    castling right from the side (FATES): it castled, its king moved, or a rook of its moved or
    was taken while the king stayed (the right of that side lost first; the other may remain);
    "kept" when nothing did, or the side held no right to begin with."""
    board = game.board()
    fates = {}
    for move in game.mainline_moves():
        if board.ply() >= PLIES_WATCHED or len(fates) == 2:
            break
        side = board.turn
        if side not in fates and board.has_castling_rights(side):
            if board.is_castling(move):
                fates[side] = "castled"
            elif board.piece_type_at(move.from_square) == chess.KING:
                fates[side] = "king moved"
        rights = {c: (board.has_kingside_castling_rights(c), board.has_queenside_castling_rights(c))
                  for c in chess.COLORS if c not in fates}
        board.push(move)
        for colour, held in rights.items():
            if colour not in fates and held != (board.has_kingside_castling_rights(colour),
                                                board.has_queenside_castling_rights(colour)):
                fates[colour] = "a rook's right lost first"
    return {colour: fates.get(colour, "kept") for colour in chess.COLORS}


def _cp(score, colour):
    return max(-CLAMP, min(CLAMP, score.pov(colour).score(mate_score=MATE)))


def review_game(game, colour, engine, depth):
    """One row per move of ``colour``: ply (after the move), the move and the engine's move
    (UCI), the scores before and after from the mover's view, the loss, and the FEN before the
    move where it lost FIRST_LOSS or more (the positions a person looks at)."""
    rows = []
    board = game.board()
    limit = chess.engine.Limit(depth=depth)
    for move in game.mainline_moves():
        if board.turn == colour:
            before = engine.analyse(board, limit)
            fen, best = board.fen(), before.get("pv", [None])[0]
            board.push(move)
            if board.is_game_over():
                outcome = board.outcome()
                after = 0 if outcome.winner is None else (CLAMP if outcome.winner == colour
                                                          else -CLAMP)
            else:
                after = _cp(engine.analyse(board, limit)["score"], colour)
            cp_before = _cp(before["score"], colour)
            row = {"ply": board.ply(), "move": move.uci(), "best": best.uci() if best else None,
                   "before": cp_before, "after": after, "loss": cp_before - after}
            if row["loss"] >= FIRST_LOSS:
                row["fen"] = fen
            rows.append(row)
        else:
            board.push(move)
    return rows


def _review_worker(job):
    """One game in a worker process: (PGN text, colour, engine command, depth) -> rows."""
    text, colour, command, depth = job
    game = chess.pgn.read_game(io.StringIO(text))
    engine = chess.engine.SimpleEngine.popen_uci(command)
    try:
        return review_game(game, colour, engine, depth)
    finally:
        engine.quit()


def summary(games):
    """The phase table, the blunders and each game's first real loss (see the module)."""
    phases = {}
    blunders = 0
    firsts = []
    for game in games:
        first = None
        for row in game["moves"]:
            phase = min((row["ply"] - 1) // PHASE_PLIES, PHASES)
            label = (f"{phase * PHASE_PLIES + 1}-{(phase + 1) * PHASE_PLIES}" if phase < PHASES
                     else f"{PHASES * PHASE_PLIES + 1}+")
            p = phases.setdefault(phase, {"plies": label, "moves": 0, "loss_sum": 0,
                                          "blunders": 0})
            if abs(row["before"]) <= 400:
                p["moves"] += 1
                p["loss_sum"] += max(row["loss"], 0)
            if row["loss"] >= BLUNDER and row["before"] > -300:
                p["blunders"] += 1
                blunders += 1
            if first is None and row["loss"] >= FIRST_LOSS and row["before"] > -200:
                first = dict(row, game=game["game"])
        if first:
            firsts.append(first)
    table = []
    for phase in sorted(phases):
        p = phases[phase]
        table.append({"plies": p["plies"], "moves": p["moves"], "blunders": p["blunders"],
                      "mean_loss": round(p["loss_sum"] / p["moves"], 1) if p["moves"] else None})
    return {"phases": table, "blunders": blunders, "first_losses": firsts}


def _draw(record, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    phases = [p for p in record["summary"]["phases"] if p["mean_loss"] is not None]
    fig, ax = plt.subplots(figsize=(7, 3.5))
    ax.bar([p["plies"] for p in phases], [p["mean_loss"] for p in phases], color="#4878a8")
    for i, p in enumerate(phases):
        ax.annotate(f"{p['blunders']} blunders", (i, p["mean_loss"]), ha="center",
                    va="bottom", fontsize=7)
    ax.set_xlabel("plies")
    ax.set_ylabel("mean loss a move, cp")
    ax.set_title(f"{record['player']}: {record['games']} games, {record['engine']} depth "
                 f"{record['depth']}", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m chessaccel.lab.gamereview",
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("pgn", nargs="*")
    ap.add_argument("--player", default="chessaccel")
    ap.add_argument("--engine", default="/usr/games/stockfish")
    ap.add_argument("--depth", type=int, default=12)
    ap.add_argument("--workers", type=int, default=1, help="engines side by side (default 1)")
    ap.add_argument("--no-engine", action="store_true", help="the castling table alone")
    ap.add_argument("--from-json", metavar="RECORD",
                    help="sum up and draw an earlier record's reviewed moves again (no engine, "
                         "no PGN read); written to --out")
    ap.add_argument("--out", default="out/gamereview.json")
    args = ap.parse_args(argv)
    if not 1 <= args.depth <= 40:
        print(f"gamereview: --depth must be 1..40, got {args.depth}", file=sys.stderr)
        return 2
    if not 1 <= args.workers <= 64:
        print(f"gamereview: --workers must be 1..64, got {args.workers}", file=sys.stderr)
        return 2
    if args.from_json:
        return _again(args.from_json, args.out)
    if not args.pgn:
        print("gamereview: name the PGN files (or --from-json RECORD)", file=sys.stderr)
        return 2
    try:
        games = read_games(args.pgn)
        ours = [(g, chess.WHITE if g.headers.get("White") == args.player else chess.BLACK)
                for g in games if args.player in (g.headers.get("White"), g.headers.get("Black"))]
        if not ours:
            raise ReviewError(f"no game of {args.player!r} in {', '.join(args.pgn)}")
    except ReviewError as e:
        print(f"gamereview: {e}", file=sys.stderr)
        return 2
    fates = Counter()
    for game, colour in ours:
        for side, fate in castling_fates(game).items():
            fates[("player" if side == colour else "opponent", fate)] += 1
    record = {"player": args.player, "pgn": args.pgn, "games": len(ours),
              "engine": None if args.no_engine else args.engine, "depth": args.depth,
              "castling": {who: {fate: fates[(who, fate)] for fate in FATES}
                           for who in ("player", "opponent")}}
    if not args.no_engine:
        try:
            chess.engine.SimpleEngine.popen_uci(args.engine).quit()
        except (OSError, chess.engine.EngineError) as e:
            print(f"gamereview: cannot start the engine {args.engine}: {e}", file=sys.stderr)
            return 2
        jobs = [(str(game), colour, args.engine, args.depth) for game, colour in ours]
        reviewed = []
        with ProcessPoolExecutor(args.workers) as pool:
            for index, rows in enumerate(pool.map(_review_worker, jobs), 1):
                game, colour = ours[index - 1]
                reviewed.append({"game": index, "result": game.headers.get("Result"),
                                 "colour": "white" if colour else "black", "moves": rows})
                print(f"game {index}/{len(ours)} reviewed", file=sys.stderr, flush=True)
        record["reviewed"] = reviewed
        record["summary"] = summary(reviewed)
    return _report(record, args.out)


def _again(path, out):
    """--from-json: the record's summary and chart made again from its reviewed moves (the FEN
    of a move that lost less than FIRST_LOSS is dropped)."""
    try:
        with open(path) as f:
            record = json.load(f)
        reviewed = record["reviewed"]
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"gamereview: {path} is not a review record with reviewed moves ({e})",
              file=sys.stderr)
        return 2
    for game in reviewed:
        for row in game["moves"]:
            if row["loss"] < FIRST_LOSS:
                row.pop("fen", None)
    record["summary"] = summary(reviewed)
    return _report(record, out)


def _report(record, out):
    """Print the record's tables and write it (with its chart when moves were reviewed)."""
    for who, row in record["castling"].items():
        print(f"castling, {who}: " + ", ".join(f"{fate} {n}" for fate, n in row.items()))
    if "summary" in record:
        for p in record["summary"]["phases"]:
            print(f"plies {p['plies']}: {p['moves']} moves within 400 cp, mean loss "
                  f"{p['mean_loss']} cp, {p['blunders']} blunders")
        print(f"first losses of {FIRST_LOSS} cp or more: "
              f"{len(record['summary']['first_losses'])} games")
        out, plot = write_record(record, out, None, out, _draw, None)
        print(f"wrote {out} and {plot}")
    else:
        os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
        with open(out, "w") as f:
            json.dump(record, f)
        print(f"wrote {out}")
    return 0


def _quiet_main():
    """main, stopping quietly when the reader of its output goes away (`... | head`), as the
    command line does (host/cli.py)."""
    try:
        return main()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_SIGPIPE


if __name__ == "__main__":
    sys.exit(_quiet_main())
