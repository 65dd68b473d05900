"""The walk-up on stripped programs (issue 18): with no symbol table, the hot function and each
caller are the functions their `.eh_frame` FDEs bound (loader/cfi.py fde_range), named
"PROGRAM+0xOFF" from their start as stack reports name stripped code, hooked at entry and exit
through the same hooks as named functions, and walked up level by level.

Two programs, stripped with binutils' `strip` (which keeps `.eh_frame` and `.eh_frame_hdr`):
  * samples/callchain of both arches (musl, built by zig): the walk on the stripped copy takes
    the steps the walk on the named program takes, function for function and count for count;
    only its top differs — `main` has no name, so it is hooked like any caller, and never
    entered again (it was entered once, before any hook), where the named walk stops at it.
  * a glibc program built by the host's gcc (x86-64 only: the host has no gcc -m32) with a hot
    leaf under three levels of callers, linked -static as gcc does (without the FDE search
    table, `.eh_frame_hdr`: loader/cfi.py finds the FDEs from the section headers, since strip
    removes the `__EH_FRAME_BEGIN__` symbol) and with `-Wl,--eh-frame-hdr`. The program counts its own calls; the
    counts each level's hooks saw equal what the program counted while they were in. Its
    `_start` (glibc's) names main, where the walk stops as on the named program.
  * the same program linked dynamically, in a root of its own with the host's ld.so and libc:
    full instrumentation (the comparison's baseline) hooks the functions of its stripped code
    too, and counts what the program counts.
"""
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from instrumenter.profiler.walkup import WalkUp, WalkUpOptions
from loader.elf import load_elf_file
from trapline.profile.walkup_run import Comparison, run_baseline, run_full, run_walkup
from trapline.sandbox import Sandbox

from ..rooted import rooted
from ..static_c import build_static

ROOT = Path(__file__).resolve().parents[3]
SAMPLES = ROOT / "samples" / "bin"

pytestmark = pytest.mark.e2e

PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>

unsigned long n_hot, n_level1, n_level2, n_level3;

__attribute__((noinline)) unsigned hot(unsigned x)
{
    n_hot++;
    for (int i = 0; i < 200; i++)
        x = x * 1664525u + 1013904223u;
    return x;
}

__attribute__((noinline)) unsigned level1(unsigned x)
{
    n_level1++;
    for (unsigned i = 0; i < 4; i++)
        x = hot(x + i);
    return x + 1;
}

__attribute__((noinline)) unsigned level2(unsigned x)
{
    n_level2++;
    for (unsigned i = 0; i < 3; i++)
        x = level1(x ^ i);
    return x + 1;
}

__attribute__((noinline)) unsigned level3(unsigned x)
{
    n_level3++;
    for (unsigned i = 0; i < 2; i++)
        x = level2(x + i);
    return x + 1;
}

int main(int argc, char **argv)
{
    unsigned rounds = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 10) : 50, x = 1;
    for (unsigned r = 0; r < rounds; r++)
        x = level3(x);
    printf("chain(%u) = %08x hot=%lu level1=%lu level2=%lu level3=%lu\n",
           rounds, x, n_hot, n_level1, n_level2, n_level3);
    return 0;
}
"""
LEVELS = ("hot", "level1", "level2", "level3")
PIE_BASE = 0x555555554000               # Linux's for a PIE program, randomization off


def _strip(program: Path, folder: Path) -> Path:
    """A stripped copy of `program` under the same name in `folder` (the guest's argv[0] and
    so its instruction counts stay those of the named program)."""
    folder.mkdir()
    copy = folder / program.name
    shutil.copy(program, copy)
    subprocess.run(["strip", str(copy)], check=True)
    assert load_elf_file(str(copy)).symbols.functions() == ()
    return copy


def _by_entry(walk) -> dict:
    return {e.function.entry: e for e in walk.callers}


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_the_stripped_sample_is_walked_like_the_named_one(arch, tmp_path):
    named_program = SAMPLES / arch / "callchain"
    stripped_program = _strip(named_program, tmp_path / "stripped")
    options = WalkUpOptions(window=20, period=20, threshold=50, min_calls=13, exclusive="exact")
    named = run_walkup(*rooted([named_program, "100"]), interval=1_000, options=options).walk
    run = run_walkup(*rooted([stripped_program, "100"]), interval=1_000, options=options)
    assert run.result.stdout == run_baseline(*rooted([named_program, "100"])).stdout
    walk = run.walk
    symbols = load_elf_file(str(named_program)).symbols
    base = load_elf_file(str(named_program)).segments[0].vaddr
    name_of = {f.addr: f.name for f in symbols.functions()}
    (spot,) = walk.detector.decided
    assert name_of[spot.entry] == "leaf" and spot.name == f"callchain+{spot.entry - base:#x}"
    levels = {name_of[e.function.entry]: e.level for e in walk.chains()[spot]}
    assert levels == {"leaf": 0, "inner": 1, "spiral": 1, "middle": 2, "outer": 3, "main": 2}
    mine, theirs = _by_entry(walk), _by_entry(named)
    # the stripped main, measured (never entered again), keeps the callees hooked at its
    # insertion timed for the rest of the run: their hooks run more than on the named program
    (main,) = [e for e in walk.chains()[spot] if name_of[e.function.entry] == "main"]
    assert {name_of[f.entry] for f in main.timed} == {"spiral"}     # the level that reached it
    for name in ("leaf", "inner", "spiral", "middle", "outer"):
        entry, named_entry = mine[symbols.lookup(name).addr], theirs[symbols.lookup(name).addr]
        assert entry.function.name == f"callchain+{entry.function.entry - base:#x}"
        assert (entry.level, entry.state) == (named_entry.level, named_entry.state), name
        if entry.function not in main.timed:
            assert entry.hook_runs == named_entry.hook_runs, name
        m, n = entry.metric, named_entry.metric
        assert (m.invocations, m.returns, m.abandoned) == (n.invocations, n.returns, n.abandoned), name
        assert {f.entry: c for f, c in entry.callers.items()} == \
            {f.entry: c for f, c in named_entry.callers.items()}, name
        assert not entry.unnamed and not entry.uncertain
    for name in ("inner", "spiral", "middle", "outer"):
        m = mine[symbols.lookup(name).addr].metric
        assert (m.invocations, m.returns, m.abandoned) == (20, 20, 0)
    # the named walk stops at main; the stripped one hooks it, and it is never entered again
    main = mine[symbols.lookup("main").addr]
    assert [f.name for f in named.tops[next(iter(named.detector.decided))]] == ["main"]
    assert (main.state, main.metric.invocations) == ("measuring", 0)
    assert [e.function for e in walk.callers.instrumented()] == [main.function]
    steps = [(s.action, s.kind, name_of[s.function.entry]) for s in walk.timeline]
    named_steps = [(s.action, s.kind, s.function.name) for s in named.timeline if s.action != "top"]
    # (the timing hooks differ: the stripped main keeps spiral timed, see above)
    assert [s for s in steps if s[2] != "main" and s[1] != "time"] == \
        [s for s in named_steps if s[2] != "main" and s[1] != "time"]
    assert not walk.activations.still_open()


@pytest.fixture(scope="module", params=[(), ("-Wl,--eh-frame-hdr",)], ids=["gcc-static", "eh-frame-hdr"])
def chain(tmp_path_factory, request) -> tuple[Path, Path]:
    """(the named program, its stripped copy)."""
    named = build_static(tmp_path_factory, "chain", PROGRAM, flags=request.param)
    stripped = _strip(named, tmp_path_factory.mktemp("stripped") / "s")
    assert _has_eh_frame_hdr(stripped) == bool(request.param)
    return named, stripped


def _has_eh_frame_hdr(program: Path) -> bool:
    headers = subprocess.run(["readelf", "-lW", str(program)], capture_output=True, text=True, check=True)
    return "GNU_EH_FRAME" in headers.stdout


def test_the_stripped_chain_counts_what_the_program_counts(chain, monkeypatch):
    named, stripped = chain
    image = load_elf_file(str(named))
    counters = {name: image.symbols.lookup(f"n_{name}").addr for name in LEVELS}
    seen = []                           # (step, the program's own counters when it was taken)
    log = WalkUp._log

    def counting_log(self, step):
        (process,) = self.door.live_processes()
        seen.append((step, {name: struct.unpack("<Q", self.door.read_memory(process, addr, 8))[0]
                            for name, addr in counters.items()}))
        log(self, step)

    monkeypatch.setattr(WalkUp, "_log", counting_log)
    # threshold 30: glibc's static start-up sets the vDSO up (setup_vdso: its link map, the
    # first calloc, and the clocks looked up by version), ~4200 instructions as on Linux, so
    # the first window of 20 samples holds 6 of the hot leaf (11 without a vDSO): at 50 %
    # none reached it and the top three were taken, start-up code among them
    run = run_walkup(*rooted([stripped, "100"]), interval=1_000,
                     options=WalkUpOptions(window=20, period=20, threshold=30))
    assert run.result.stdout.endswith(b" hot=2400 level1=600 level2=200 level3=100\n")
    walk = run.walk
    entry_of = {image.symbols.lookup(name).addr: name for name in (*LEVELS, "main")}
    base = image.segments[0].vaddr
    (spot,) = walk.detector.decided
    chain = {entry_of[e.function.entry]: e for e in walk.chains()[spot]}
    assert {name: e.level for name, e in chain.items()} == \
        {"hot": 0, "level1": 1, "level2": 2, "level3": 3}
    for name, entry in chain.items():
        assert entry.function == ("chain", f"chain+{entry.function.entry - base:#x}",
                                  image.symbols.lookup(name).addr)
    # glibc's _start names main (instrumenter/profiler/start_code.py): the walk stops there,
    # as on the named program, instead of hooking a main that is never entered again
    (top,) = walk.tops[spot]
    assert top == ("chain", "main", image.symbols.lookup("main").addr)
    for name in LEVELS[1:]:
        entry = chain[name]
        (inserted,) = [c for s, c in seen if s.function == entry.function and s.action == "insert"
                       and s.kind == "measure"]
        (removed,) = [c for s, c in seen if s.function == entry.function and s.action == "remove"
                      and s.kind == "measure"]
        # the hooks were taken out by the entry hook of the period's last call, before the
        # function's body counted that call itself
        counted = removed[name] + 1 - inserted[name]
        m = entry.metric
        assert (m.invocations, m.returns, m.abandoned, entry.state) == (counted, counted, 0, "done"), name
        assert counted == 20
        callee = chain[LEVELS[LEVELS.index(name) - 1]]
        assert entry.function in callee.callers and not callee.uncertain and not callee.unnamed
    assert not any(e.function.name == "main" for e in walk.callers.instrumented())
    assert not walk.activations.still_open()


@pytest.fixture(scope="module")
def dynamic_root(tmp_path_factory) -> Path:
    """A root holding the program linked dynamically (gcc's default, with .eh_frame_hdr) and
    stripped, as /chain, with the host's ld.so and libc it was linked against."""
    work = tmp_path_factory.mktemp("dynchain")
    (work / "chain.c").write_text(PROGRAM)
    subprocess.run(["gcc", "-O1", "-o", "chain", "chain.c"], cwd=work, check=True)
    root = work / "root"
    _strip(work / "chain", root)
    for library in ("/lib64/ld-linux-x86-64.so.2", "/lib/x86_64-linux-gnu/libc.so.6"):
        (root / library.lstrip("/")).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(Path(library).resolve(), root / library.lstrip("/"))
    return root


def test_full_instrumentation_hooks_and_counts_the_stripped_functions(dynamic_root):
    sandbox, argv = Sandbox(rootfs=str(dynamic_root), clear_env=True), ["/chain", "100"]
    cost, full = run_full(sandbox, argv)
    assert cost.exit_code == 0 and cost.stdout.endswith(b" hot=2400 level1=600 level2=200 level3=100\n")
    named = load_elf_file(str(dynamic_root.parent / "chain"), pie_base=PIE_BASE).symbols
    counts = {e.function.entry: e.metric.invocations for e in full.callers}
    assert {name: counts[named.lookup(name).addr] for name in (*LEVELS, "main")} == \
        {"hot": 2400, "level1": 600, "level2": 200, "level3": 100, "main": 1}
    main = named.lookup("main").addr          # named from _start (start_code.py), the rest by offset
    mine = [e for e in full.callers if e.function.module == "chain"]
    assert all(e.function.name == ("main" if e.function.entry == main else
                                   f"chain+{e.function.entry - PIE_BASE:#x}") for e in mine)
    # every call of the program's functions returned (exit's own does not: libc's are hooked too)
    assert sum(e.hook_runs for e in mine) == 2 * sum(e.metric.invocations for e in mine)
    assert {e.function.module for e in full.callers} >= {"chain", "libc.so.6"}
    assert cost.hooks == sum(e.hook_runs for e in full.callers)
    walkup = run_walkup(sandbox, argv, interval=1_000, options=WalkUpOptions(window=20, period=20, threshold=50))
    # compare()'s three runs, its fully instrumented one being `cost` above: the same program,
    # argv and rootfs give the same run, and the dynamic libc's full instrumentation is most of
    # this test's time
    c = Comparison(run_baseline(sandbox, argv), walkup.cost, cost)
    assert c.baseline.stdout == c.full.stdout == c.walkup.stdout
    assert c.full.functions == len(counts) and c.full.hooks > 10 * c.walkup.hooks > 0


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_full_instrumentation_of_a_stripped_static_program_counts_what_the_named_one_does(arch, tmp_path):
    """Full instrumentation hooks a static program's FDE-bounded functions too, leaving out by
    their code those that read their own return address (return_slot.py: a static libc's
    setjmp and vfork are among them, nameless): the stripped callchain's functions
    count what the named program's do, and its output is the unhooked run's."""
    named_program = SAMPLES / arch / "callchain"
    program = _strip(named_program, tmp_path / "stripped")
    named_cost, named = run_full(*rooted([named_program, "60"]))
    cost, full = run_full(*rooted([program, "60"]))
    assert cost.stdout == named_cost.stdout == run_baseline(*rooted([named_program, "60"])).stdout
    name_of = {f.addr: f.name for f in load_elf_file(str(named_program)).symbols.functions()}
    counts = {name_of[e.function.entry]: e.metric.invocations for e in full.callers
              if e.function.entry in name_of}
    named_counts = {e.function.name: e.metric.invocations for e in named.callers}
    for name in ("leaf", "inner", "middle", "outer", "spiral", "main"):
        assert counts[name] == named_counts[name] > 0, name
    assert cost.functions > 50 and cost.hooks == sum(e.hook_runs for e in full.callers)


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_stripped_hooks_pair_their_exits_in_threads_and_longjmp(arch, tmp_path):
    """samples/hotchain stripped: threads, recursion (dig) and longjmps out of level1/level2
    run through the FDE-bounded functions' hooks as through named ones — every entry seen is
    returned, abandoned by a longjmp, or still open, and the output is the unprofiled run's."""
    named_program = SAMPLES / arch / "hotchain"
    argv = [_strip(named_program, tmp_path / "stripped"), "40", "5"]
    # dig takes ~1/3 of hot's calls: whether the walk-up climbs into it depends on where the
    # samples fall, which the schedule moves (at threshold 30, x86-64's block quanta do not)
    options = WalkUpOptions(threshold=25, window=20, min_calls=20, period=30)
    run = run_walkup(*rooted(argv), interval=1_000, options=options)
    assert run.result.stdout == run_baseline(*rooted([named_program, "40", "5"])).stdout
    walk = run.walk
    name_of = {f.addr: f.name for f in load_elf_file(str(named_program)).symbols.functions()}
    open_by: dict = {}
    for activation in walk.activations.still_open():
        open_by[activation.entry.function] = open_by.get(activation.entry.function, 0) + 1
    measured = [e for e in walk.callers if e.level > 0]
    assert {"level1", "level2", "level3", "dig", "hot"} <= {name_of[e.function.entry] for e in measured}
    for entry in measured:
        m = entry.metric
        assert m.returns + m.abandoned + open_by.get(entry.function, 0) == m.invocations
    assert sum(e.metric.abandoned for e in measured) >= 1
    assert len(walk.activations.by_tid) >= 2
    assert walk.hooks.executed == sum(e.hook_runs for e in walk.callers)
