"""The walk-up on a dynamic Debian binary (issue 18: a library hot spot): Debian's `sort`, which is
stripped, runs most of its time in libc.so.6 (whose local functions are stripped too). Hot spots
in the library get their identifying hooks there (placed by address in the object that holds
them), and their callers in the stripped program are found by the `.eh_frame` FDE that covers
the return address, named `sort+0xOFF` from the function's start, hooked and walked up like
named ones. The output is the unprofiled run's."""
import pytest

from instrumenter.profiler.walkup import WalkUpOptions
from loader.cfi import CallFrameTable
from loader.elf import load_elf_file
from loader.image import PERM_X
from trapline.profile.walkup_run import run_full, run_walkup
from trapline.sandbox import Sandbox

pytestmark = pytest.mark.e2e
ARGV = ["/usr/bin/sort", "/usr/share/common-licenses/GPL-3"]
PIE_BASE = {"amd64": 0x555555554000, "i386": 0x56555000}       # Linux's, randomization off
PC_THUNKS = {bytes([0x8B, modrm, 0x24, 0xC3]) for modrm in range(0x04, 0x40, 8)}   # mov (%esp),REG; ret


@pytest.mark.parametrize("deb_arch", ["amd64", "i386"])
def test_library_hot_spots_are_walked_up_into_the_stripped_program(debian_rootfs, deb_arch):
    rootfs = str(debian_rootfs[deb_arch])
    # sort takes ~140 samples at this interval; libc.so.6 holds ~30 of them, so a function of it
    # reaches the threshold within a window only just: 15, since glibc's start-up finds the
    # vDSO through its GNU hash table and one of libc's samples moved to sort
    options = WalkUpOptions(threshold=15, window=30, period=30)
    run = run_walkup(Sandbox(rootfs=rootfs), ARGV, interval=5_000, options=options)
    assert run.result.exit_code == 0
    assert run.result.stdout == Sandbox(rootfs=rootfs).run(ARGV).stdout
    walk = run.walk
    spots = list(walk.detector.decided)
    assert any(f.module == "libc.so.6" for f in spots), spots
    learned = [(caller, entry.function) for entry in walk.callers for caller in entry.callers]
    assert any(caller.module == "sort" and callee.module == "libc.so.6" for caller, callee in learned), learned
    stripped = {f for pair in learned for f in pair if f.module == "sort"}
    # each named from its function's start, the FDE's initial location, as a stack report names it
    sort = load_elf_file(str(debian_rootfs[deb_arch] / ARGV[0].lstrip("/")), pie_base=PIE_BASE[deb_arch])
    table = CallFrameTable(sort)
    for f in stripped:
        assert f.name == f"sort+{f.entry - PIE_BASE[deb_arch]:#x}" and table.fde_range(f.entry)[0] == f.entry
    hooked = {s.function for s in walk.timeline if s.action == "insert"}
    assert stripped & hooked, (stripped, hooked)
    unnamed = [where for entry in walk.callers for where in entry.unnamed]
    assert not [where for where in unnamed if where.startswith("sort+")]
    if deb_arch == "i386":
        # called from ld.so's lazy-binding trampoline (the PLT jumps there with two words pushed):
        # its FDE does not begin at a called entry, so it is no function; named, never hooked
        assert unnamed == ["ld-linux.so.2+0x128f0"]
        ld_so = load_elf_file(str(debian_rootfs[deb_arch] / "usr/lib/i386-linux-gnu/ld-linux.so.2"),
                              pie_base=0x10000)
        ld_table = CallFrameTable(ld_so)
        start = ld_table.fde_range(0x10000 + 0x128f0 - 1)[0]
        assert ld_table.rule_at(start).cfa == ("esp", 12) and ld_so.symbols.function_at(start) is None
    assert run.cost.strategies and sum(run.cost.strategies.values()) == len(walk.hooks.placed)
    inserted = sorted(s.function for s in walk.timeline if s.action == "insert")
    removed = [s.function for s in walk.timeline if s.action == "remove"]
    assert inserted == sorted(removed + [e.function for e in walk.callers.instrumented()])


@pytest.mark.parametrize("deb_arch", ["amd64", "i386"])
def test_full_instrumentation_hooks_the_stripped_program(debian_rootfs, deb_arch):
    """The comparison's baseline hooks every function of sort's stripped code at entry and exit
    (and its libraries', as they are mapped):
    each FDE that starts at a called entry (the return address at [sp]; not the PLT's, not the
    `.cold` parts that begin inside their function's frame, not `_start`), but i386's PIC thunks
    (`mov (%esp),%ebx; ret` returns its own return address, which the armed exit replaces):
    with them hooked, sort died of SIGSEGV."""
    rootfs = str(debian_rootfs[deb_arch])
    cost, full = run_full(Sandbox(rootfs=rootfs), ARGV)
    assert cost.exit_code == 0 and cost.stdout == Sandbox(rootfs=rootfs).run(ARGV).stdout
    assert cost.functions == len(list(full.callers)) and cost.hooks > 10_000
    # sort's own functions; libc's and ld.so's are hooked as well (full.py: every module)
    assert {"sort", "libc.so.6"} <= {e.function.module for e in full.callers}
    hooked = {e.function.entry for e in full.callers if e.function.module == "sort"}
    assert len(hooked) > 200
    sort = load_elf_file(str(debian_rootfs[deb_arch] / ARGV[0].lstrip("/")), pie_base=PIE_BASE[deb_arch])
    text = next(s for s in sort.segments if s.perms & PERM_X)
    table, word = CallFrameTable(sort), sort.bits // 8
    sp, ip = ("esp", "eip") if word == 4 else ("rsp", "rip")
    entries = {a for a in table.fde_starts() if text.vaddr <= a < text.vaddr + text.filesz
               and table.rule_at(a).cfa == (sp, word) and table.rule_at(a).saved.get(ip) == ("at", -word)}
    thunks = {a for a in entries if text.data[a - text.vaddr:a - text.vaddr + 4] in PC_THUNKS}
    assert bool(thunks) == (deb_arch == "i386")
    assert hooked == entries - thunks
