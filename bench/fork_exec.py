"""Processes at scale: a shell loop of fork+exec+exit+wait, its memory, and forks of a big process.

Each command runs as a whole process (trapline's CLI with this interpreter, or the native
busybox), in turns; the figures are the wall time, the CPU time (user+sys, which a busy host
disturbs less) and the peak RSS of that process, from wait4's rusage:
  * `busybox sh -c 'while ...; do /bin/busybox true; done'` for 20, 1000 and 2000 iterations,
    under trapline (both arches) and natively; the cost of one cycle is the slope between 20
    and 2000 iterations (start-up excluded);
  * the same loop hashing with `sha256sum` each time (issue 12: the *sum.tests units);
  * a shell that holds a 4 MiB variable (4 MiB of touched heap) running 200 subshells `( : )`
    (fork + exit + wait), less the run that only builds the variable: the cost of a fork of a
    process with 4 MiB of touched memory (and the same loop without the variable).
Goals (issue 12): loop peak RSS <= 512 MiB at 1000 iterations, flat (2000 within 64 MiB of 20);
a fork+exec cycle <= 5 ms (<= 10x native); a fork of 4 MiB touched <= 5 ms.
"""
import os
import subprocess
import sys
import time
from pathlib import Path

from .common import ROOT

ROOTS = {arch: ROOT / "tests" / "e2e" / ".cache" / "debian" / deb / "root"
         for arch, deb in (("x86_64", "amd64"), ("i386", "i386"))}
LOOP = "i=0; while [ $i -lt {n} ]; do {command}; i=$((i+1)); done"
TRUE = "/bin/busybox true"
HASH = "echo $i | /bin/busybox sha256sum >/dev/null"
SETUP = "x=$(/bin/busybox head -c 4194304 /dev/zero | /bin/busybox tr '\\000' a); "
SUBSHELLS = "i=0; while [ $i -lt 200 ]; do ( : ); i=$((i+1)); done; echo ${#x}"


def _trapline(arch: str, script: str) -> list[str]:
    cli = Path(sys.executable).parent / "trapline"
    return [sys.executable, str(cli), "run", "--rootfs", str(ROOTS[arch]), "--",
            "/bin/busybox", "sh", "-c", script]


def _native(script: str) -> list[str]:
    busybox = str(ROOTS["x86_64"] / "bin" / "busybox")
    return [busybox, "sh", "-c", script.replace("/bin/busybox", busybox)]


def measure(argv: list[str]) -> tuple[float, float, int]:
    """(wall s, CPU s, peak RSS in MiB) of one run of argv as a child process."""
    t0 = time.perf_counter()
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - t0
    child.returncode = os.waitstatus_to_exitcode(status)
    error = child.stderr.read().decode(errors="replace").strip()
    child.stderr.close()
    if child.returncode != 0:
        raise RuntimeError(f"{argv[:4]}... exited {child.returncode}: {error[-300:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss // 1024


def _loop_lines(label: str, make_argv, command: str) -> list[str]:
    lines, runs = [], {}
    for n in (20, 1000, 2000):
        runs[n] = measure(make_argv(LOOP.format(n=n, command=command)))
        wall, cpu, rss = runs[n]
        lines.append(f"{label:26} n={n:5}  wall {wall:7.2f} s  cpu {cpu:7.2f} s  peak RSS {rss:5} MiB")
    per_cycle = (runs[2000][1] - runs[20][1]) / 1980 * 1000
    growth = runs[2000][2] - runs[20][2]
    lines.append(f"{label:26} per cycle {per_cycle:6.2f} ms CPU; RSS 2000 vs 20: {growth:+d} MiB")
    return lines, per_cycle


def run() -> list[str]:
    if not all(path.exists() for path in ROOTS.values()):
        return ["skipped: run python3 tests/e2e/fetch_debian_bins.py first"]
    lines, cycles = [], {}
    native, cycles["native"] = _loop_lines("native true loop", lambda s: _native(s), TRUE)
    lines += native
    for arch in ROOTS:
        more, cycles[arch] = _loop_lines(f"trapline {arch} true loop",
                                         lambda s, a=arch: _trapline(a, s), TRUE)
        lines += more
    for arch in ROOTS:
        more, _ = _loop_lines(f"trapline {arch} sha256 loop",
                              lambda s, a=arch: _trapline(a, s), HASH)
        lines += more
    for arch in ROOTS:
        lines.append(f"fork+exec cycle {arch}: {cycles[arch]:.2f} ms = "
                     f"{cycles[arch] / cycles['native']:.1f}x native ({cycles['native']:.2f} ms); goal <= 5 ms")
    for arch in ROOTS:
        setup = measure(_trapline(arch, SETUP + "echo ${#x}"))[1]
        big = measure(_trapline(arch, SETUP + SUBSHELLS))[1]
        small = measure(_trapline(arch, "x=a; " + SUBSHELLS))[1]
        lines.append(f"trapline {arch}: a fork+exit+wait of a shell with 4 MiB touched "
                     f"{(big - setup) / 200 * 1000:.2f} ms CPU, without "
                     f"{small / 200 * 1000:.2f} ms (goal <= 5 ms)")
    return lines


if __name__ == "__main__":
    for line in run():
        print(line, flush=True)
