"""lab/search_profile.py, the search kernel's profiling tool (docs/opencl.md, "Where a
lane's time goes"): its A/B runs on PoCL (results compared with the first run's) and its reading
of Nsight Compute's source page. The CUDA launch needs an NVIDIA GPU and is run only there."""

import numpy as np

from chessaccel.contract.defs import INF
from chessaccel.host.opencl.layout import pack_positions

import suites


def _tool():
    from chessaccel.lab import search_profile
    return search_profile


def test_ab_compares_every_run_with_the_first(tmp_path, capsys, monkeypatch):
    fens = [" ".join(line.split()[:4]) for _, line in suites.suite_lines("wac.epd")[:6]]
    boards = [suites.board_of(f) for f in fens]
    params = np.array([(2, -INF, INF, 0)] * len(boards), dtype=np.int32)
    jobs = tmp_path / "jobs.npz"
    np.savez(jobs, positions=pack_positions(boards), params=params)
    monkeypatch.setenv("PROFILE_PLATFORM", "pocl")
    _tool().ab(str(jobs), "2", ["base="])
    lines = [l for l in capsys.readouterr().out.splitlines() if l.startswith("round")]
    assert len(lines) == 4, lines
    assert all(l.endswith(" same") for l in lines), lines
    assert {l.split()[3].rstrip(":") for l in lines} == {"whole", "split"}


def test_summary_reads_the_source_page(tmp_path, capsys):
    header = ["Address", "Source", "Warp Stall Sampling (All Samples)", "Instructions Executed",
              "Thread Instructions Executed", "Divergent Branches", "Avg. Threads Executed"]
    rows = [("0x0", "IMAD R1, R2, R3", 10, 100, 3200, 0, 32),
            ("0x10", "BSSY B0, 0x40", 10, 100, 3200, 0, 32),
            ("0x20", "@P0 BRA 0x40", 30, 100, 800, 60, 8),
            ("0x30", "LOP3.LUT R1, R1, R2", 50, 100, 400, 0, 4),
            ("0x40", "BSYNC B0", 0, 100, 3200, 0, 32)]
    path = tmp_path / "source.csv"
    with open(path, "w") as f:
        f.write('"Kernel Name","search_jobs",\n')
        f.write(",".join(f'"{h}"' for h in header) + "\n")
        for r in rows:
            f.write(",".join(f'"{v:,}"' if isinstance(v, int) else f'"{v}"' for v in r) + "\n")
    _tool().summary(str(path))
    out = capsys.readouterr().out
    assert "500 warp instructions executed" in out.replace("e+02", "00")
    assert "21.60 lanes per instruction" in out          # 10,800 thread instructions / 500
    block = [l for l in out.splitlines() if l.strip().startswith("1-3")]
    assert block and "90.0%" in block[0], out            # samples of BSSY up to BSYNC
    assert "60 of 100 executions, 8 lanes" in out
