"""The gate-level check (sim/gatelevel.py): the SearchCore netlist that synth_ecp5 maps to ECP5
cells, simulated with Yosys' cell models under Verilator, equals the model and the RTL on every
job. Long: the synthesis and the Verilator build of the mapped netlist take many CPU minutes
(cached afterwards; the jobs themselves then take about half a minute). `make gate-check` runs
the same check from the command line.
"""

import pytest

from chessaccel.synth.gatelevel import MULT18X18D_MODEL, compare, default_jobs
from chessaccel.sim.rtl_search import verilator_missing
from chessaccel.synth import toolchain_problem

#: At least this many jobs (issue 11): score, best move and nodes against the model.
GATE_JOBS = 24


def test_default_jobs_cover_depths_and_windows():
    jobs = default_jobs(GATE_JOBS)
    assert len(jobs) == GATE_JOBS
    assert {depth for _, _, depth, _, _ in jobs} == {1, 2}
    assert len({(alpha, beta) for _, _, _, alpha, beta in jobs}) >= 3


def test_multiplier_model_is_the_combinational_configuration():
    # Only the ports Yosys' dsp_map_18x18.v connects: a parameter or register port in the
    # netlist then fails the Verilator build instead of being simulated wrongly.
    assert "parameter" not in MULT18X18D_MODEL and "CLK0" not in MULT18X18D_MODEL
    assert "input SIGNEDA, SIGNEDB" in MULT18X18D_MODEL


@pytest.mark.long
@pytest.mark.synth
@pytest.mark.skipif(toolchain_problem() is not None or verilator_missing() is not None,
                    reason=f"needs YoWASP Yosys and Verilator: "
                           f"{toolchain_problem() or verilator_missing()}")
@pytest.mark.parametrize("threads", (1, 2), ids=("1-thread", "2-threads"))
def test_gate_level_core_equals_the_model_and_the_rtl(threads):
    problems, count, cycles = compare(default_jobs(GATE_JOBS), progress=print, threads=threads)
    assert count == GATE_JOBS and cycles > 0
    assert not problems, "\n".join(problems)
