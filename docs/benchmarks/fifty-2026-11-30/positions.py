"""The positions of the fifty-move probe: from the games against stockfish 2200 that the engine
drew after it stood 250 cp or more ahead, its first position in such a game where it stood
that far ahead with the fifty-move counter at 16 or more (a won position being shuffled), as
FEN lines for `chessaccel match --openings`. Run from the repository root:

    python docs/benchmarks/fifty-2026-11-30/positions.py > docs/benchmarks/fifty-2026-11-30/positions.epd
"""
import gzip
import json

import chess
import chess.pgn

RECORDS = ["docs/benchmarks/engine-pocl-2026-11-30/sf2200-chain-auto",
           "docs/benchmarks/engine-sf2200-chain-h200cpu-2026-11-30/sf2200-chain-hp1",
           "docs/benchmarks/engine-sf2200-chain-h200cpu-2026-11-30/sf2200-chain-hp2",
           "docs/benchmarks/engine-sf2200-hp-h200cpu-2026-11-30/sf2200-hp2",
           "docs/benchmarks/engine-sf2200-hp-h200cpu-2026-11-30/sf2200-hp3"]
AHEAD, COUNTER = 250, 16

for record in RECORDS:
    games = json.load(gzip.open(record + ".json.gz"))["records"]
    with open(record + ".pgn") as pgn:
        for game in games:
            played = chess.pgn.read_game(pgn)
            if game["points"] != 0.5:
                continue
            scores = {m["ply"]: m["score"] for m in game["our_moves"] if isinstance(m["score"], int)}
            board = played.board()
            for ply, move in enumerate(played.mainline_moves()):
                if scores.get(ply, -1) >= AHEAD and board.halfmove_clock >= COUNTER:
                    print(f"{board.fen()} ; {record.split('/')[-1]} game {game['game']} ply {ply}")
                    break
                board.push(move)
