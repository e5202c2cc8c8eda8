"""The lab's part of ``chessaccel bench``: ``--host`` (host searches of the bench set on each
backend, lab/hostbench.py) and ``--dispatch`` (leaf jobs per second with an instant backend,
lab/dispatch.py).

The product's command line (host/cli.py) never imports the lab: it finds this object through
the ``chessaccel.commands`` entry-point group (pyproject.toml), under the name of the command it
joins. A command plug-in has ``add_arguments(parser, depth)`` (``depth``: the command line's
type for a depth in plies) and ``run(args, host)``, which returns an exit status, or None when
none of its options was given (the command then runs as it would without the plug-in).
``host`` gives ``backend`` (the one the command opened), ``positions`` (the bench set),
``emit(obj, lines)`` and ``UsageError`` (bad input: one line, exit status 2).
"""

__all__ = ["bench"]


class _BenchModes:
    """``bench --host`` and ``bench --dispatch``."""

    help = None     # joins the product's own ``bench`` command

    def add_arguments(self, sp, depth):
        sp.add_argument("--host", action="store_true",
                        help="search the bench set with the host engine on each --host-backends")
        sp.add_argument("--host-backends", help="comma-separated backends (default: --backend)")
        sp.add_argument("--host-depth", type=int, default=4, help="host search depth (default 4)")
        sp.add_argument("--hardware-plies", type=depth, default=2,
                        help="plies per leaf job for --host and --dispatch (default 2)")
        sp.add_argument("--accelerators", type=int, default=1,
                        help="model workers / simulated board cores for --host (default 1)")
        sp.add_argument("--dispatch", action="store_true",
                        help="measure leaf jobs per second with an instant backend")
        sp.add_argument("--dispatch-depth", type=int, default=5,
                        help="host search depth for --dispatch (default 5)")

    def run(self, args, host):
        if args.host:
            from . import hostbench
            if not 1 <= args.host_depth <= 64:
                raise host.UsageError(f"host depth {args.host_depth} out of range 1..64")
            if args.accelerators < 1:
                raise host.UsageError(f"accelerators must be at least 1, got {args.accelerators}")
            host.backend.close()
            return hostbench.run(args, host.positions, host.emit)
        if args.dispatch:
            from . import dispatch
            if not 1 <= args.dispatch_depth <= 64:
                raise host.UsageError(f"dispatch depth {args.dispatch_depth} out of range 1..64")
            return dispatch.run(args)
        return None


#: The ``bench`` entry point of the ``chessaccel.commands`` group.
bench = _BenchModes()
