"""One accelerator of a ``PoolExecutor``: a process that runs a backend on the jobs it is sent.

    python -m chessaccel.host.engine.worker SPEC READ_FD WRITE_FD [EVALUATION]

It answers ``("ready", pid)`` (or ``("init-error", reason)``) and then, for each ``(job id,
job)`` it receives, ``(job id, "ok", result)``, ``(job id, "error", reason)`` or, when SIGUSR1
interrupted the job, ``(job id, "aborted", None)``. None, or the pipe closing, ends it.

SIGUSR1 aborts the job running at that moment and nothing else: the pool sends it only while
it holds the lock under which it assigns this worker's next job, and only to a worker busy with
the job to abort, so the signal can never reach a later job.
"""

import os
import signal
import sys
from multiprocessing.connection import Connection

_searching = False


class JobAborted(Exception):
    pass


def _on_abort(signum, frame):
    if _searching:
        raise JobAborted()


def serve(spec, conn, evaluation="pst"):
    global _searching
    signal.signal(signal.SIGINT, signal.SIG_IGN)    # a terminal's Ctrl-C is the host's to handle
    signal.signal(signal.SIGUSR1, _on_abort)
    from chessaccel.host.backends import BackendError, first_line, get_backend
    try:
        backend = get_backend(spec, evaluation=evaluation)
    except BackendError as error:
        conn.send(("init-error", first_line(error)))
        return 1
    conn.send(("ready", os.getpid()))
    try:
        while True:
            try:
                message = conn.recv()
            except (EOFError, OSError):
                break
            if message is None:
                break
            job_id, job = message
            try:
                try:
                    _searching = True
                    result = backend.search(*job)
                finally:
                    _searching = False
                reply = (job_id, "ok", result)
            except JobAborted:
                reply = (job_id, "aborted", None)
            except Exception as error:  # the backend's failure goes back as one line
                reply = (job_id, "error", first_line(error))
            try:
                conn.send(reply)
            except OSError:
                break
    finally:
        backend.close()
    return 0


def main(argv=None):
    spec, read_fd, write_fd, *evaluation = (argv or sys.argv[1:])
    conn = _Duplex(Connection(int(read_fd), writable=False), Connection(int(write_fd),
                                                                        readable=False))
    return serve(spec, conn, *evaluation)


class _Duplex:
    """A reading and a writing Connection as one (two plain pipes, no socketpair needed)."""

    def __init__(self, reader, writer):
        self.reader, self.writer = reader, writer

    def recv(self):
        return self.reader.recv()

    def send(self, obj):
        self.writer.send(obj)


if __name__ == "__main__":
    sys.exit(main())
