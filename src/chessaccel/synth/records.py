"""The committed synthesis records (synth/records/) and what is derived from them.

Bitstreams and work folders are git-ignored; the small JSON records a build leaves behind are
committed so that the results table (synth/RESULTS.md) can be regenerated on a clean checkout and
so that a later build can choose its clock from a measured Fmax:

    synth/records/blocks/NAME.json      a block alone (python -m chessaccel.synth NAME --records)
    synth/records/boards/BOARD-Nc.json  a board bitstream with N SearchCores (chessaccel synth)
    synth/records/boards/BOARD-NcTt.json  the same with cores of T interleaved threads
    synth/records/bench-rtl.json        chessaccel bench --backend rtl --json (cycles per node)

docs/synthesis.md documents the fields; other tools (the cross-backend benchmark) read them, so
keys are only ever added, never renamed.
"""

import json
import math
from pathlib import Path

__all__ = ["RECORDS", "RECORD_VERSION", "block_record_path", "board_record_path",
           "bench_record_path", "board_layout", "core_block", "load", "core_cost",
           "cycles_per_node", "fit_estimate",
           "write_record"]

#: Where the committed records live (the repository's synth/records).
RECORDS = Path(__file__).resolve().parent / "records"
#: Bumped only when a key changes meaning (keys are added freely).
RECORD_VERSION = 1


def block_record_path(name, records=RECORDS):
    return Path(records) / "blocks" / f"{name}.json"


def board_layout(cores, threads=1):
    """``3c`` (three plain cores) or ``3c2t`` (three cores of two threads): the name of a
    board's core layout in record and build folder names."""
    return f"{cores}c" if threads == 1 else f"{cores}c{threads}t"


def board_record_path(board, cores, records=RECORDS, threads=1):
    return Path(records) / "boards" / f"{board}-{board_layout(cores, threads)}.json"


def core_block(threads=1):
    """The synthesis block (synth/registry.py) of a SearchCore of ``threads`` threads."""
    return "searchcore" if threads == 1 else f"searchcore{threads}"


def bench_record_path(records=RECORDS):
    return Path(records) / "bench-rtl.json"


def load(path):
    """The record at ``path``, or None when there is none (or it is not valid JSON)."""
    try:
        return json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None


def write_record(record, path):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=2, sort_keys=False) + "\n")
    return path


def core_cost(records=RECORDS, threads=1):
    """Logic cells of one SearchCore (of ``threads`` threads) and of the link alone, from the
    block records.

    Returns ``{"core_comb": ..., "link_comb": ..., "core_fmax_mhz": ..., "source": ...}`` or None
    when the SearchCore record is missing. ``comb`` counts what nextpnr places as TRELLIS_COMB
    (a LUT4 each, and two per CCU2C carry cell), the unit the device capacity is given in.
    """
    core = load(block_record_path(core_block(threads), records))
    if core is None:
        return None
    own = core.get("block_only") or core["total"]
    link = load(block_record_path("boardtop-nocore", records))
    link_comb = None
    if link is not None:
        link_own = link.get("block_only") or link["total"]
        link_comb = link_own["lut4"] + 2 * link_own["carry"]
    return {"core_comb": own["lut4"] + 2 * own["carry"], "core_lut4": own["lut4"],
            "link_comb": link_comb, "core_fmax_mhz": min(core["fmax_mhz"].values()),
            "source": str(block_record_path(core_block(threads), records))}


def fit_estimate(cores, capacity, records=RECORDS, link_default=700, threads=1):
    """Estimated logic cells and utilisation of ``cores`` SearchCores plus the link.

    Returns ``(cells, fraction, cost)`` with ``cost`` from ``core_cost`` (None without a record,
    in which case nothing can be estimated and ``(None, None, None)`` is returned).
    """
    cost = core_cost(records, threads)
    if cost is None:
        return None, None, None
    link = cost["link_comb"] if cost["link_comb"] is not None else link_default
    cells = link + cores * cost["core_comb"]
    return cells, cells / capacity, cost


def cycles_per_node(records=RECORDS):
    """Mean cycles per node of the RTL bench record (sum of cycles / sum of nodes), or None."""
    bench = load(bench_record_path(records))
    if not bench:
        return None
    value = bench.get("cycles_per_node")
    return value if value is not None and math.isfinite(value) else None
