"""lab/perftpeer.py: our OpenCL perft beside perft_gpu. perft_gpu needs nvcc and a CUDA GPU,
which this machine lacks: its output is parsed from a real run (tests/data), our side is
counted on PoCL, and every way the command can be misused gives one line and status 2."""

import json
from pathlib import Path

import pytest

from chessaccel.lab import perftpeer

DATA = Path(__file__).parent / "data"
PUBLISHED_START = [20, 400, 8902, 197281, 4865609, 119060324, 3195901860, 84998978956]


def test_perft_gpus_output_is_read_depth_by_depth():
    counts = perftpeer.parse_peer_output((DATA / "perft_gpu-startpos-8.txt").read_text())
    assert [counts[d][0] for d in range(1, 9)] == PUBLISHED_START
    assert counts[8][1] == pytest.approx(0.139184) and counts[1][1] == pytest.approx(1.21e-06)
    assert perftpeer.parse_peer_output("No CUDA GPUs found. Exiting.\n") == {}


def test_roots_and_suites_parse_and_bad_ones_are_named():
    name, fen, depths, published = perftpeer.parse_root("kiwipete:7,6")
    assert name == "kiwipete" and depths == [6, 7] and published[7] == 374190009323
    name, fen, depths, published = perftpeer.parse_root("4k3/8/8/8/8/8/8/4K2R w K - 0 1:3")
    assert fen == "4k3/8/8/8/8/8/8/4K2R w K - 0 1" and depths == [3] and published == {}
    for bad, message in (("startpos", "expected NAME:DEPTH"), ("startpos:0", "depths >= 1"),
                         ("nope:3", "malformed FEN")):
        with pytest.raises(ValueError, match=message):
            perftpeer.parse_root(bad)
    roots = perftpeer.suite_roots(DATA / "perftsuite.epd", 4)
    lines = [line for line in (DATA / "perftsuite.epd").read_text().splitlines() if line.strip()]
    assert len(roots) == len(lines)
    first = roots[0]
    assert first[2] == [4] and first[3] == {4: 197281}


def test_a_malformed_suite_line_is_named(tmp_path):
    suite = tmp_path / "bad.epd"
    suite.write_text("8/8/8/8/8/8/8/K1k5 w - - 0 1 ;D1 3 ;depth two 9\n")
    with pytest.raises(ValueError, match=r"bad.epd:1: 'depth two 9' is not 'D<depth> <count>'"):
        perftpeer.suite_roots(suite, 3)


@pytest.mark.parametrize("argv, message", [
    ([], "--peer-source DIR is needed"),
    (["--peer-source", "/no/such/folder"], "--peer-source /no/such/folder: no such folder"),
    (["--peer-source", "{empty}"], "is not a perft_gpu checkout: perft.cu, perft_kernels.cu"),
    (["--peer-source", "{sources}", "--nvcc", "no-such-nvcc"], "no-such-nvcc not found"),
    (["--peer-source", "{sources}", "--root", "startpos:x"], "expected NAME:DEPTH"),
    (["--peer-source", "{sources}", "--suite", "/no/such.epd"], "cannot read /no/such.epd"),
    (["--peer-source", "{sources}", "--runs", "0"], "--runs must be at least 1"),
    (["--render-only", "/no/such.json"], "cannot read /no/such.json"),
])
def test_misuse_is_one_line_and_status_2(capsys, tmp_path, argv, message):
    (tmp_path / "empty").mkdir()
    (tmp_path / "sources").mkdir()
    for name in perftpeer.PEER_SOURCES:
        (tmp_path / "sources" / name).write_text("")
    argv = [a.format(empty=tmp_path / "empty", sources=tmp_path / "sources") for a in argv]
    assert perftpeer.main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("perftpeer: error: ") and message in err, err


def test_the_table_sets_the_fastest_runs_side_by_side(tmp_path, capsys):
    rows = [{"root": "startpos", "depth": 8, "leaves": 84998978956, "ours_best": 0.25,
             "theirs_best": 0.125, "ours_process_seconds": 1.5, "theirs_process_seconds": 0.4},
            {"root": "suite 1", "depth": 5, "leaves": 4000, "ours_best": 0.002,
             "theirs_best": 0.001},
            {"root": "suite 2", "depth": 4, "leaves": 6000, "ours_best": 0.002,
             "theirs_best": 0.004}]
    record = {"device": "a GPU", "ours_commit": "abc1234", "peer_commit": "cb18c41",
              "peer_digest": "0" * 16, "rows": rows}
    (tmp_path / "perftpeer.json").write_text(json.dumps(record))
    assert perftpeer.main(["--render-only", str(tmp_path / "perftpeer.json")]) == 0
    text = (tmp_path / "perftpeer.md").read_text()
    assert "| startpos | 8 | 84,998,978,956 | 0.2500 | 340.0 | 0.1250 | 680.0 | 0.50x |" in text
    # the suite as one row: 10,000 leaves in 0.004 s against 0.005 s
    assert "| perft suite (2 positions) | ≤ 5 | 10,000 | 0.0040 | 0.0 | 0.0050 | 0.0 | 1.25x |" \
        in text
    assert "| startpos | 8 | 1.500 | 0.400 |" in text
    assert text in capsys.readouterr().out


def test_our_side_counts_on_pocl_and_times_each_depth():
    """measure() with our backend on PoCL; the peer's counts come from a perft_gpu output
    file replayed by a stand-in (the real program needs CUDA)."""
    pytest.importorskip("pyopencl")
    from chessaccel.host.backends import get_backend
    backend = get_backend("opencl")
    start = perftpeer.parse_root("startpos:3,4")
    rows = perftpeer.measure(None, backend, [start], 2, progress=lambda line: None,
                             peer=lambda fen, depth: perftpeer.parse_peer_output(
                                 (DATA / "perft_gpu-startpos-8.txt").read_text()))
    assert [(r["depth"], r["leaves"], r["ours_correct"], r["theirs_correct"]) for r in rows] == \
        [(3, 8902, True, True), (4, 197281, True, True)]
    assert all(len(r["ours_seconds"]) == 2 and r["ours_best"] == min(r["ours_seconds"])
               for r in rows)
