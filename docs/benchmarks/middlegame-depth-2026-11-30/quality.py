"""Move quality at a game's pace (2026-11-30): middlegame positions of our games against
stockfish 2200 (engine-pocl-2026-11-30/sf2200-inline.pgn; plies 21-60 with us to move, two drawn
from each game, seed 7), each searched by the engine through UCI after the position of our move
before it (a warm table, as in a game), for each named option set; the move chosen is scored by
stockfish 15.1 at depth 12 against stockfish's own move at depth 12 (the loss, 0 at best).
Run from the repository root on an otherwise idle machine:

    python docs/benchmarks/middlegame-depth-2026-11-30/quality.py \
        '{"hp3":{"Backend":"opencl","HardwarePlies":3},"hp2":{"Backend":"opencl","HardwarePlies":2}}' \
        0.2 150 OUT.json
"""
import json
import random
import statistics as st
import sys

import chess
import chess.engine
import chess.pgn

GAMES = "docs/benchmarks/engine-pocl-2026-11-30/sf2200-inline.pgn"


def positions(n):
    """(our previous position, the position) pairs, two a game, shuffled, the first n."""
    games = []
    with open(GAMES) as f:
        while (g := chess.pgn.read_game(f)):
            games.append(g)
    rnd, pairs = random.Random(7), []
    for g in games:
        ours = chess.WHITE if g.headers["White"].startswith("chessaccel") else chess.BLACK
        b, history = g.board(), []
        for i, m in enumerate(g.mainline_moves(), 1):
            if b.turn == ours:
                history.append((i, b.copy()))
            b.push(m)
        candidates = [(history[k - 1][1], history[k][1]) for k in range(1, len(history))
                      if 21 <= history[k][0] <= 60]
        pairs += rnd.sample(candidates, min(2, len(candidates)))
    rnd.shuffle(pairs)
    return pairs[:n]


def main():
    configs, movetime, n, out = json.loads(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    pairs = positions(n)
    sf = chess.engine.SimpleEngine.popen_uci("/usr/games/stockfish")
    sf.configure({"Threads": 1, "Hash": 32})
    cache = {}

    def after(board, move):     # stockfish's score after the move, from the mover's side
        key = (board.fen(), move.uci())
        if key not in cache:
            child = board.copy()
            child.push(move)
            if child.is_checkmate():
                cache[key] = 2000
            else:
                sf.protocol.send_line("ucinewgame")
                score = sf.analyse(child, chess.engine.Limit(depth=12))["score"].relative
                cache[key] = -score.score(mate_score=2000)
        return cache[key]

    best = []
    for _, board in pairs:
        sf.protocol.send_line("ucinewgame")
        best.append(after(board, sf.play(board, chess.engine.Limit(depth=12)).move))
    results = {}
    for name, options in configs.items():
        engine = chess.engine.SimpleEngine.popen_uci(["chessaccel", "uci"])
        engine.configure(options)
        losses, depths = [], []
        for (previous, board), value in zip(pairs, best):
            engine.protocol.send_line("ucinewgame")
            engine.play(previous, chess.engine.Limit(time=movetime))
            r = engine.play(board, chess.engine.Limit(time=movetime), info=chess.engine.INFO_ALL)
            losses.append(max(0, value - after(board, r.move)))
            depths.append(r.info.get("depth", 0))
        engine.quit()
        results[name] = dict(opts=options, mean_loss=st.mean(losses),
                             blunders=sum(x >= 150 for x in losses), mean_depth=st.mean(depths),
                             losses=losses, depths=depths)
        print(name, "mean loss", round(st.mean(losses), 1), "blunders", results[name]["blunders"],
              "of", len(losses), "mean depth", round(st.mean(depths), 2), flush=True)
    sf.quit()
    json.dump(dict(movetime=movetime, positions=[b.fen() for _, b in pairs], results=results),
              open(out, "w"))


if __name__ == "__main__":
    main()
