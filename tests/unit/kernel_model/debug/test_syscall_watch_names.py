"""The door tells a syscall watcher only of the calls it watches (kernel_model/debug/events.py
syscall_watchers_of, issue 31): a watcher's `syscall_names` names them, one without watches
every call. A call no watcher watches runs as if nobody watched: a trace probing one syscall
costs nothing on the others, as a tracepoint sys_enter_NAME costs nothing to other calls."""
import pytest

from instrumenter.tracing.session import Session
from kernel_model.debug.events import DebugEvents
from trapline import Sandbox


class _Watcher:
    def __init__(self, names=None):
        if names is not None:
            self.syscall_names = frozenset(names)


def test_the_watchers_of_a_call_are_all_of_them_if_one_watches_it():
    events = DebugEvents()
    assert not events.syscall_watchers_of("write")
    writes, every = _Watcher({"write"}), _Watcher()
    events.add_syscall_watcher(writes)
    assert events.syscall_watchers_of("write") == [writes]
    assert events.syscall_watchers_of("read") == ()
    events.add_syscall_watcher(every)                # strace, a tracer's syscall stops
    assert events.syscall_watchers_of("read") == [writes, every]
    events.unsubscribe(every)
    events.add_syscall_watcher(_Watcher(None))       # None: every call too
    assert len(events.syscall_watchers_of("read")) == 2


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_a_syscall_probe_hears_only_its_call(arch, monkeypatch):
    told = []
    entry, leave = Session.syscall_entry, Session.syscall_exit
    monkeypatch.setattr(Session, "syscall_entry", lambda self, thread, name, args:
                        (told.append(name), entry(self, thread, name, args)))
    monkeypatch.setattr(Session, "syscall_exit", lambda self, thread, name, args, result:
                        (told.append(name), leave(self, thread, name, args, result)))
    result = Sandbox(probes=["syscall:write", "syscall:exit_group"]).run([f"samples/bin/{arch}/fileio"])
    assert result.exit_code == 0
    kinds = [(r.kind, r.name) for r in result.records]
    assert ("syscall_entry", "write") in kinds and ("syscall_exit", "write") in kinds
    assert kinds[-1] == ("syscall_entry", "exit_group")
    assert set(told) == {"write", "exit_group"}      # not open, read, close, ... of fileio


def test_a_probe_added_while_running_is_heard_from_then_on(arch="x86_64"):
    """syscall_names follows the probes the session has (dynamic.py adds them)."""
    from instrumenter.probes.definitions import Probe
    from trapline.probespec import parse_probe_spec
    session = Session.__new__(Session)
    session.probes = [Probe(parse_probe_spec("syscall:write"))]
    session._syscall_names = (-1, frozenset())
    assert session.syscall_names == {"write"}
    session.probes.append(Probe(parse_probe_spec("syscall:read")))
    session.probes.append(Probe(parse_probe_spec("uprobe:fib:fib")))
    assert session.syscall_names == {"write", "read"}
