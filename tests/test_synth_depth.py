"""synth/depth.py: logic depth between registers, on small hand-made netlists (no Yosys)."""

from chessaccel.synth.depth import CARRY_ENTRY, CARRY_STEP, netlist_depths, report


def _cell(kind, inputs, outputs):
    connections = {**inputs, **outputs}
    directions = {**{p: "input" for p in inputs}, **{p: "output" for p in outputs}}
    return {"type": kind, "connections": connections, "port_directions": directions}


def _netlist(cells, names):
    return {"modules": {"top": {
        "cells": cells,
        "netnames": {name: {"bits": bits} for name, bits in names.items()}}}}


def test_levels_are_counted_from_register_to_register_and_named_signals_kept():
    # ff_a -> LUT -> LUT -> PFUMX -> ff_b ; ff_a -> LUT -> ff_c
    cells = {
        "ff_a": _cell("TRELLIS_FF", {"DI": [100]}, {"Q": [1]}),
        "l1": _cell("LUT4", {"A": [1]}, {"Z": [2]}),
        "l2": _cell("LUT4", {"A": [2], "B": [1]}, {"Z": [3]}),
        "mux": _cell("PFUMX", {"ALUT": [3], "BLUT": [2], "C0": [1]}, {"Z": [4]}),
        "ff_b": _cell("TRELLIS_FF", {"DI": [4]}, {"Q": [5]}),
        "l3": _cell("LUT4", {"A": [1]}, {"Z": [6]}),
        "ff_c": _cell("TRELLIS_FF", {"DI": [6]}, {"Q": [7]}),
    }
    names = {"state": [1], "middle": [3], "next_b": [4], "next_c": [6],
             "l2_LUT4_Z": [3], "$auto$1": [2]}
    endpoints, named = netlist_depths(_netlist(cells, names))
    assert [(round(d, 2), cell) for d, cell, _, _ in endpoints[:2]] == [(2.2, "ff_b"),
                                                                        (1.0, "ff_c")]
    assert named == {"middle": 2.0, "next_b": 2.2, "next_c": 1.0}
    lines = report(endpoints, named, top=1)
    assert lines[1].split() == ["2.2", "next_b", "(DI)"]


def test_a_carry_chain_costs_its_entry_and_a_little_per_cell():
    cells = {
        "ff": _cell("TRELLIS_FF", {"DI": [50]}, {"Q": [1]}),
        "c0": _cell("CCU2C", {"A0": [1], "CIN": []}, {"COUT": [2], "S0": [3]}),
        "c1": _cell("CCU2C", {"A0": [1], "CIN": [2]}, {"COUT": [4], "S0": [5]}),
        "c2": _cell("CCU2C", {"A0": [1], "CIN": [4]}, {"COUT": [6], "S0": [7]}),
        "out": _cell("TRELLIS_FF", {"DI": [7]}, {"Q": [8]}),
    }
    endpoints, _ = netlist_depths(_netlist(cells, {"sum": [7]}))
    assert round(endpoints[0][0], 2) == round(CARRY_ENTRY + 2 * CARRY_STEP, 2)
