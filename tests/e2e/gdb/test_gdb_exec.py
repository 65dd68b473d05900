"""exec under gdb (exec-events+): `catch exec` stops in the new program before its first
instruction, gdb reads the new program's symbols (the stop reply names its file) and its
breakpoints are set again in it; a vfork child that execs, followed by gdb, goes on being
debugged in its new image while its parent is detached."""
import pytest

from tests.e2e.gdb_batch import gdb_batch, sample

ARCHES = ("x86_64", "i386")
DEBIAN = {"x86_64": "amd64", "i386": "i386"}


@pytest.mark.parametrize("arch", ARCHES)
def test_catch_exec_then_a_breakpoint_in_the_new_image(arch):
    out = gdb_batch(sample(arch, "exec_chain"), [
        "catch exec", "continue", "bt 1", "break continue_chain", "continue", "bt 2",
        "continue"], args=[1])
    assert "is executing new program: " in out and "/exec_chain" in out
    assert "Catchpoint 1 (exec'd " in out and "in _start ()" in out
    assert "Breakpoint 2, " in out and "in continue_chain ()" in out and "in main ()" in out
    assert "exec_chain: ok" in out and "[Inferior 1 (process 100) exited normally]" in out


@pytest.mark.parametrize("arch", ARCHES)
def test_the_new_program_is_another_one_with_its_own_symbols(arch, debian_bins):
    busybox = str(debian_bins[DEBIAN[arch]]["busybox"])
    fib = sample(arch, "fib")
    out = gdb_batch(busybox, [
        "catch exec", "continue", "break fib", "continue", "bt 2", "x/1i $pc", "delete",
        "continue"], args=["sh", "-c", f"exec {fib} 4"], probes=["uprobe:fib:fib"],
        strategy="trampoline")
    assert "is executing new program: " in out and "/fib" in out
    assert "Breakpoint 2, " in out and "in fib ()" in out and "in main ()" in out
    assert "fib(4) = 3" in out and "[Inferior 1 (process 100) exited normally]" in out


@pytest.mark.parametrize("arch", ARCHES)
def test_a_followed_vfork_child_that_execs(arch):
    out = gdb_batch(sample(arch, "vfork_exec_chain"), [
        "set follow-fork-mode child", "catch exec", "break work", "continue", "continue",
        "continue", "info inferiors", "continue", "bt 2", "continue"], args=[1])
    assert "[Attaching after Thread 100.100 vfork to child Thread 101.101]" in out
    assert 'Thread 2.1 "vfork_exec_chai" hit Breakpoint 2, ' in out   # work() in the vfork child
    assert "[Detaching vfork parent process 100 after child exec]" in out
    assert "Thread 2.1 \"vfork_exec_chai\" hit Catchpoint 1 (exec'd " in out
    assert out.count("hit Breakpoint 2, ") == 2 and "in main ()" in out   # work() in the new image
    assert "level 0: work=1 leaf=1" in out and "[Inferior 2 (process 101) exited normally]" in out


def test_exec_stop_reply_and_the_exec_file_of_the_new_image():
    from tests.e2e.gdb_client import REPO, ScriptedGdb
    program = REPO / "samples" / "bin" / "x86_64" / "exec_chain"
    gdb = ScriptedGdb(program, ["1"])
    try:
        gdb.write(b"+")
        assert b"exec-events+" in gdb.ask(b"qSupported:multiprocess+;exec-events+").split(b";")
        gdb.no_ack()
        path = str(program).encode()
        # GDB manual, "Stop Reply Packets": exec:<the new program's path in hex>
        assert gdb.ask(b"vCont;c") == b"T05exec:" + path.hex().encode() + b";thread:p64.64;"
        assert gdb.xfer("exec-file", "64") == path
        assert gdb.ask(b"vCont;c") == b"W00;process:64"
        assert gdb.close()[0] == 0
    finally:
        if gdb.proc.poll() is None:
            gdb.proc.kill()
            gdb.proc.wait()


def test_both_kept_with_schedule_multiple_then_killed():
    """detach-on-fork off keeps the vfork parent too; gdb's kill at the end kills the parent
    first, and the child's death then releases a dead parent: no vforkdone stop for it."""
    out = gdb_batch(sample("x86_64", "vfork_exec_chain"), [
        "set detach-on-fork off", "set schedule-multiple on", "catch exec", "break work",
        "continue", "continue", "info inferiors", "continue"], args=[1])
    assert "[New inferior 2 (process 101)]" in out and "is vfork parent of inferior 2" in out
    assert "Thread 2.1 \"vfork_exec_chai\" hit Catchpoint 1 (exec'd " in out
    assert "internal error" not in out and "Traceback" not in out
