"""The deterministic profiler's cost by instructions (issue 31: `--mode pc` <= 1.3x and `--mode
stack` <= 1.6x of the unprofiled run at `--interval 10000`), figures the host's load does not
move (bench/profile.py gives the CPU times, which it does).

Each variant runs fib in-process once under valgrind's cachegrind (`I refs` of the whole
process), at fib 30 and at fib 20; their difference is fib's own work under that variant
(start-up, imports, the profiler's fixed costs cancel), divided by the unprofiled run's:
- unprofiled: the Sandbox's run;
- block clock: the timer armed with a tick no run reaches (the exact clock's hook alone: the
  floor of the deterministic modes, Unicorn 2.1.4 having no instruction budget in its
  translated blocks);
- pc, a record a tick: `profile --mode pc` keeping each sample (with -o or --record);
- pc, histogram: `profile --mode pc` as the CLI runs it otherwise, the ticks counted per PC in C;
- stack: `profile --mode stack`.
Each variant runs once unmeasured first, so that the C helpers are built and the bytecode is
written before valgrind counts anything.

Measured 2026-11-29, before the histogram (a record a tick was PC mode's only way), x86-64:
unprofiled 762.7 M, block clock 988.3 M (1.30x), pc 1073.7 M (1.41x), stack 1201.9 M (1.58x);
i386: 906.3 M, 1095.9 M (1.21x), 1192.8 M (1.32x), 1340.0 M (1.48x). With it, x86-64:
unprofiled 762.2 M, block clock 987.8 M (1.296x), pc a record a tick 1070.8 M (1.405x), pc with
the histogram 988.6 M (1.297x), stack 1196.9 M (1.570x); i386: 905.1 M, 1094.9 M (1.210x),
1189.4 M (1.314x), 1097.5 M (1.213x), 1331.3 M (1.471x). PC mode is now within 0.8 M (x86-64)
and 2.6 M (i386) instructions of the block clock, ~190 and ~550 host instructions a sample
(4173 and 4712 samples), where a record a sample cost ~20 000.

`python3 -m bench.profile_instructions [--arch=i386|x86_64]`
"""
import re
import shutil
import subprocess
import sys

from .common import ROOT, SAMPLES

ARCHES = ("i386", "x86_64")
VARIANTS = ("unprofiled", "block clock", "pc, a record a tick", "pc, histogram", "stack")
SMALL, LARGE = 20, 30


def run_variant(variant: str, arch: str, n: int):
    """One run of fib n under `variant`; its RunResult."""
    from trapline import Sandbox
    from trapline.profile.session import run_profiled

    from .profile import INTERVAL, NEVER, _timer_only

    argv = [str(SAMPLES / arch / "fib"), str(n)]
    if variant == "unprofiled":
        return Sandbox().run(argv)
    if variant == "block clock":
        return _timer_only(argv, NEVER)
    if variant == "stack":
        return run_profiled(Sandbox(), argv, interval=INTERVAL).result
    if variant in ("pc, a record a tick", "pc, histogram"):
        return run_profiled(Sandbox(), argv, interval=INTERVAL, mode="pc",
                            histogram=variant == "pc, histogram").result
    raise ValueError(f"no variant {variant!r} (have: {', '.join(VARIANTS)})")


def _instructions(variant: str, arch: str, n: int) -> int:
    code = f"from bench.profile_instructions import run_variant; run_variant({variant!r}, {arch!r}, {n})"
    done = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
                           sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, check=True)
    return int(re.search(r"I\s+refs:\s+([\d,]+)", done.stderr).group(1).replace(",", ""))


def run(arches=ARCHES) -> list[str]:
    if shutil.which("valgrind") is None:
        return ["instructions: valgrind not installed (apt-get install valgrind); skipped"]
    lines = [f"cachegrind I refs, fib {LARGE} minus fib {SMALL}, in-process, --interval 10000:"]
    for arch in arches:
        work = {}
        for variant in VARIANTS:
            subprocess.run([sys.executable, "-c", f"from bench.profile_instructions import run_variant; "
                            f"run_variant({variant!r}, {arch!r}, {SMALL})"], cwd=ROOT, check=True,
                           stdout=subprocess.DEVNULL)                       # the warm-up
            work[variant] = _instructions(variant, arch, LARGE) - _instructions(variant, arch, SMALL)
        plain = work["unprofiled"]
        lines.append(f"  {arch:6}: " + "; ".join(f"{variant} {count / 1e6:.1f} M ({count / plain:.3f}x)"
                                                 for variant, count in work.items()))
    return lines


if __name__ == "__main__":
    chosen = tuple(a.split("=", 1)[1] for a in sys.argv if a.startswith("--arch=")) or ARCHES
    for text in run(chosen):
        print(text, flush=True)
