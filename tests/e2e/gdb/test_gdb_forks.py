"""fork and vfork under gdb (fork-events+, vfork-events+): a breakpoint in a vfork child with
follow-fork-mode child, the parent followed by default (the children detached and run on),
and detach-on-fork off keeping a fork child as a second inferior, stopped until resumed."""
import pytest

from tests.e2e.gdb_batch import gdb_batch, sample

ARCHES = ("x86_64", "i386")


@pytest.mark.parametrize("arch", ARCHES)
def test_breakpoint_in_a_vfork_child(arch):
    out = gdb_batch(sample(arch, "vfork_status"), [
        "set follow-fork-mode child", "break child_work", "continue", "continue", "bt 1",
        "info inferiors", "continue", "continue"])
    assert "[Attaching after Thread 100.100 vfork to child Thread 101.101]" in out
    assert "Thread 2.1 \"vfork_status\" hit Breakpoint 1" in out and "in child_work ()" in out
    assert "is vfork child of inferior 1" in out
    assert "[Inferior 2 (process 101) exited with code 07]" in out     # its _exit(7)
    # (What the detached parent prints next reaches gdb's pipe only while gdb still reads it.)


@pytest.mark.parametrize("arch", ARCHES)
def test_follow_the_parent_detaches_vfork_children(arch):
    out = gdb_batch(sample(arch, "vfork_status"), ["break child_work"] + ["continue"] * 4)
    assert "[Detaching after vfork from child process 101]" in out
    assert out.count("Breakpoint 1, ") == 2           # the parent's two calls; not the child's
    assert "child_work calls seen by the parent: 3" in out
    assert "vfork_status: ok" in out and "[Inferior 1 (process 100) exited normally]" in out


def test_detach_on_fork_off_keeps_the_fork_child():
    """The child is a second inferior that runs only when gdb resumes it (vCont;c:p65.-1):
    the parent stays at its stepi's PC meanwhile, and runs on when resumed in its turn."""
    out = gdb_batch(sample("x86_64", "fork_probe"), [
        "set detach-on-fork off", "catch fork", "continue", "stepi", "info inferiors",
        "inferior 2", "continue", "inferior 1", "continue"])
    assert "Catchpoint 1 (forked process 101)" in out
    assert "[New inferior 2 (process 101)]" in out
    child_done = out.index("[Inferior 2 (process 101) exited with code 011]")    # exit(9)
    assert "child: work=5 leaf=10" in out[:child_done]
    assert "parent: work=4 leaf=8" in out[child_done:]
    assert "[Inferior 1 (process 100) exited normally]" in out


def test_resuming_a_vfork_parent_alone_is_refused():
    """A client that resumes the parent only while the debugged vfork child borrows its space
    gets an error reply (the tracing facility's VforkParentBusy), and may then resume both."""
    from tests.e2e.gdb_client import ScriptedGdb
    gdb = ScriptedGdb(sample("x86_64", "vfork_status"))
    try:
        gdb.write(b"+")
        gdb.ask(b"qSupported:multiprocess+;fork-events+;vfork-events+")
        gdb.no_ack()
        assert gdb.ask(b"vCont;c") == b"T05vfork:p65.65;thread:p64.64;"
        refused = gdb.ask(b"vCont;c:p64.-1")
        assert refused.startswith(b"E.") and b"waiting for its vfork child 101" in refused
        replies = [gdb.ask(b"vCont;c")]
        while replies[-1] != b"W00;process:64" and len(replies) < 20:
            replies.append(gdb.ask(b"vCont;c"))
        assert replies[-1] == b"W00;process:64"
        assert b"T05vforkdone:;thread:p64.64;" in replies
        assert gdb.close()[0] == 0
    finally:
        if gdb.proc.poll() is None:
            gdb.proc.kill()
            gdb.proc.wait()
