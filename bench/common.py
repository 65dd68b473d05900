"""Helpers shared by the benchmarks: best-of-N timing and paths."""
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "samples" / "bin"


def best_of(fn, repeat: int = 3):
    """(best wall time in seconds, result of the last call)."""
    best, result = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t0)
    return best, result
