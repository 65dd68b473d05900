"""Threads and processes computing side by side against the same work in one task (issue 31).

samples/quantum.c computes fib(N) WORKERS times: inline (one task all along), in WORKERS threads
or in WORKERS forked processes, all runnable at once. While several tasks are runnable the
scheduler ends each slice at its quantum (kernel_model/process/sched.py); the rows show what
that costs against the inline run, side by side in one run, both arches:
  * inline          the program alone: nothing to share the CPU with, no quantum;
  * inline, counted the same run with an instruction budget (--max-insns), which every run
                    takes with Unicorn's count (emu_start(count=N), its per-instruction hook):
                    what the count alone costs on this code;
  * threads, fork   the shared runs.
CPU time of this process, in-process Sandbox runs, best of 3, each variant warmed first (the
samples' pages cached). Each run must print the inline run's output.
"""
import time

from trapline import Sandbox

from .common import SAMPLES, best_of

WORKERS = 3
BUDGET = 1 << 40              # an instruction budget no run reaches: only its count's cost
VARIANTS = (("inline", "inline", 0), ("inline, counted", "inline", BUDGET),
            ("threads", "threads", 0), ("fork", "fork", 0))


def quantum_run(arch: str, mode: str, n: int, max_insns: int = 0) -> bytes:
    result = Sandbox(max_insns=max_insns).run([str(SAMPLES / arch / "quantum"), mode,
                                               str(WORKERS), str(n)])
    assert result.exit_code == 0, result
    return result.stdout


def measure(arch: str, n: int) -> dict[str, float]:
    """CPU seconds of each variant (best of 3), each checked against the inline output."""
    expected = quantum_run(arch, "inline", n)
    times = {}
    for label, mode, budget in VARIANTS:
        quantum_run(arch, mode, n, budget)                     # warm
        times[label], out = best_of(lambda: quantum_run(arch, mode, n, budget),
                                    clock=time.process_time)
        assert out == expected, (label, out, expected)
    return times


def run(n: int = 27) -> list[str]:
    lines = []
    for arch in ("i386", "x86_64"):
        times = measure(arch, n)
        base = times["inline"]
        cells = ", ".join(f"{label} {t * 1e3:6.1f} ms ({t / base:.2f}x)" for label, t in times.items())
        lines.append(f"fib({n}) x{WORKERS} {arch:6}: {cells}")
    return lines


if __name__ == "__main__":
    for line in run():
        print(line)
