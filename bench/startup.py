"""End-to-end start-up: `trapline run -- samples/bin/x86_64/hello` as a whole process, side by side.

Median wall time (and CPU time, user+sys, which a busy host disturbs less) of several runs of
each command, in turns so that drift in the host's load hits all alike:
  * `python3 -c pass`: the interpreter's own floor (site, .pth files);
  * the native hello;
  * `trapline run -- hello`, with the project's bytecode (.pyc) present, as CI and users have it
    (pip writes it at install; an editable install writes it on first import), and without it
    (PYTHONDONTWRITEBYTECODE=1 and no __pycache__: every project module compiled at each start;
    the packages are copied to a temporary folder without __pycache__ for this);
  * qemu-x86_64 (user mode) and Qiling, only when installed.
The console script is run with this interpreter directly (a pyenv shim alone costs ~50 ms).
Then load_elf's cost per exec on Debian's busybox (2 MB), first call and repeated, and with
--importtime the modules `-X importtime` finds most expensive in the trapline run.
Goal (issue 12, section 3): trapline hello end to end <= 0.15 s with bytecode, and at least 2x
faster than Qiling.
"""
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .common import ROOT, SAMPLES

HELLO = SAMPLES / "x86_64" / "hello"
BUSYBOX = ROOT / "tests" / "e2e" / ".cache" / "debian" / "amd64" / "root" / "bin" / "busybox"
PACKAGES = ("emu", "loader", "kernel_model", "instrumenter", "trapline")
GOAL_S = 0.15
QILING_SCRIPT = ("import sys; from qiling import Qiling; from qiling.const import QL_VERBOSE; "
                 "Qiling([sys.argv[1]], '/', verbose=QL_VERBOSE.DISABLED).run()")


def _trapline_argv() -> list[str]:
    """The console script next to this interpreter, run by it (no shell shim in between)."""
    script = Path(sys.executable).parent / "trapline"
    head = [sys.executable, str(script)] if script.is_file() else [sys.executable, "-m", "trapline"]
    return head + ["run", "--", str(HELLO)]


def _environment(**changes) -> dict[str, str]:
    env = dict(os.environ)
    for key, value in changes.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def _timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall, cpu) seconds of one run of argv, its output discarded; it must exit 0."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"{argv[-1]} exited {done.returncode}: {done.stderr.decode()[-300:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def _source_only_copy(where: Path) -> Path:
    """The project's packages without bytecode, for the 'no .pyc' figure."""
    for name in PACKAGES:
        shutil.copytree(ROOT / name, where / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return where


def _commands(tmp: Path) -> list[tuple[str, list[str], dict[str, str]]]:
    with_pyc = _environment(PYTHONDONTWRITEBYTECODE=None)
    commands = [
        ("python3 -c pass", [sys.executable, "-c", "pass"], with_pyc),
        ("native hello", [str(HELLO)], with_pyc),
        ("trapline, .pyc present", _trapline_argv(), with_pyc),
        ("trapline, no .pyc", _trapline_argv(),
         _environment(PYTHONDONTWRITEBYTECODE="1", PYTHONPATH=str(_source_only_copy(tmp)))),
    ]
    qemu = shutil.which("qemu-x86_64")
    if qemu:
        commands.append(("qemu-x86_64 (user mode)", [qemu, str(HELLO)], with_pyc))
    probe = subprocess.run([sys.executable, "-c", "import qiling"], capture_output=True)
    if probe.returncode == 0:
        commands.append(("Qiling", [sys.executable, "-c", QILING_SCRIPT, str(HELLO)], with_pyc))
    return commands


def _warm_bytecode() -> None:
    """Write the project's .pyc the way a first import does (and check the run works)."""
    subprocess.run(_trapline_argv(), env=_environment(PYTHONDONTWRITEBYTECODE=None),
                   stdout=subprocess.DEVNULL, check=True)


def startup_lines(runs: int) -> list[str]:
    _warm_bytecode()
    lines = []
    with tempfile.TemporaryDirectory(prefix="trapline-startup-") as tmp:
        commands = _commands(Path(tmp))
        walls: dict[str, list[float]] = {label: [] for label, _, _ in commands}
        cpus: dict[str, list[float]] = {label: [] for label, _, _ in commands}
        for label, argv, env in commands:       # one untimed round: page cache, dynamic linker
            _timed(argv, env)
        for _ in range(runs):
            for label, argv, env in commands:
                wall, cpu = _timed(argv, env)
                walls[label].append(wall)
                cpus[label].append(cpu)
    median = {label: statistics.median(values) for label, values in walls.items()}
    for label, _, _ in commands:
        lines.append(f"{label:24}: median {median[label] * 1e3:6.1f} ms wall, "
                     f"{statistics.median(cpus[label]) * 1e3:6.1f} ms CPU (min {min(walls[label]) * 1e3:6.1f} ms)")
    ours = median["trapline, .pyc present"]
    verdict = "met" if ours <= GOAL_S else "NOT met"
    lines.append(f"goal: trapline hello <= {GOAL_S * 1e3:.0f} ms with .pyc: {verdict} "
                 f"({ours * 1e3:.0f} ms; {ours - median['python3 -c pass']:.3f} s above the bare interpreter)")
    if "Qiling" in median:
        lines.append(f"goal: >= 2x faster than Qiling: {median['Qiling'] / ours:.1f}x")
    else:
        lines.append("Qiling not installed: no comparison")
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


def run(runs: int = 15, importtime: bool = False) -> list[str]:
    lines = startup_lines(runs) + load_elf_lines()
    return lines + (importtime_lines() if importtime else [])


if __name__ == "__main__":
    count = next((int(a.split("=", 1)[1]) for a in sys.argv if a.startswith("--runs=")), 15)
    for text in run(count, importtime="--importtime" in sys.argv):
        print(text, flush=True)
