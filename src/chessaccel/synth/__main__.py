"""``python -m chessaccel.synth BLOCK [BLOCK ...]``: size and Fmax of hdl/ blocks on an ECP5.

Exit status: 0 when every block was synthesised; 1 when a block is not available yet or a tool
failed (the others still run, and the summary lists what was skipped); 2 for bad arguments.
"""

import argparse
import sys

from .flow import (DEFAULT_OUT, DEVICES, MAPPERS, PLACERS, ROUTERS, SPEED_GRADES, SynthOptions,
                   ToolchainMissing, ToolFailed, summary_line, synthesise_block)
from .registry import BLOCKS, GROUPS, BlockUnavailable, expand
from .records import RECORDS, block_record_path, write_record
from .report import combine, plot_luts, write_summary

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        print(f"chessaccel.synth: error: {message}", file=sys.stderr)
        sys.exit(EXIT_USAGE)


def _block_list():
    lines = [f"  {name:<17} {spec.summary} ({spec.source_hint()} {spec.cls})"
             for name, spec in BLOCKS.items()]
    lines += [f"  {name:<17} group: {' '.join(members)}" for name, members in GROUPS.items()]
    return "\n".join(lines)


def _parser():
    parser = _Parser(
        prog="python -m chessaccel.synth",
        description="Synthesise hdl/ blocks behind a scan harness for an ECP5 with YoWASP Yosys "
                    "and nextpnr-ecp5; report LUT4, flip-flops, carries, block RAM, multipliers "
                    "and the achieved Fmax as JSON.",
        epilog="blocks:\n" + _block_list(),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("blocks", nargs="*", metavar="BLOCK", help="block or group name")
    parser.add_argument("--device", default=SynthOptions.device, choices=sorted(DEVICES))
    parser.add_argument("--package", default=SynthOptions.package)
    parser.add_argument("--speed", type=int, default=SynthOptions.speed, choices=SPEED_GRADES,
                        help="speed grade (default %(default)s, the ULX3S part)")
    parser.add_argument("--freq", type=float, default=SynthOptions.freq_mhz, metavar="MHZ",
                        help="clock constraint in MHz (default %(default)s)")
    parser.add_argument("--seed", type=int, default=SynthOptions.seed,
                        help="nextpnr placement seed (default %(default)s)")
    parser.add_argument("--router", default=SynthOptions.router, choices=ROUTERS,
                        help="nextpnr router (default %(default)s)")
    parser.add_argument("--placer", default=SynthOptions.placer, choices=PLACERS,
                        help="nextpnr placer (default %(default)s)")
    parser.add_argument("--mapper", default=SynthOptions.mapper, choices=sorted(MAPPERS),
                        help="Yosys' LUT mapping: abc9 (synth_ecp5's own, default) or abc "
                             "(the older pass with a short script, for blocks abc9 does not "
                             "finish; docs/synthesis.md)")
    parser.add_argument("--out", default=str(DEFAULT_OUT), metavar="DIR",
                        help="folder for BLOCK.json and the work files (default %(default)s)")
    parser.add_argument("--no-baseline", action="store_true",
                        help="skip the harness-baseline run (report totals only)")
    parser.add_argument("--summary", metavar="FILE.json",
                        help="also write one combined JSON of all blocks")
    parser.add_argument("--chart", metavar="FILE.png",
                        help="also draw a bar chart of LUT4 per block")
    parser.add_argument("--records", nargs="?", const=str(RECORDS), metavar="DIR",
                        help="also copy each record to DIR/blocks/BLOCK.json (default DIR: the "
                             "committed synth/records, which the board flow reads)")
    parser.add_argument("--list", action="store_true", help="list the known blocks and exit")
    return parser


def main(argv=None):
    parser = _parser()
    args = parser.parse_args(argv)
    if args.list:
        print(_block_list())
        return EXIT_OK
    if not args.blocks:
        parser.error("name at least one BLOCK (see --list)")
    names = expand(args.blocks)
    unknown = [n for n in names if n not in BLOCKS]
    if unknown:
        parser.error(f"unknown block {', '.join(repr(n) for n in unknown)} (see --list)")
    if args.summary:
        from pathlib import Path
        clash = [n for n in names if Path(args.summary).resolve() == (Path(args.out) / f"{n}.json").resolve()]
        if clash:
            parser.error(f"--summary {args.summary} would overwrite the record of block '{clash[0]}'")
    options = SynthOptions(device=args.device, package=args.package, speed=args.speed,
                           freq_mhz=args.freq, seed=args.seed, router=args.router,
                           placer=args.placer, mapper=args.mapper,
                           baseline=not args.no_baseline)
    try:
        options.check()
    except ValueError as error:
        parser.error(str(error))

    records, unavailable, summaries = [], {}, []
    for name in names:
        try:
            record = synthesise_block(name, options, args.out, progress=_progress)
        except BlockUnavailable as error:
            print(f"skipped: {error}", file=sys.stderr)
            unavailable[name] = str(error)
            continue
        except ToolchainMissing as error:
            print(f"chessaccel.synth: error: {error}", file=sys.stderr)
            return EXIT_FAILED
        except ToolFailed as error:
            print(f"chessaccel.synth: error: {error}", file=sys.stderr)
            unavailable[name] = str(error).splitlines()[0]
            continue
        records.append(record)
        summaries.append(summary_line(record))
        print(summaries[-1], flush=True)
        if args.records:
            print(f"record: {write_record(record, block_record_path(name, args.records))}")

    if args.summary or args.chart:
        summary = combine(records, unavailable)
        if args.summary:
            write_summary(summary, args.summary)
            print(f"summary: {args.summary}")
        if args.chart and records:
            plot_luts(summary, args.chart)
            print(f"chart: {args.chart}")
    if len(names) > 1:
        print(f"{len(records)} of {len(names)} blocks synthesised"
              + (f"; not available: {', '.join(unavailable)}" if unavailable else ""))
    return EXIT_OK if not unavailable else EXIT_FAILED


def _progress(message):
    print(message, flush=True)


if __name__ == "__main__":
    sys.exit(main())
