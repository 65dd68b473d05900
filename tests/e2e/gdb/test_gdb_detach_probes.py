"""GDB's detach with `trapline gdbserver --detach-probes` (US 7,017,153): the probes
leave with the debugger — the records stop at the detach, the program runs to its end with its
native output and status. Driven by the scripted protocol client on both arches."""
import pytest

from tests.e2e.gdb_client import ScriptedGdb
from tests.e2e.gdb.test_gdbserver_protocol import ARCHES, sample, symbol


@pytest.mark.parametrize("arch", ARCHES)
def test_detach_with_probes_stops_the_records_and_the_program_finishes(arch):
    gdb = ScriptedGdb(sample(arch, "fib"), ("5",), probes=["uprobe:fib:fib", "uretprobe:fib:fib"],
                      options=("--detach-probes",))
    try:
        gdb.write(b"+")
        gdb.ask(b"qSupported:multiprocess+")
        gdb.no_ack()
        fib = symbol(arch, "fib")
        assert gdb.ask(f"Z0,{fib:x},1".encode()) == b"OK"
        for _ in range(3):                           # three calls of fib, deep in the recursion
            assert gdb.ask(b"vCont;c").startswith(b"T05")
        assert gdb.ask(b"D") == b"OK"
        status, err = gdb.close()
    finally:
        if gdb.proc.poll() is None:
            gdb.proc.kill()
            gdb.proc.wait()
    assert status == 0
    assert "fib(5) = 5" in err                        # --stdio: the guest's stdout is stderr
    entries = err.count("uprobe:fib:fib ")
    assert 2 <= entries <= 3, err                     # without the detach: 2*F(6)-1 = 15
    assert err.count("uretprobe:fib:fib") == 0        # no call returned before the detach
