"""The jobs a host search really hands its executor: recorded, and replayed to prove it.

``RecordingExecutor`` wraps a real executor (any ``make_executor`` gives) and passes every call
through to it unchanged, noting on the way every job submitted, in submission order: the
eldest brothers' lone jobs, the batches of younger brothers, the re-searches, and the
speculative jobs a cutoff makes useless (they were handed out: they are recorded, with the
results they came back with, or None where a batch was cancelled before it ran). It copies
the wrapped executor's ``parallel``, ``speculate``, ``slots`` and ``inline``, so that the
search takes the same decisions it takes with the real executor alone.

``ReplayExecutor`` answers a search from such a record, without a backend: each job it is
handed must equal the next recorded one (position in the kernels' layout, depth, window), else
it raises ``ReplayMismatch``; its result is the recorded one. A search run through it to the
end has submitted exactly the recorded jobs, in the recorded order.

The jobs of one search do not depend on timing when the executor answers a batch as a whole
(``BatchExecutor``: the OpenCL and RTL backends): no deadline or node limit given, the search
waits for a batch before it looks at any of its results, so every submission follows from the
results alone, and the backends' results are the contract's. With several workers or board
cores (``PoolExecutor``, ``LinkExecutor``) results arrive one by one and a cutoff cancels jobs
that may or may not have started: which recorded jobs then have results depends on timing.
"""

from typing import NamedTuple

from .executors import Batch, Executor, Job

__all__ = ["RecordingExecutor", "ReplayExecutor", "ReplayMismatch", "Submission"]


class Submission(NamedTuple):
    """One call of the executor: ``count`` jobs from index ``first`` of the record; ``inline``
    when it was ``run_inline`` (one job, answered in the search's thread)."""
    first: int
    count: int
    inline: bool


class ReplayMismatch(AssertionError):
    """A replayed search handed out a job that is not the recorded one (or one too many)."""


class RecordingExecutor(Executor):
    """``inner``'s behaviour, with every job submitted recorded (see the module)."""

    def __init__(self, inner):
        # no Executor.__init__: the stats the search reads are the wrapped executor's own
        self.inner = inner
        self.name = inner.name
        self.slots = inner.slots
        self.parallel = inner.parallel
        self.speculate = inner.speculate
        self.inline = inner.inline
        self.broken = None
        #: every Job handed out, in submission order
        self.jobs = []
        #: one Submission per submit / run_inline call
        self.submissions = []
        self._answers = []      # per submission: its Batch, or the inline result

    @property
    def stats(self):
        return self.inner.stats

    def submit(self, jobs):
        jobs = list(jobs)
        batch = self.inner.submit(jobs)
        self.submissions.append(Submission(len(self.jobs), len(jobs), False))
        self.jobs.extend(jobs)
        self._answers.append(batch)
        return batch

    def run_inline(self, job):
        result = self.inner.run_inline(job)
        self.submissions.append(Submission(len(self.jobs), 1, True))
        self.jobs.append(job)
        self._answers.append(result)
        return result

    def results(self):
        """The result of every recorded job, in its order (None: its batch was cancelled
        before the executor ran it). Call once the searches are over."""
        out = []
        for submission, answer in zip(self.submissions, self._answers):
            if submission.inline:
                out.append(answer)
            else:
                out.extend(answer.results)
        return out

    def close(self):
        self.inner.close()


def _same_job(a, b):
    """Same depth, window and position (squares, side to move, castling, en passant)."""
    return (a.depth, a.alpha, a.beta) == (b.depth, b.alpha, b.beta) \
        and a.board.key() == b.board.key()


class ReplayExecutor(Executor):
    """Answers a search with a record's results (see the module). ``jobs``, ``results``: the
    recorded ones (a RecordingExecutor's ``jobs`` and ``results()``); ``like``: the recording's
    executor, whose scheduling flags the replay takes on."""

    def __init__(self, jobs, results, like):
        super().__init__()
        self.name = f"replay of {like.name}"
        self.slots = like.slots
        self.parallel = like.parallel
        self.speculate = like.speculate
        self.inline = like.inline
        self._jobs = list(jobs)
        self._results = list(results)
        self.replayed = 0

    def _next(self, job):
        i = self.replayed
        if i >= len(self._jobs):
            raise ReplayMismatch(f"job {i} was handed out; the record holds {len(self._jobs)}")
        if not isinstance(job, Job):
            job = Job(*job)
        if not _same_job(job, self._jobs[i]):
            want = self._jobs[i]
            raise ReplayMismatch(f"job {i}: handed out depth {job.depth} window "
                                 f"({job.alpha}, {job.beta}), recorded depth {want.depth} window "
                                 f"({want.alpha}, {want.beta}) (or another position)")
        self.replayed += 1
        return self._results[i]

    def submit(self, jobs):
        jobs = list(jobs)
        answers = [self._next(job) for job in jobs]
        batch = Batch(self, jobs, inline=True)
        self.stats["batches"] += 1
        for index, result in enumerate(answers):
            if result is not None:
                self.count(result)
                batch.deliver(index, result)
        return batch

    def run_inline(self, job):
        result = self._next(job)
        if result is None:
            raise ReplayMismatch(f"job {self.replayed - 1} ran inline but has no recorded result")
        self.stats["batches"] += 1
        self.count(result)
        return result

    def cancel_batch(self, batch):
        pass
