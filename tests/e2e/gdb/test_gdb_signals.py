"""Signals under gdb (US 7,185,320 [0036]-[0037], as gdb users expect): each signal stops the
program before delivery by default, `continue` passes it on, `handle SIG nostop noprint pass`
(QPassSignals) lets it through untouched, and `signal 0` drops it."""
import pytest

from tests.e2e.gdb_batch import gdb_batch, sample

ARCHES = ("x86_64", "i386")


@pytest.mark.parametrize("arch", ARCHES)
def test_signals_stop_by_default_and_continue_passes_them(arch):
    out = gdb_batch(sample(arch, "signals"), ["continue"] * 6)
    assert "Program received signal SIGUSR1, User defined signal 1." in out
    assert "Program received signal SIGSEGV, Segmentation fault." in out
    assert "Program received signal SIGUSR2, User defined signal 2." in out
    assert "signal SIGALRM" not in out               # gdb's default for it: nostop noprint pass
    assert "signals: ok" in out and "[Inferior 1 (process 100) exited normally]" in out


@pytest.mark.parametrize("arch", ARCHES)
def test_handle_nostop_pass_lets_signals_through(arch):
    out = gdb_batch(sample(arch, "signals"), [
        "handle SIGUSR1 nostop noprint pass", "handle SIGUSR2 nostop noprint pass",
        "handle SIGSEGV nostop noprint pass", "continue"])
    assert "Program received signal" not in out
    assert "signals: ok" in out and "exited normally" in out


def test_signal_0_drops_the_signal():
    out = gdb_batch(sample("x86_64", "signals"), ["continue", "signal 0", "continue"])
    assert "Program received signal SIGUSR1" in out
    assert "a. SIGUSR1 via kill: handler ran 0 time(s)" in out
