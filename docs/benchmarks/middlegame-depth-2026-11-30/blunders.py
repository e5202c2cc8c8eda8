"""Our blunders against stockfish 2200, searched again for longer (2026-11-30).

The 63 blunders of the Xeon record (engine-sf2200-h200cpu-2026-11-30: our moves that lost 150 cp
or more from a position above -300, by stockfish 15.1 at depth 12, review-sf2200-xeon.json), each
position searched cold (ucinewgame) by the engine through UCI on the opencl backend for each
movetime; the move it chooses is scored by stockfish at depth 12 (the loss against the
position's score before it). Run from the repository root on an otherwise idle machine:

    python docs/benchmarks/middlegame-depth-2026-11-30/blunders.py 0.25,2,8 '{"Backend":"opencl","HardwarePlies":3}' OUT.json
"""
import json
import sys

import chess
import chess.engine
import chess.pgn

HERE = "docs/benchmarks/engine-sf2200-h200cpu-2026-11-30/"


def blunders():
    review = json.load(open(HERE + "review-sf2200-xeon.json"))
    games = []
    with open(HERE + "sf2200-xeon.pgn") as f:
        while (g := chess.pgn.read_game(f)):
            games.append(g)
    out = []
    for r in review["reviewed"]:
        g = games[r["game"] - 1]
        b, fens = g.board(), {}
        for i, m in enumerate(g.mainline_moves(), 1):
            fens[i] = b.fen()
            b.push(m)
        for mv in r["moves"]:
            if mv["loss"] >= 150 and mv["before"] > -300:
                out.append(dict(game=r["game"], ply=mv["ply"], fen=fens[mv["ply"]], move=mv["move"],
                                best=mv["best"], before=mv["before"], after=mv["after"]))
    return out


def main():
    times = [float(t) for t in sys.argv[1].split(",")]
    options = json.loads(sys.argv[2])
    bl = blunders()
    engine = chess.engine.SimpleEngine.popen_uci(["chessaccel", "uci"])
    engine.configure(options)
    sf = chess.engine.SimpleEngine.popen_uci("/usr/games/stockfish")
    sf.configure({"Threads": 1, "Hash": 64})
    rows = []
    for o in bl:
        b, row = chess.Board(o["fen"]), dict(o)
        for t in times:
            engine.protocol.send_line("ucinewgame")
            r = engine.play(b, chess.engine.Limit(time=t), info=chess.engine.INFO_ALL)
            mv = r.move.uci()
            if mv == o["move"]:
                loss = o["before"] - o["after"]
            elif mv == o["best"]:
                loss = 0
            else:
                b2 = b.copy()
                b2.push(r.move)
                after = sf.analyse(b2, chess.engine.Limit(depth=12))["score"].pov(b.turn)
                loss = o["before"] - after.score(mate_score=2000)
            row[f"t{t}"] = dict(move=mv, depth=r.info.get("depth"), loss=loss)
        rows.append(row)
        print(o["game"], o["ply"], o["move"], o["best"],
              *[(row[f"t{t}"]["move"], row[f"t{t}"]["depth"], row[f"t{t}"]["loss"]) for t in times],
              flush=True)
    engine.quit()
    sf.quit()
    summary = {}
    for t in times:
        losses = [r[f"t{t}"]["loss"] for r in rows]
        summary[str(t)] = dict(
            same_blunder=sum(r[f"t{t}"]["move"] == r["move"] for r in rows),
            still_150=sum(x >= 150 for x in losses), mean_loss=sum(losses) / len(rows),
            mean_depth=sum(r[f"t{t}"]["depth"] or 0 for r in rows) / len(rows))
        print(t, summary[str(t)])
    json.dump(dict(options=options, positions=len(rows), summary=summary, rows=rows),
              open(sys.argv[3], "w"), indent=1)


if __name__ == "__main__":
    main()
