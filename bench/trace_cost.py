"""What `trapline trace` costs, side by side with `trapline run` (issue 31).

1. Code no probe touches: `trace -o /dev/null -p syscall:write -- fib 34` (fib prints with
   writev: the probe never fires), the fileio sample and a syscall-heavy program (busybox
   `dd bs=1 count=50000`: 100 000 system calls, when the Debian binaries are fetched) against `run` of the same program,
   as whole processes in turns (A B A B ...), the CPU time's median ratio. Goal: <= 1.15.
2. Records: `trace --format jsonl|text -o /dev/null -p uprobe:fib:fib -- fib 27` (317 811 hits)
   against the same run probing a function fib never calls (`main`: one hit), per strategy:
   (hits) / (extra CPU seconds) = records a second. Goal: >= 300 k/s through int3/trampoline.

`python3 -m bench.trace_cost [--runs N] [--quick]`: --quick skips fib 34 (fib 30 instead).
"""
import statistics
import sys

from .common import ROOT, SAMPLES, timed_run

FIB27_HITS = 317_811


def _trapline(*args: str) -> list[str]:
    return [sys.executable, "-m", "trapline", *args]


def _paired_cpu(a: list[str], b: list[str], runs: int) -> tuple[float, float, float]:
    """Medians of A's and B's CPU seconds and of the ratio A/B pair by pair, run in turns."""
    ta, tb, ratios = [], [], []
    timed_run(a)
    timed_run(b)                                           # warm-up: bytecode, native hooks
    for _ in range(runs):
        ca = timed_run(a)[1]
        cb = timed_run(b)[1]
        ta.append(ca)
        tb.append(cb)
        ratios.append(ca / cb)
    return statistics.median(ta), statistics.median(tb), statistics.median(ratios)


def untouched(runs: int, n: int) -> list[str]:
    lines = []
    programs = [("fib", [str(SAMPLES / "x86_64" / "fib"), str(n)], "syscall:write"),
                ("fib i386", [str(SAMPLES / "i386" / "fib"), str(n)], "syscall:write"),
                ("fileio", [str(SAMPLES / "x86_64" / "fileio")], "syscall:rt_sigreturn")]
    busybox = ROOT / "tests" / "e2e" / ".cache" / "debian" / "amd64" / "root" / "bin" / "busybox"
    if busybox.exists():                  # python3 tests/e2e/fetch_debian_bins.py
        programs.append(("dd bs=1", [str(busybox), "dd", "if=/dev/zero", "of=/dev/null", "bs=1",
                                     "count=50000"], "syscall:rt_sigreturn"))
    for name, argv, probe in programs:
        ta, tb, ratio = _paired_cpu(_trapline("trace", "-o", "/dev/null", "-p", probe, "--", *argv),
                                    _trapline("run", "--", *argv), runs)
        lines.append(f"{name:<12} trace {ta:6.3f} s  run {tb:6.3f} s  trace/run {ratio:5.2f}x"
                     f"  (goal <= 1.15)")
    return lines


def record_rate(runs: int) -> list[str]:
    lines = []
    fib = str(SAMPLES / "x86_64" / "fib")
    for strategy in ("trampoline", "jump"):
        for fmt in ("jsonl", "text"):
            hot = _trapline("trace", "--format", fmt, "-o", "/dev/null", "--strategy", strategy,
                            "-p", f"uprobe:{fib}:fib", "--", fib, "27")
            cold = _trapline("trace", "--format", fmt, "-o", "/dev/null", "--strategy", strategy,
                             "-p", f"uprobe:{fib}:main", "--", fib, "27")
            ta, tb, _ = _paired_cpu(hot, cold, runs)
            rate = FIB27_HITS / max(ta - tb, 1e-9)
            lines.append(f"{strategy:<10} {fmt:<5} hot {ta:6.3f} s  cold {tb:6.3f} s  "
                         f"{rate / 1000:7.0f} k records/s  (goal >= 300 k/s)")
    return lines


def run(runs: int = 3, quick: bool = False) -> list[str]:
    return untouched(runs, 30 if quick else 34) + record_rate(runs)


if __name__ == "__main__":
    arguments = sys.argv[1:]
    count = next((int(a.split("=", 1)[1]) for a in arguments if a.startswith("--runs=")), 3)
    for line in run(count, "--quick" in arguments):
        print(line)
