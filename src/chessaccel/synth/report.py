"""Combined records of several blocks: one JSON summary, a bar chart of LUTs per block, and the
Markdown table of block figures (as in docs/journal/synthesis.md, 2026-11-22; ``python -m
chessaccel.synth.report out/synth/*.json``)."""

import json
from pathlib import Path

__all__ = ["combine", "write_summary", "plot_luts", "markdown_table"]

#: Bar colours of the chart: a block that meets the target clock, and one that does not.
MET_COLOUR, MISSED_COLOUR = "#4a7ab5", "#c0504d"


def combine(records, unavailable):
    """The summary of a multi-block run: per-block figures plus the blocks that could not run.

    ``records`` are ``synthesise_block`` records; ``unavailable`` maps a block name to the reason
    it was skipped.
    """
    blocks = {}
    for record in records:
        own = record.get("block_only", record["total"])
        blocks[record["block"]] = {
            "class": record["class"],
            "lut4": own["lut4"],
            "ff": own["ff"],
            "carry": own["carry"],
            "dp16kd": own["dp16kd"],
            "mult18x18d": own["mult18x18d"],
            "total_lut4": record["total"]["lut4"],
            "total_ff": record["total"]["ff"],
            "harness_lut4": record.get("harness", {}).get("lut4"),
            "harness_ff": record.get("harness", {}).get("ff"),
            "fmax_mhz": min(record["fmax_mhz"].values()) if record["fmax_mhz"] else None,
            "timing_met": record["timing_met"],
            "logic_levels": (record.get("critical_path") or {}).get("logic_levels"),
        }
    options = records[0]["options"] if records else None
    return {"options": options, "tools": records[0]["tools"] if records else None,
            "own_figures": "block alone (total minus the harness baseline)"
                           if records and "block_only" in records[0] else "total with harness",
            "blocks": blocks, "unavailable": unavailable}


def write_summary(summary, path):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(summary, indent=2) + "\n")


def plot_luts(summary, path):
    """Bar chart of each block's own LUT4 count, its Fmax written above the bar."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(summary["blocks"])
    luts = [summary["blocks"][n]["lut4"] for n in names]
    options = summary["options"] or {}
    figure, axes = plt.subplots(figsize=(max(4.0, 1.1 * len(names) + 2), 4.0))
    met = [summary["blocks"][n]["timing_met"] for n in names]
    bars = axes.bar(names, luts, color=[MET_COLOUR if ok else MISSED_COLOUR for ok in met])
    from matplotlib.patches import Patch
    axes.legend(handles=[Patch(color=MET_COLOUR, label="target clock met"),
                         Patch(color=MISSED_COLOUR, label="target clock missed")],
                loc="upper left", fontsize=8)
    for bar, name in zip(bars, names):
        fmax = summary["blocks"][name]["fmax_mhz"]
        label = f"{bar.get_height():,}\n{fmax:.0f} MHz" if fmax else f"{bar.get_height():,}"
        axes.annotate(label, (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                      ha="center", va="bottom", fontsize=8)
    axes.set_ylabel("LUT4 (block alone)")
    axes.set_ylim(0, max(luts + [1]) * 1.25)
    axes.set_title(f"LUT4 per block, {options.get('device', '?')}-{options.get('speed', '?')}, "
                   f"target {options.get('freq_mhz', '?')} MHz", fontsize=10)
    if summary["unavailable"]:
        axes.text(0.99, 0.97, "not yet available: " + ", ".join(summary["unavailable"]),
                  transform=axes.transAxes, ha="right", va="top", fontsize=7, color="#a33")
    axes.tick_params(axis="x", labelrotation=20)
    figure.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=120)
    plt.close(figure)


def markdown_table(records):
    """The docs' table of measured figures, one row per block record."""
    rows = ["| block | LUT4 (own) | FF (own) | carry | DP16KD | MULT18 | DPR16X4 | Fmax MHz "
            "| LUT levels on critical path | LUT4 total with harness | source |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for record in records:
        own = record.get("block_only", record["total"])
        fmax = min(record["fmax_mhz"].values())
        path = record.get("critical_path") or {}
        source = record.get("source") or {}
        commit = (source.get("commit") or "?")[:7]
        files = [f for f in source.get("uncommitted") or [] if f.startswith("hdl/")]
        state = f"{commit} + uncommitted {', '.join(files)}" if files else commit
        rows.append(f"| {record['block']} | {own['lut4']:,} | {own['ff']:,} | {own['carry']} "
                    f"| {own['dp16kd']} | {own['mult18x18d']} | {own['dpr16x4']} | {fmax:.1f}"
                    f"{'' if record['timing_met'] else ' (miss)'} "
                    f"| {path.get('logic_levels', '?')} | {record['total']['lut4']:,} | {state} |")
    return "\n".join(rows)


if __name__ == "__main__":
    import sys
    print(markdown_table([json.loads(Path(p).read_text()) for p in sys.argv[1:]]))
