"""Signals are held for a stop-all step (issue 16; uprobes' uprobe_deny_signal): a child sends
its parent SIGUSR1 in a loop while the parent calls a probed function under
singlestep-stopall. At small quanta a switch often leaves the parent between its int3 and the
step; a signal delivered there ran the handler, which ended the window, and the return to the
site reported that call twice (34-111 extra hits of 3000 at quanta 1-11). Held until the int3
is back, every call is reported once, and the program's output is the native one."""
import subprocess
from pathlib import Path

import pytest

from instrumenter.probes.definitions import Probe
from trapline import Sandbox
from trapline.probespec import parse_probe_spec

from ..static_c import build_static

PROGRAM = r"""
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>
volatile long handled, total;
void on_usr1(int sig) { handled++; }
__attribute__((noinline)) void work(long i) { total += i; }
int main(void) {
    signal(SIGUSR1, on_usr1);
    pid_t child = fork();
    if (child == 0) {
        for (int i = 0; i < 300; i++) kill(getppid(), SIGUSR1);
        return 0;
    }
    for (long i = 0; i < 3000; i++) work(i);
    waitpid(child, 0, 0);
    printf("%ld %d\n", total, handled > 0);
    return 0;
}
"""


@pytest.fixture(scope="module")
def program(tmp_path_factory) -> Path:
    return build_static(tmp_path_factory, "asig", PROGRAM)


@pytest.mark.e2e
@pytest.mark.parametrize("quantum", [1, 3, 11])
def test_an_asynchronous_signal_never_lands_inside_a_stop_all_step(program, quantum):
    native = subprocess.run([str(program)], capture_output=True).stdout
    probe = Probe(parse_probe_spec("uprobe:asig:work"))
    result = Sandbox(probes=[probe], strategy="singlestep-stopall", quantum=quantum).run(
        [str(program)])
    assert result.exit_code == 0 and result.stdout == native == b"4498500 1\n"
    assert result.hits["uprobe:asig:work"] == 3000
