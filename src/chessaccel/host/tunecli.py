"""``chessaccel tune``: Texel's method, the terms evaluation's weights fitted to the results of
the project's own games (docs/engine.md, "Tuning the evaluation").

    chessaccel tune data PGN... --out DATA.npz [--skip-plies N]
    chessaccel tune label DATA.npz --engine COMMAND --out LABELLED.npz [--depth N] [--workers N]
    chessaccel tune fit DATA.npz --out WEIGHTS.json [--target result|engine|mix:L]
                        [--iterations N] [--holdout F] [--seed S] [--prior-sd CP] [--free-signs]
                        [--only NAMES]
                        [--folds N] [--start WEIGHTS.json] [--plot PNG] [--summary JSON] [--json]

``data`` turns games into a data set of quiet positions with their results and feature counts;
``label`` adds a UCI engine's score of each position; ``fit`` fits the weights to the results
or the scores and writes the weights, a plot and a summary. What each does is
host/tune.py's docstring; bad input is one line and exit status 2.
"""

import argparse
import shlex
import sys

__all__ = ["add_arguments", "run"]


# --- the command line ---------------------------------------------------------------------------

def _count(low):
    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"expected an integer >= {low}, got {value}")
        return value
    return parse


def _fraction(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, got {text!r}") from None
    if not 0 <= value < 1:
        raise argparse.ArgumentTypeError(f"the held-out share must be in 0..1 (1 excluded), "
                                         f"got {value}")
    return value


def _sd(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of centipawns, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"the prior's standard deviation must be >= 0, "
                                         f"got {value}")
    return value


def _target(text):
    if text in ("result", "engine"):
        return text
    kind, _, share = text.partition(":")
    try:
        if kind == "mix" and 0 <= float(share) <= 1:
            return f"mix:{float(share):g}"
    except ValueError:
        pass
    raise argparse.ArgumentTypeError(f"expected result, engine or mix:L with L in 0..1, "
                                     f"got {text!r}")


def add_arguments(sp, parser_class):
    """The tune subcommand and its three commands, ``data``, ``label`` and ``fit``."""
    sub = sp.add_subparsers(dest="tune_command", metavar="{data,label,fit}", required=True,
                           parser_class=parser_class)
    d = sub.add_parser("data", help="turn PGN games into a data set of quiet positions, each "
                                    "with its game's result and the terms' feature counts")
    d.add_argument("pgn", nargs="+", metavar="PGN", help="PGN files of games")
    d.add_argument("--out", required=True, metavar="FILE", help="the data set to write (.npz)")
    d.add_argument("--skip-plies", type=_count(0), default=8, metavar="N",
                   help="plies of each game left out as its opening (default 8)")
    d.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    la = sub.add_parser("label", help="score every position of a data set with a UCI engine "
                                      "(e.g. stockfish) at a fixed depth, for `fit --target`")
    la.add_argument("data", metavar="DATA", help="a data set of `chessaccel tune data`")
    la.add_argument("--engine", required=True, metavar="COMMAND",
                    help="the UCI engine's command (e.g. /usr/games/stockfish)")
    la.add_argument("--out", required=True, metavar="FILE", help="the labelled data set (.npz)")
    la.add_argument("--depth", type=_count(1), default=8, metavar="N",
                    help="the engine's search depth per position (default 8)")
    la.add_argument("--workers", type=_count(1), default=2, metavar="N",
                    help="engine processes at once, one thread each (default 2)")
    la.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    f = sub.add_parser("fit", help="fit the terms' weights to the data set's results "
                                   "(Texel's method); write the weights, a plot and a summary")
    f.add_argument("data", metavar="DATA", help="a data set of `chessaccel tune data`")
    f.add_argument("--out", required=True, metavar="WEIGHTS",
                   help="the weights file to write (evalweights.json's format)")
    f.add_argument("--target", type=_target, default="result", metavar="result|engine|mix:L",
                   help="what the evaluation is fitted to: the games' results (default), the "
                        "engine's scores of `tune label` as expected results, or L times the "
                        "result plus 1 - L times the engine's")
    f.add_argument("--iterations", type=_count(0), default=50, metavar="N",
                   help="iterations of the fit at most (default 50)")
    f.add_argument("--holdout", type=_fraction, default=0.1, metavar="F",
                   help="share of the games held out of the fit (default 0.1)")
    f.add_argument("--seed", type=_count(0), default=1, metavar="S",
                   help="seed of the held-out games' draw (default 1)")
    f.add_argument("--prior-sd", type=_sd, default=20.0, metavar="CP",
                   help="pull towards the starting weights: a Gaussian prior of this standard "
                        "deviation in centipawns, weighed against the number of games; 0: none "
                        "(default 20)")
    f.add_argument("--squares", dest="squares_sd", type=_sd, default=None, metavar="CP",
                   help="fit the terms evaluation's material + piece-square tables too (every "
                        "entry, mg and eg), pulled towards the starting ones by a prior of this "
                        "standard deviation in centipawns (0: none); the weights file then "
                        "holds them as `squares`")
    f.add_argument("--free-signs", action="store_true",
                   help="let a weight change sign (by default a bonus stays >= 0 and a penalty "
                        "<= 0)")
    f.add_argument("--only", metavar="NAMES",
                   help="fit only these weights (comma-separated WEIGHT_NAMES, e.g. "
                        "threat_by_pawn,hanging_piece; mobility takes every piece's), the others "
                        "kept as they start")
    f.add_argument("--folds", type=_count(0), default=0, metavar="N",
                   help="also cross-validate: fit without each of N parts of the games and "
                        "score that part; 0: not (default 0)")
    f.add_argument("--start", metavar="WEIGHTS",
                   help="starting weights (default: the package's evalweights.json)")
    f.add_argument("--json", action="store_true",
                   help="print the summary as one JSON object on stdout")
    f.add_argument("--plot", metavar="PNG", help="the plot to draw (default: beside --out)")
    f.add_argument("--summary", metavar="JSON", help="the summary to write (default: beside --out)")


def _progress(line):
    print(line, file=sys.stderr, flush=True)


def run(args, emit, usage_error, argv=None):
    """Run ``tune data``, ``tune label`` or ``tune fit``; TuneError becomes ``usage_error``
    (one line)."""
    command = "chessaccel " + shlex.join(argv if argv is not None else sys.argv[1:])
    from .tune import TuneError, label_data, make_data, run_fit      # numpy: only when tuning
    try:
        if args.tune_command == "data":
            obj = make_data(args.pgn, args.out, args.skip_plies, command, _progress)
            emit(obj, [f"wrote {args.out}: {obj['positions']} positions of {obj['games']} games "
                       f"(from {obj['files']} files; skipped: {obj['skipped']})"])
            return 0
        if args.tune_command == "label":
            obj = label_data(args.data, args.out, args.engine, args.depth, args.workers,
                             command, _progress)
            emit(obj, [f"wrote {args.out}: {obj['positions']} positions scored by "
                       f"{obj['engine']} at depth {obj['depth']} ({obj['seconds']} s)"])
            return 0
        return run_fit(args, emit, command, _progress)
    except TuneError as e:
        raise usage_error(str(e)) from None


