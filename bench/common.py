"""Helpers shared by the benchmarks: best-of-N timing, timed whole-process runs, and paths."""
import resource
import subprocess
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples" / "bin"


def best_of(fn, repeat: int = 3, clock=time.perf_counter):
    """(best time in seconds by `clock` (wall by default), result of the last call)."""
    best, result = float("inf"), None
    for _ in range(repeat):
        t0 = clock()
        result = fn()
        best = min(best, clock() - t0)
    return best, result


def timed_run(argv: list[str], *, stderr_must_hold: bytes = b"") -> tuple[float, float]:
    """(wall, cpu) seconds of one run of argv as a whole process (CPU time from the children's
    rusage: user+sys, which a busy host disturbs less). It must exit 0, and print
    `stderr_must_hold` on stderr when given; RuntimeError with its stderr's tail otherwise."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0 or stderr_must_hold not in done.stderr:
        raise RuntimeError(f"{argv[:3]} exited {done.returncode}: {done.stderr.decode()[-300:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
