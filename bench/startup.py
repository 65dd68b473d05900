"""End-to-end start-up: `trapline run` of a static hello and of fib 27 as whole processes, side by side.

Median wall time, CPU time (user+sys, which a busy host disturbs less) and peak RSS (wait4's
ru_maxrss of each run) of several runs of each command, in turns so that drift in the host's
load hits all alike, for each arch (x86_64, i386):
  * `python3 -c pass`: the interpreter's own floor (site, .pth files);
  * the native program;
  * `python3 -m trapline run -- PROGRAM` from the repository's root, with the project's bytecode (.pyc) present, as CI and users have
    it (pip writes it at install; an editable install writes it on first import), and, for the
    x86-64 hello, without it (PYTHONDONTWRITEBYTECODE=1 and no __pycache__: every project
    module compiled at each start; the packages are copied without __pycache__ for this);
  * qemu-x86_64/qemu-i386 (user mode) and Qiling 1.4.6, only when installed (Qiling: an
    interpreter that has it, bench/dd_bs1.py qiling_python: $TRAPLINE_QILING_PYTHON, else
    /tmp/qlvenv/bin/python, a venv of its own since it pins its own dependencies).
Then Qiling's CPU and wall time over trapline's, pair by pair (the median of the ratios of
runs made one after the other), and load_elf's cost per exec on Debian's busybox (2 MB), first
call and repeated; with --importtime the modules `-X importtime` finds most expensive in the
trapline run.
Goals (issue 31, start-up): trapline hello <= 0.15 s of CPU with bytecode, and at least 2x
faster than Qiling end to end on hello and on fib 27, both arches.
With --instructions, the hello's instructions under trapline and Qiling (valgrind's cachegrind),
a figure the host's load does not move.
`python3 -m bench.startup --runs=N [--importtime] [--instructions] [--arch=x86_64|i386]`.
"""
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .common import ROOT, SAMPLES
from .dd_bs1 import qiling_python

HELLO = SAMPLES / "x86_64" / "hello"
BUSYBOX = ROOT / "tests" / "e2e" / ".cache" / "debian" / "amd64" / "root" / "bin" / "busybox"
PACKAGES = ("emu", "loader", "kernel_model", "instrumenter", "trapline")
ARCHES = ("x86_64", "i386")
WORKLOADS = (("hello", ()), ("fib 27", ("27",)))
GOAL_S = 0.15
GOAL_VS_QILING = 2.0
QILING_SCRIPT = ("import sys; from qiling import Qiling; from qiling.const import QL_VERBOSE; "
                 "Qiling(sys.argv[1:], '/', verbose=QL_VERBOSE.DISABLED).run()")


def _trapline_argv(program: Path = HELLO, *args: str) -> list[str]:
    """This checkout's trapline, run by this interpreter from the repository's root (no shell
    shim in between; an installed console script may belong to another checkout)."""
    return [sys.executable, "-m", "trapline", "run", "--", str(program), *args]


def _environment(**changes) -> dict[str, str]:
    env = dict(os.environ)
    for key, value in changes.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def _timed(argv: list[str], env: dict[str, str], cwd: Path = ROOT) -> tuple[float, float, float]:
    """(wall s, cpu s, peak RSS MiB) of one run of argv, its output discarded; it must exit 0.
    wait4 gives this child's own rusage (RUSAGE_CHILDREN's maxrss is the largest of all)."""
    t0 = time.perf_counter()
    child = subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = child.stderr.read()
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - t0
    child.returncode = os.waitstatus_to_exitcode(status)
    child.stderr.close()
    if child.returncode != 0:
        raise RuntimeError(f"{argv[-1]} exited {child.returncode}: {err.decode()[-300:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def _source_only_copy(where: Path) -> Path:
    """The project's packages without bytecode, for the 'no .pyc' figure."""
    for name in PACKAGES:
        shutil.copytree(ROOT / name, where / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return where


def _commands(arch: str, workload: str, args: tuple, tmp: Path) -> list[tuple[str, list[str], dict, Path]]:
    """(label, argv, environment, folder to run in) of each command compared."""
    program = SAMPLES / arch / workload.split()[0]
    with_pyc = _environment(PYTHONDONTWRITEBYTECODE=None)
    commands = [("python3 -c pass", [sys.executable, "-c", "pass"], with_pyc, ROOT),
                ("native", [str(program), *args], with_pyc, ROOT),
                ("trapline", _trapline_argv(program, *args), with_pyc, ROOT)]
    if arch == "x86_64" and workload == "hello":     # -m finds the packages in the folder it runs in
        commands.append(("trapline, no .pyc", _trapline_argv(program, *args),
                         _environment(PYTHONDONTWRITEBYTECODE="1"), _source_only_copy(tmp)))
    qemu = shutil.which(f"qemu-{arch}")
    if qemu:
        commands.append((f"qemu-{arch} (user mode)", [qemu, str(program), *args], with_pyc, ROOT))
    python = qiling_python()
    if python:
        commands.append(("Qiling", [python, "-c", QILING_SCRIPT, str(program), *args], with_pyc, ROOT))
    return commands


def _warm_bytecode() -> None:
    """Write the project's .pyc the way a first import does (and check the run works)."""
    subprocess.run(_trapline_argv(), env=_environment(PYTHONDONTWRITEBYTECODE=None), cwd=ROOT,
                   stdout=subprocess.DEVNULL, check=True)


def _side_by_side(arch: str, workload: str, args: tuple, runs: int) -> list[str]:
    with tempfile.TemporaryDirectory(prefix="trapline-startup-") as tmp:
        commands = _commands(arch, workload, args, Path(tmp))
        figures: dict[str, list[tuple[float, float, float]]] = {label: [] for label, *_ in commands}
        for label, argv, env, cwd in commands:      # one untimed round: page cache, dynamic linker
            _timed(argv, env, cwd)
        for _ in range(runs):
            for label, argv, env, cwd in commands:
                figures[label].append(_timed(argv, env, cwd))
    lines = [f"{arch} {workload}:"]
    for label, *_ in commands:
        walls, cpus, rss = zip(*figures[label])
        lines.append(f"  {label:26}: median {statistics.median(walls) * 1e3:7.1f} ms wall, "
                     f"{statistics.median(cpus) * 1e3:7.1f} ms CPU, peak RSS {max(rss):6.1f} MiB")
    ours = figures["trapline"]
    if workload == "hello":
        cpu = statistics.median(f[1] for f in ours)
        lines.append(f"  goal: <= {GOAL_S * 1e3:.0f} ms CPU with .pyc: {'met' if cpu <= GOAL_S else 'NOT met'} "
                     f"({cpu * 1e3:.0f} ms; {cpu - statistics.median(f[1] for f in figures['python3 -c pass']):.3f} s "
                     f"above the bare interpreter)")
    if "Qiling" in figures:
        cpu_ratio = statistics.median(q[1] / t[1] for q, t in zip(figures["Qiling"], ours))
        wall_ratio = statistics.median(q[0] / t[0] for q, t in zip(figures["Qiling"], ours))
        verdict = "met" if min(cpu_ratio, wall_ratio) >= GOAL_VS_QILING else "NOT met"
        lines.append(f"  goal: >= {GOAL_VS_QILING:.0f}x faster than Qiling: {verdict} "
                     f"(Qiling/trapline {cpu_ratio:.2f}x CPU, {wall_ratio:.2f}x wall, pair by pair)")
    else:
        lines.append("  Qiling not installed: no comparison")
    return lines


def startup_lines(runs: int, arches=ARCHES) -> list[str]:
    _warm_bytecode()
    lines = []
    for arch in arches:
        for workload, args in WORKLOADS:
            lines += _side_by_side(arch, workload, args, runs)
    return lines


LOAD_COST = """
import statistics, sys, time
t0 = time.perf_counter()
from loader.elf import forget_loaded_images, load_elf
t1 = time.perf_counter()
data = open(sys.argv[1], "rb").read()
t2 = time.perf_counter()
load_elf(data, "/bin/busybox")
first = time.perf_counter() - t2
def per_exec(cached):
    times, alive = [], []
    for _ in range(100):
        if not cached:
            forget_loaded_images()
        fresh = bytes(bytearray(data))   # a new object per exec, as the kernel's read gives
        t = time.perf_counter()
        alive.append(load_elf(fresh, "/bin/busybox"))
        times.append(time.perf_counter() - t)
        del alive[:-20]                  # images stay alive for a while, as in a process table
    return statistics.median(times)
print(t1 - t0, first, per_exec(True), per_exec(False))
"""


def load_elf_lines() -> list[str]:
    if not BUSYBOX.is_file():
        return ["load_elf: busybox not fetched (python3 tests/e2e/fetch_debian_bins.py); skipped"]
    out = subprocess.run([sys.executable, "-c", LOAD_COST, str(BUSYBOX)], cwd=ROOT, check=True,
                         capture_output=True, text=True, env=_environment(PYTHONDONTWRITEBYTECODE=None))
    imported, first, cached, parsed = (float(v) for v in out.stdout.split())
    return [f"load_elf busybox ({BUSYBOX.stat().st_size / 1e6:.1f} MB): import loader.elf {imported * 1e3:.1f} ms, "
            f"first load {first * 1e3:.2f} ms, then per exec {cached * 1e3:.3f} ms "
            f"(same bytes again) / {parsed * 1e3:.3f} ms (cache cleared: parse + segment copies)"]


def importtime_lines(top: int = 20) -> list[str]:
    """Modules with the largest own import time (µs) in one `trapline run -- hello`, best of 5."""
    best: dict[str, tuple[int, int]] = {}
    for _ in range(5):
        err = subprocess.run([sys.executable, "-X", "importtime", *_trapline_argv()[1:]], cwd=ROOT,
                             capture_output=True, text=True, env=_environment(PYTHONDONTWRITEBYTECODE=None)).stderr
        for line in err.splitlines():
            if not line.startswith("import time:") or "self [us]" in line:
                continue
            own, cumulative, name = line.split(":", 1)[1].split("|")
            key, value = name.strip(), (int(own), int(cumulative))
            best[key] = min(best.get(key, value), value)
    ranked = sorted(best.items(), key=lambda item: -item[1][0])[:top]
    return ["-X importtime, best of 5 (self µs, cumulative µs):"] + [
        f"  {own:7d} {cumulative:8d}  {name}" for name, (own, cumulative) in ranked]


def _instructions(argv: list[str], env: dict[str, str]) -> int:
    """Instructions one run of argv executes in all (valgrind's cachegrind, `I refs`): unlike
    CPU time they do not move with the host's load. argv starts with an interpreter itself
    (sys.executable, not a pyenv shim, which is a shell script valgrind would count)."""
    done = subprocess.run(["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null",
                           *argv], cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True, check=True)
    return int(re.search(r"I\s+refs:\s+([\d,]+)", done.stderr).group(1).replace(",", ""))


def instruction_lines(arches=ARCHES) -> list[str]:
    """The hello's instructions under trapline (with .pyc) and Qiling, and their ratio."""
    if shutil.which("valgrind") is None:
        return ["instructions: valgrind not installed (apt-get install valgrind); skipped"]
    _warm_bytecode()
    with_pyc, qiling = _environment(PYTHONDONTWRITEBYTECODE=None), qiling_python()
    lines = ["instructions of a static hello (cachegrind I refs, the whole process):"]
    for arch in arches:
        program = str(SAMPLES / arch / "hello")
        ours = _instructions([sys.executable, *_trapline_argv(program)[1:]], with_pyc)
        line = f"  {arch}: trapline {ours / 1e6:7.1f} M"
        if qiling is not None:
            theirs = _instructions([qiling, "-c", QILING_SCRIPT, program], with_pyc)
            line += f", Qiling {theirs / 1e6:7.1f} M, Qiling/trapline {theirs / ours:.2f}x"
        lines.append(line)
    return lines


def run(runs: int = 15, importtime: bool = False, arches=ARCHES, instructions: bool = False) -> list[str]:
    lines = startup_lines(runs, arches) + load_elf_lines()
    lines += instruction_lines(arches) if instructions else []
    return lines + (importtime_lines() if importtime else [])


if __name__ == "__main__":
    count = next((int(a.split("=", 1)[1]) for a in sys.argv if a.startswith("--runs=")), 15)
    chosen = tuple(a.split("=", 1)[1] for a in sys.argv if a.startswith("--arch=")) or ARCHES
    for text in run(count, importtime="--importtime" in sys.argv, arches=chosen,
                    instructions="--instructions" in sys.argv):
        print(text, flush=True)
