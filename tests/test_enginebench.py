"""lab/enginebench.py: the engine through UCI at a fixed time a move, configurations side by
side."""

import chess
import pytest

from chessaccel.contract.bench import BENCH
from chessaccel.lab import enginebench


def test_configurations_parse_and_bad_ones_are_named():
    assert enginebench.parse_config("gpu:Backend=opencl:NVIDIA,Threads=8") == \
        ("gpu", {"Backend": "opencl:NVIDIA", "Threads": "8"})
    assert enginebench.parse_config("plain:") == ("plain", {})
    for bad in ("noname", ":Backend=model", "x:Threads"):
        with pytest.raises(ValueError, match="configuration"):
            enginebench.parse_config(bad)


def test_a_configuration_is_searched_through_uci(tmp_path):
    positions = [BENCH[0], BENCH[2]]    # the start and a sparse ending: depth 1 in 0.4 s
    rows = enginebench.run_config("model", {"Backend": "model", "HardwarePlies": "1"}, 400,
                                  positions, progress=lambda line: None)
    for row, job in zip(rows, positions):
        assert chess.Move.from_uci(row["bestmove"]) in chess.Board(job.fen).legal_moves
        assert row["depth"] >= 1 and row["nodes"] > 0 and not row["errors"]
        assert sorted(row["time_to_depth"]) == list(range(1, row["depth"] + 1))
    summary = enginebench.summary(rows)
    assert summary["mean_depth"] >= 1 and summary["mean_used_nps"] > 0


def test_an_option_the_engine_refuses_fails_the_run(capsys, tmp_path):
    assert enginebench.main(["--config", "bad:Threads=0", "--movetime", "100", "--positions", "1",
                             "--out", str(tmp_path / "eb.json")]) == 1
    assert "option Threads value 0 out of range" in capsys.readouterr().err
