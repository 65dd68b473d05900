"""Where sweep points run: a local process pool, or a Dask cluster (an existing scheduler, or a
LocalCluster started for the command), through one path: both are concurrent.futures executors
(distributed.Client.get_executor()), so the code that submits points, collects their rows and
stops on Ctrl-C is the same, and so are the results: a point's row depends on its PointTask
alone, and rows are put in point order whatever order they finish in.

A tree's bytes go to the workers once per tree where the executor can keep them: Dask scatters
each file's bytes once (content-addressed: the same file in two trees is one piece of data) and
a point's task carries references; a local pool's task carries the bytes themselves (a pipe to
a process on the same host). Either way by content, never by a host path.

Each point runs alone in its worker process (point.py holds a lock around a run): a guest run
owns its process's host-stop state and Unicorn's, so a Dask worker with several threads runs
its points one at a time.
"""
from __future__ import annotations

import logging
import os
import signal
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass, field
from multiprocessing import get_context

from ..errors import UsageError
from .point import PointTask, run_point


@dataclass(frozen=True)
class Where:
    jobs: int | None = None          # local pool size (None: the number of cores)
    scheduler: str | None = None     # tcp://HOST:PORT of a running Dask scheduler
    dask_local: int | None = None    # a LocalCluster of this many worker processes

    def describe(self) -> str:
        if self.scheduler:
            return f"Dask scheduler {self.scheduler}"
        if self.dask_local:
            return f"a local Dask cluster of {self.dask_local} workers"
        return f"a local pool of {self.jobs or os.cpu_count()} processes"


def _ignore_sigint() -> None:
    """Pool workers leave Ctrl-C to the command, which stops submitting and keeps what finished."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


@dataclass
class Pool:
    """An executor, and how a tree's bytes reach what it runs (`ship(digest, blobs)`)."""
    executor: object
    client: object = None            # a distributed.Client: its files are scattered once
    shipped: dict = field(default_factory=dict)

    def ship(self, digest: str, blobs: dict):
        if self.client is None:
            return blobs
        if digest not in self.shipped:
            self.shipped[digest] = self.client.scatter(blobs, hash=True)   # sha256 -> Future
        return self.shipped[digest]


@contextmanager
def executor(where: Where):
    if where.scheduler and where.dask_local:
        raise UsageError("--scheduler and --dask-local: give one of them")
    if not (where.scheduler or where.dask_local):
        pool = ProcessPoolExecutor(max_workers=where.jobs or os.cpu_count(),
                                   mp_context=get_context("spawn"), initializer=_ignore_sigint)
        try:
            yield Pool(pool)
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
        return
    with _dask_client(where) as client:
        yield Pool(client.get_executor(pure=False), client)


# A scheduler whose port takes a TCP connection has all this to answer Dask's handshake: both
# ends are Python, and on a loaded host (a CI run beside other jobs) the scheduler's event loop
# can take longer than Dask's default to reply; an address that takes no connection fails first,
# at once, in _answers.
HANDSHAKE_TIMEOUT = "300s"
CONNECT_TIMEOUT_S = 5.0          # the TCP connection alone (the kernel's side, not Python's)


def _answers(address: str) -> None:
    """Raise OSError at once if nothing takes a TCP connection at a tcp:// or tls:// address
    (other transports are left to Dask)."""
    import socket

    from distributed.comm import parse_address
    from distributed.comm.addressing import parse_host_port
    scheme, location = parse_address(address)
    if scheme not in ("tcp", "tls"):
        return
    host, port = parse_host_port(location)
    with socket.create_connection((host, port), timeout=CONNECT_TIMEOUT_S):
        pass


@contextmanager
def _dask_client(where: Where):
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise UsageError("Dask is not installed: pip install 'trapline[experiments]'") from None
    logging.getLogger("distributed").setLevel(logging.ERROR)
    if where.dask_local:
        cluster = LocalCluster(n_workers=where.dask_local, threads_per_worker=1, processes=True,
                               dashboard_address=None, silence_logs=logging.ERROR)
        try:
            with Client(cluster) as client:
                yield client
        finally:
            cluster.close()
        return
    try:
        _answers(where.scheduler)
        client = Client(where.scheduler, timeout=HANDSHAKE_TIMEOUT)
    except (OSError, TimeoutError, ValueError) as e:
        raise UsageError(f"--scheduler {where.scheduler}: cannot reach it ({e})") from None
    try:
        yield client
    finally:
        client.close()


def _shipped(pool: Pool, task: PointTask, blobs: dict) -> list:
    """The bytes a point's task needs beside it: its tree's, and its handler's tree's."""
    trees = [task.plan.tree] + ([task.plan.handler.tree] if task.plan.handler else [])
    return [pool.ship(digest, blobs[digest]) for digest in trees]


def run_points(pool: Pool, tasks: list[PointTask], blobs: dict, on_result) -> bool:
    """Submit every task (`blobs`: tree digest -> its files' bytes), call on_result(PointResult)
    as each finishes; True when all did, False when Ctrl-C stopped it (pending points
    cancelled, finished ones kept)."""
    futures = []
    try:
        futures += [pool.executor.submit(run_point, task, *_shipped(pool, task, blobs))
                    for task in tasks]
        for future in as_completed(futures):
            on_result(future.result())
    except KeyboardInterrupt:
        for future in futures:
            future.cancel()
        return False
    return True
