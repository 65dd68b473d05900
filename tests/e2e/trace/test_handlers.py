"""User handlers in the trampoline page (issue 16, US 9,336,001): the samples' fib probed with the
handlers of samples/handlers/ (assembly and relocatable objects), from the CLI and the library,
both arches; native actions under --strategy trampoline run in the page; a handler that faults
is named as the handler."""
import io
import os
import struct
from pathlib import Path

import pytest

from instrumenter.strategies.handlers.user import load_handler
from instrumenter.probes.definitions import Probe
from instrumenter.probes.records import Buffers
from instrumenter.tracing.session import Session
from kernel_model.fs import CapturedOutput
from kernel_model.kernel import Kernel, KernelConfig
from trapline.probespec import parse_probe_spec
from tests.e2e.forkserver import run_trapline
from tests.quick_profile import alternates

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[3]
SAMPLES = ROOT / "samples" / "bin"
HANDLERS = ROOT / "samples" / "handlers"
ARCHES = ("i386", "x86_64")
FIB_10_CALLS = 177                   # 2 F(11) - 1
FIB_5_CALLS = 15


def trapline(*args):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return run_trapline(list(args), env=env, cwd=ROOT, timeout=120)     # forked: forkserver.py


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("handler,strategy", [("limit_n.s", "trampoline"),
                                              ("limit_n.o:limit_n", "trampoline"),
                                              ("limit_n.so:limit_n", "trampoline"),
                                              ("limit_n.o:limit_n", "jump")])
@alternates("arch")
def test_trace_with_a_handler_that_changes_the_first_argument(arch, handler, strategy):
    """The jump strategy calls the handler from its own trampoline, laid out by the same code
    (instrumenter/strategies/page_layout.py)."""
    done = trapline("trace", "--strategy", strategy, "--handler", f"samples/handlers/{arch}/{handler}",
                    "-p", "uprobe:fib:fib", "-c", "--", f"samples/bin/{arch}/fib", "10")
    assert done.returncode == 0, done.stderr
    assert b"fib(10) = 5\n" in done.stdout                     # n clamped to 5 on the first call
    assert done.stderr.decode().splitlines()[-1].split()[:3] == ["uprobe:fib:fib", str(FIB_5_CALLS), strategy]


@pytest.mark.parametrize("arch", ARCHES)
def test_a_handler_that_faults_is_named_and_the_program_is_not_blamed(arch, tmp_path):
    bad = tmp_path / "bad.s"
    bad.write_text("nop\nnop\nmov eax, dword ptr [0]\nret\n")
    done = trapline("trace", "--strategy", "trampoline", "--handler", str(bad), "-p", "uprobe:fib:fib",
                    "--", f"samples/bin/{arch}/fib", "10")
    assert done.returncode == 128 + 11
    assert ("trapline: pid 100 killed by SIGSEGV: handler of uprobe:fib:fib faulted at handler+0x2: "
            "SIGSEGV (read at 0x0 (not mapped))") in done.stderr.decode()


@pytest.mark.parametrize("arch", ARCHES)
def test_a_handler_under_a_strategy_without_a_page_is_refused(arch):
    done = trapline("trace", "--strategy", "emulate", "--handler", f"samples/handlers/{arch}/count.s",
                    "-p", "uprobe:fib:fib", "--", f"samples/bin/{arch}/fib", "10")
    assert done.returncode == 2
    assert b"strategy emulate has no trampoline page to call the handler" in done.stderr


class _ScratchAtExit:
    """Reads each handler's first scratch word when the program calls exit_group."""

    def __init__(self, session):
        self.session, self.counts, self.sites = session, [], []

    def syscall_entry(self, thread, name, args):
        if name != "exit_group":
            return
        for (serial, _), site in sorted(self.session.trampolines.sites.items()):
            self.sites.append(([b.name for b in site.page.blocks], list(site.hooks)))
            for _, call in site.handlers:
                raw = self.session.debug.read_memory(thread.process, call.scratch, 8)
                self.counts.append(struct.unpack("<Q", raw)[0])

    def syscall_exit(self, *args):
        pass


def run_fib(arch, probes, strategy="trampoline", n=10, program="fib", args=None):
    stdout = CapturedOutput(name=b"pipe:[1]")
    kernel = Kernel(KernelConfig(stdin=CapturedOutput(), stdout=stdout, stderr=CapturedOutput(),
                                 report=io.StringIO()))
    argv = [program.encode()] + [a.encode() for a in (args if args is not None else [str(n)])]
    proc = kernel.spawn(str(SAMPLES / arch / program).encode(), argv, [])
    records = []
    session = Session(kernel, probes, buffers=Buffers(drain=records.extend), strategy=strategy)
    session.attach(proc)
    scratch = _ScratchAtExit(session)
    kernel.debug.syscall_watchers.append(scratch)
    status = kernel.run(proc)
    session.flush()
    session.records, session.seen, session.kernel_messages = records, scratch.sites, kernel.messages
    return status, stdout.data, session, scratch.counts


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("native", [None, "count"])
@alternates("arch")
def test_a_counting_handler_counts_every_call_beside_kernel_or_native_data(arch, native):
    """A probe with both kinds of data (US 9,336,001): the handler counts in its scratch area, the
    hit is recorded by the kernel handler (Python) or counted in the page (native)."""
    handler = load_handler(str(HANDLERS / arch / "count.s"))
    probe = Probe(parse_probe_spec("uprobe:fib:fib"), handler=handler, native=native)
    status, out, session, counts = run_fib(arch, [probe])
    assert (status, out) == (0, b"fib(10) = 55\n")
    assert counts == [FIB_10_CALLS] and probe.hits == FIB_10_CALLS
    [(names, hooks)] = session.seen
    assert names[:1] == (["UserInstrumentation(count)"] if native else ["Save_Registers"])
    assert len(hooks) == (0 if native else 1)                    # native: no Python per hit


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("native", ["count", "args:2"])
@alternates("arch")
def test_native_actions_under_the_trampoline_strategy_run_in_the_page(arch, native):
    probe = Probe(parse_probe_spec("uprobe:fib:fib"), native=native)
    status, out, session, _ = run_fib(arch, [probe])
    assert (status, out, probe.hits) == (0, b"fib(10) = 55\n", FIB_10_CALLS)
    [(names, hooks)] = session.seen
    assert hooks == [] and names[0] == f"UserInstrumentation({native})"
    if native.startswith("args"):
        assert len(session.records) == FIB_10_CALLS
        assert max(r.args[0] for r in session.records) == 10   # fib(10)'s n, recorded


@pytest.mark.parametrize("arch", ARCHES)
def test_auto_places_a_handler_where_a_page_calls_it(arch):
    """auto tries jump first: it calls handlers from its trampoline, as the int3 one does."""
    handler = load_handler(str(HANDLERS / arch / "limit_n.s"))
    probe = Probe(parse_probe_spec("uprobe:fib:fib"), handler=handler, native="count")
    status, out, session, _ = run_fib(arch, [probe], strategy="auto")
    assert (status, out, probe.hits) == (0, b"fib(10) = 5\n", FIB_5_CALLS)


_FAULT_ON_SECOND_CALL = {
    "x86_64": "add qword ptr [rsi], 1\ncmp qword ptr [rsi], 2\njne ok\nmov eax, dword ptr [0]\nok:\nret\n",
    "i386": ("mov eax, dword ptr [esp + 8]\nadd dword ptr [eax], 1\ncmp dword ptr [eax], 2\njne ok\n"
             "mov eax, dword ptr [0]\nok:\nret\n"),
}


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("strategy", ["trampoline", "jump"])
@alternates("arch")
def test_handlers_follow_fork_children_with_their_scratch_and_their_faults(arch, strategy, tmp_path):
    """fork_probe: the parent calls work() once, then it and its fork child call it again. Each
    runs the handler with its own copy of the scratch area (the count goes on from 1 in both),
    and each one's fault on its second call is named as the handler's, in its own report."""
    source = tmp_path / "second.s"
    source.write_text(_FAULT_ON_SECOND_CALL[arch])
    probe = Probe(parse_probe_spec("uprobe:fork_probe:work"), handler=load_handler(str(source)),
                  native="count")
    status, out, session, _ = run_fib(arch, [probe], strategy=strategy, program="fork_probe",
                                      args=["5", "3"])
    faults = [m for m in session.kernel_messages if "faulted" in m]
    assert sorted(m.split(":")[0] for m in faults) == ["pid 100 killed by SIGSEGV",
                                                       "pid 101 killed by SIGSEGV"]
    assert all(": handler of uprobe:fork_probe:work faulted at handler+0x" in m for m in faults)
    assert status == 11 and b"child: work=" not in out    # wait status: SIGSEGV, in the handler
