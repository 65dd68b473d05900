"""RDTSC and RDTSCP run on the virtual clock (kernel_model/cpu/tsc.py): no host time in a run.

glibc's ld.so reads the time-stamp counter at start-up; with LD_DEBUG=statistics it prints the
cycles its work took, so that output is a window on the counter from ld.so itself, on both
arches: identical over runs, and plausible (later reads are larger). A program of our own
reads it with both instructions and prints the differences and RDTSCP's TSC_AUX.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

PROGRAM = r"""
#include <stdio.h>
#include <x86intrin.h>
int main(void) {
    unsigned long long a = __rdtsc(), b = __rdtsc();
    unsigned aux = 99;
    unsigned long long c = __rdtscp(&aux);
    printf("%llu %llu %llu %u\n", a, b - a, c - b, aux);
    return 0;
}
"""


def _run(argv: list[str], rootfs: Path | None = None) -> bytes:
    command = [sys.executable, "-m", "trapline", "run", "--clear-env", "-E", "LD_DEBUG=statistics"]
    if rootfs is not None:
        command += ["--rootfs", str(rootfs)]
    done = subprocess.run(command + ["--", *argv], capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout + done.stderr


def test_counter_reads_are_virtual_and_advance(tmp_path: Path):
    (tmp_path / "tsc.c").write_text(PROGRAM)
    subprocess.run(["gcc", "-O1", "-o", "tsc", "tsc.c"], cwd=tmp_path, check=True)
    first = _run([str(tmp_path / "tsc")])
    assert first == _run([str(tmp_path / "tsc")])
    line = next(l for l in first.splitlines() if l and l[0:1].isdigit())
    start, step, step_p, aux = (int(word) for word in line.split())
    assert step > 0 and step_p > 0 and aux == 0
    assert start < 10**13          # an hour and a bit of virtual uptime at 1 GHz, not the host's


@pytest.mark.parametrize("arch", ["amd64", "i386"])
def test_ld_so_start_up_cycles_are_the_same_every_run(arch, debian_rootfs):
    root = debian_rootfs[arch]
    outputs = {_run(["/bin/true"], root) for _ in range(2)}
    assert len(outputs) == 1
    assert b"total startup time in dynamic loader:" in outputs.pop()
