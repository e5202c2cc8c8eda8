"""What every backend is: the ``Backend`` interface, its typed results, its declared
capabilities and its one error.

Every backend answers the same three questions for a position (a model ``Board``): its legal
moves in generation order, perft, and a search job. Results are a ``PerftResult`` and
``JobResult``s with the same fields whatever runs them, plus ``cycles`` where the backend is
hardware (simulated or real). What a backend can do for the engine's executors is declared in
its ``capabilities`` (a ``Capabilities``), read directly, never guessed.
"""

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, fields

from chessaccel.contract.errors import first_line
from chessaccel.contract.evalweights import DEFAULT_EVALUATION, EVALUATIONS, check_evaluation

__all__ = ["BackendError", "Backend", "Capabilities", "JobResult", "PerftResult", "first_line",
           "optional_module", "evaluation_problem"]


class BackendError(RuntimeError):
    """A backend that is unknown, not installed, or failed to answer."""


class _Record(Mapping):
    """A frozen record that reads as a mapping of its fields too (``r["nodes"]``, ``set(r)``,
    ``r == {...}``), so that code written for the dicts backends returned keeps working."""

    __slots__ = ()

    def __getitem__(self, key):
        if key in self._keys:
            return getattr(self, key)
        raise KeyError(key)

    def __iter__(self):
        return iter(self._keys)

    def __len__(self):
        return len(self._keys)

    def as_dict(self):
        return {key: getattr(self, key) for key in self._keys}

    def __repr__(self):
        inside = ", ".join(f"{key}={getattr(self, key)!r}" for key in self._keys)
        return f"{type(self).__name__}({inside})"


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class JobResult(_Record):
    """The answer to one search job. ``best_move`` is ``(from, to, promo)`` or None, ``pv`` a
    list of such moves (``[best_move]`` where the backend keeps no variation), ``cycles`` the
    hardware's count (None off hardware)."""

    score: int
    best_move: object
    pv: list
    nodes: int
    cycles: object = None


@dataclass(frozen=True, slots=True, eq=False, repr=False)
class PerftResult(_Record):
    """The answer to a perft: ``divide`` maps each root move to its count (None unless asked)."""

    nodes: int
    divide: object = None
    cycles: object = None


JobResult._keys = tuple(f.name for f in fields(JobResult))
PerftResult._keys = tuple(f.name for f in fields(PerftResult))


@dataclass(frozen=True)
class Capabilities:
    """What a backend declares about how its jobs run (engine/executors reads these).

    - ``batch``: ``search_many`` runs a whole batch in one backend run (one simulator run, one
      kernel launch), not job by job.
    - ``parallel_batches``: the jobs of a batch run side by side (a GPU launch): the search then
      sends siblings out speculatively and re-searches in batches.
    - ``inline_batches``: a batch takes well under a millisecond, so it runs in the thread that
      submits it (a stop or a deadline then waits for the batch in progress).
    - ``cycles``: results carry the hardware's cycle counts.
    - ``worker_processes``: the backend is cheap to start and runs in-process: an executor runs
      one copy per accelerator in worker processes (the model).
    - ``link_cores``: the backend is a board behind the link protocol, whose cores take one job
      each (``client`` and ``info`` attributes): an executor feeds its cores job by job.
    - ``actors``: the backend is a set of actors of a distributed runtime (``ray:SPEC``), each
      running another backend, that may die mid-job: an executor feeds them job by job and
      runs a dead one's job again elsewhere.
    - ``launch_jobs``: how many jobs one backend run should hold to fill the device (a GPU:
      compute units x lanes); the batch executor then merges the batches queued at a moment
      into one run of up to that many jobs. 0: one batch per run, none merged. A backend whose
      figure depends on its device sets it on the instance once the device is open (``open``).
    - ``async_launches``: ``start_search(jobs)`` enqueues a run and returns at once, a handle
      with ``done()``, ``results()`` (waits) and ``stop(start, end)`` (gives up those jobs
      where they stand; their results are then discarded): the executor keeps two runs in
      flight and cancels jobs on the device.
    """

    batch: bool = False
    parallel_batches: bool = False
    inline_batches: bool = False
    cycles: bool = False
    worker_processes: bool = False
    link_cores: bool = False
    actors: bool = False
    launch_jobs: int = 0
    async_launches: bool = False


class Backend:
    """The interface; a backend overrides what it can do. ``from_spec`` makes one from a parsed
    spec (host/backends/spec.py); the registry (host/backends/registry.py) finds the class by
    the spec's scheme."""

    name = "?"
    capabilities = Capabilities()
    #: perft's counting modes (``perft(..., count_mode=...)``): a backend with more than one
    #: takes the argument; the others make every leaf.
    count_modes = ("make",)
    #: the static evaluations (contract/evalweights.py's EVALUATIONS) the backend can search
    #: with; "pst" is every backend's. ``get_backend(spec, evaluation=...)`` refuses the others,
    #: and a backend is handed a non-default one (``from_spec(..., evaluation=...)``) only when
    #: it lists it here.
    evaluations = (DEFAULT_EVALUATION,)
    #: what the engine's ``Evaluation auto`` picks on this backend: None, the first of its
    #: ``evaluations`` in the engine's preference (uci.py AUTO_PREFERENCE), or one of them
    auto_evaluation = None

    @classmethod
    def usage(cls, scheme):
        """How a spec of ``scheme`` for this backend is written, for help and error messages."""
        return scheme

    @classmethod
    def from_spec(cls, spec, *, accelerators=None, log=None, **options):
        """The backend for ``spec`` (a BackendSpec). ``accelerators``: how many the caller wants
        (simulated board cores; None: the backend's default); ``log``: where start-up progress
        lines go; ``evaluation`` (among ``options``, only when not the default and listed in
        the class's ``evaluations``): the static evaluation to search with. The default takes
        no argument after the scheme and hands the evaluation to the constructor."""
        if spec.argument is not None:
            raise BackendError(f"backend {spec.scheme!r} takes no argument: {spec.text!r}")
        return cls(**options)

    def moves(self, board):
        raise BackendError(f"backend {self.name!r} cannot list moves")

    def perft(self, board, depth, divide=False):
        """A PerftResult."""
        raise BackendError(f"backend {self.name!r} cannot run perft")

    def search(self, board, depth, alpha, beta):
        """A JobResult."""
        raise BackendError(f"backend {self.name!r} cannot search")

    def search_many(self, jobs):
        """Run (board, depth, alpha, beta) jobs; batch backends run them in one run."""
        return [self.search(*job) for job in jobs]

    def describe(self):
        """The device the backend runs on, in words (None: nothing to name)."""
        return None

    def open(self):
        """Start the backend now rather than on its first job (a device that is opened on first
        use: its capabilities are then complete); returns the backend."""
        return self

    def close(self):
        pass


def evaluation_problem(backend_name, evaluations, evaluation):
    """Why a backend offering ``evaluations`` (its class's ``evaluations``) cannot search with
    ``evaluation`` (one line), or None when it can."""
    if evaluation not in EVALUATIONS:
        try:
            check_evaluation(evaluation)
        except ValueError as error:
            return str(error)
    if evaluation not in evaluations:
        return (f"backend {backend_name!r} cannot evaluate with {evaluation!r} "
                f"(it offers: {', '.join(evaluations)})")
    return None


def optional_module(module, what):
    """Import ``module``; a part missing from this build is a BackendError naming ``what``."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise BackendError(f"{what} is not available in this build ({e})") from None
