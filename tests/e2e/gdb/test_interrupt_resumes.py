"""GDB's Ctrl-C (0x03) stops the guest and `continue` resumes it with no instruction run twice.

The interrupt comes from the connection's reader thread (trapline/gdbserver/session.py
_interrupt: Debugger.interrupt, asked again until the debugger takes it), and used to stop the
run with uc_emu_stop from there: Unicorn 2.1.4 checks a stop after every guest load and store too
(tcg-op.c check_exit_request) and leaves through cpu_loop_exit_restore, back at the start of
the instruction, so a stop just after the store of a read-modify-write instruction ran it again
on `continue`. samples/callchain.c counts its calls with `x++` on memory and keeps a depth
counter: interrupted a few hundred times, it counted calls twice and died of SIGSEGV. The
stop now lands at a block's start (emu/block_stop.py): the output and exit are those of the
run without the debugger. Both arches."""
import threading
import time

import pytest

from instrumenter.debugger.debugger import Debugger
from instrumenter.debugger.events import INTERRUPT
from tests.e2e.gdb_client import REPO
from trapline import Sandbox

ROUNDS = 1_000_000          # ~10^9 guest instructions: long enough for every interrupt below
INTERRUPTS = 300


class Interrupter:
    """A user who presses Ctrl-C again as soon as each stop is resumed, INTERRUPTS times,
    from another host thread (the reader thread's part), and resumes every stop at once."""

    def __init__(self):
        self.debugger = None
        self.interrupts = 0
        self.attached = threading.Event()
        self.finished = threading.Event()

    def attach(self, kernel, process, session):
        self.debugger = Debugger(kernel.debug, session, on_stop=self.on_stop)
        self.debugger.attach(process)
        self.attached.set()

    def on_stop(self, event):
        if event.kind == INTERRUPT:
            self.interrupts += 1
        self.debugger.resume()

    def press_ctrl_c(self):
        self.attached.wait()
        while self.interrupts < INTERRUPTS and not self.finished.is_set():
            taken = self.interrupts
            while self.interrupts == taken and not self.finished.is_set():
                self.debugger.interrupt()       # as session.py's _interrupt: until it is taken
                time.sleep(0.0001)


@pytest.mark.e2e
@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_interrupted_and_resumed_read_modify_writes_run_once(arch):
    argv = [str(REPO / "samples" / "bin" / arch / "callchain"), str(ROUNDS)]
    plain = Sandbox().run(argv)
    user = Interrupter()
    thread = threading.Thread(target=user.press_ctrl_c, daemon=True)
    thread.start()
    try:
        run = Sandbox(on_start=user.attach).run(argv)
    finally:
        user.finished.set()
        thread.join()
    assert (run.exit_code, run.stdout) == (plain.exit_code, plain.stdout)
    assert user.interrupts == INTERRUPTS            # every Ctrl-C stopped the running guest
