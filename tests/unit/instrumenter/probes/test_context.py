"""instrumenter.probes.context: what a Python action sees — and the virtual timestamp of records,
which counts guest instructions exactly (emu/icount.py)."""
import pytest

from instrumenter.probes.definitions import Probe
from trapline import Sandbox
from trapline.probespec import parse_probe_spec


@pytest.fixture(params=["i386", "x86_64"])
def arch(request):
    return request.param


def _trace(arch, specs, n=5, **kwargs):
    seen = []
    def action(ctx):          # read inside the action: the context is live during the hit only
        seen.append((ctx.timestamp, ctx.arg(0), ctx.pid, ctx.tid))
    probes = [Probe(parse_probe_spec(s), action=action, nargs=1) for s in specs]
    result = Sandbox(probes=probes, strategy="trampoline", **kwargs).run(
        [f"samples/bin/{arch}/fib", str(n)])
    assert result.exit_code == 0
    return result, seen


def test_timestamps_count_the_instructions_between_two_hits_exactly(arch):
    """fib starts with a one-byte `push %ebp`/`%rbp`. From the int3 at fib (counted) to the int3
    at fib+1 run: the relocated push and the jump back in the trampoline, then that int3."""
    result, _ = _trace(arch, ["uprobe:fib:fib", "uprobe:fib:fib+1"])
    records = result.records
    assert [r.probe for r in records[:2]] == ["uprobe:fib:fib", "uprobe:fib:fib+1"]
    for entry, after_push in zip(records[0::2], records[1::2]):
        assert after_push.ts - entry.ts == 3


def test_timestamps_are_the_same_on_every_run_and_increase(arch):
    first, _ = _trace(arch, ["uprobe:fib:fib", "syscall:exit_group"])
    again, _ = _trace(arch, ["uprobe:fib:fib", "syscall:exit_group"])
    stamps = [r.ts for r in first.records]
    assert stamps == [r.ts for r in again.records]
    assert stamps == sorted(stamps)
    fib = [r.ts for r in first.records if r.probe == "uprobe:fib:fib"]
    assert len(set(fib)) == len(fib) == 15              # instructions run between any two hits
    # the whole start-up of a static musl program runs before main calls fib: hundreds of
    # instructions, not the nanoseconds of the virtual clock (3.6e12 at boot)
    assert 100 < stamps[0] < 100_000


def test_a_context_shows_the_hit_the_record_shows(arch):
    result, seen = _trace(arch, ["uprobe:fib:fib"], n=3)
    assert seen == [(r.ts, r.args[0], r.pid, r.tid) for r in result.records]
    assert [r.args[0] for r in result.records] == [3, 2, 1, 0, 1]


def test_syscall_records_are_named_after_the_syscall_on_entry_and_exit(arch):
    result, _ = _trace(arch, ["syscall:exit_group"])
    assert [(r.kind, r.name, r.addr) for r in result.records] == [
        ("syscall_entry", "exit_group", 0)]


def test_the_argument_fetcher_reads_what_argument_words_reads(arch):
    """The reader a hit's record takes its arguments with (made once per space: entry_hit.py)
    returns argument_words' tuple for every count: registers, stack words, and past six."""
    from instrumenter.probes.context import argument_fetcher, argument_words
    pairs = []

    def action(ctx):
        cpu = ctx.kernel.debug.cpu(ctx.process)
        pairs.extend((argument_fetcher(cpu, n)(), argument_words(cpu, n)) for n in range(9))
    probe = Probe(parse_probe_spec("uprobe:fib:fib"), action=action)
    assert Sandbox(probes=[probe], strategy="trampoline").run([f"samples/bin/{arch}/fib", "3"]).exit_code == 0
    assert len(pairs) == 5 * 9
    assert all(fetched == words and type(fetched) is tuple for fetched, words in pairs)
    assert {fetched[0] for fetched, _ in pairs if fetched} == {3, 2, 1, 0}


def test_a_forked_childs_records_carry_its_own_arguments(arch):
    """The record path keeps its view of a space per space: the child's hits (a copy of the
    parent's probes) read the child's registers and stack, as its action sees them."""
    seen = []

    def action(ctx):
        seen.append((ctx.timestamp, ctx.arg(0), ctx.pid, ctx.tid))
    probe = Probe(parse_probe_spec("uprobe:fork_probe:leaf"), action=action, nargs=1)
    result = Sandbox(probes=[probe], strategy="trampoline").run([f"samples/bin/{arch}/fork_probe"])
    assert result.exit_code == 0
    assert seen == [(r.ts, r.args[0], r.pid, r.tid) for r in result.records]
    assert len({pid for _, _, pid, _ in seen}) > 1            # the child's hits are among them
