"""Profiling Debian's bash-static (issue 18: "runs real programs of both arches"): linked -static
by gcc and stripped, it has neither a symbol table nor `.eh_frame_hdr`, and its stacks are
walked with the `.eh_frame` the section headers locate (loader/cfi.py), as gdb and perf read it;
its code is named by the functions those FDEs bound (symbolize.py), and the stub of its `.plt`
(the IFUNCs' IRELATIVE slots, without an FDE) is stepped out of (frameless.py). Before, 2 874
of its 4 017 amd64 stacks were truncated and every sampled instruction was a "function" of its
own."""
from collections import Counter

import pytest

from instrumenter.profiler.unwind import Unwinder
from loader.elf import load_elf_file
from trapline.profile.session import run_profiled
from trapline.sandbox import Sandbox

pytestmark = pytest.mark.e2e

SCRIPT = "i=0; while [ $i -lt 200 ]; do i=$((i+1)); done; echo $i"


@pytest.fixture(params=["amd64", "i386"])
def bash_static(request, debian_bins):
    return debian_bins[request.param]["bash"]


def test_its_fdes_are_found_without_eh_frame_hdr_or_symbols(bash_static):
    image = load_elf_file(str(bash_static))
    assert not image.symbols.functions() and image.symbols.lookup("__EH_FRAME_BEGIN__") is None
    table = Unwinder(None).table_for(image)
    assert table.problem is None and len(table.fde_starts()) > 4_000


def _in_sections(address: int, sections, names) -> bool:
    return any(name in sections and sections[name][0] <= address < sum(sections[name])
               for name in names)


def test_its_stacks_unwind_and_its_samples_count_functions(bash_static):
    run = run_profiled(Sandbox(clear_env=True), [str(bash_static), "-c", SCRIPT], interval=2_000)
    assert run.result.stdout == b"200\n"
    samples = run.profile.samples
    truncated = [s for s in samples if s.truncated]
    assert len(samples) > 1_000 and len(truncated) <= len(samples) // 100
    # the .plt stubs included; crti.o's .init and .fini have no CFI in glibc's build, so a
    # sample in a PC thunk they call (i386) stops there, as perf's unwinder would
    sections = load_elf_file(str(bash_static)).sections
    no_cfi = [s for s in truncated if "no CFI" in s.truncated]
    assert all(_in_sections(s.frames[-1].address, sections, (".init", ".fini")) for s in no_cfi)
    # every bash-static frame is named by the function its FDE bounds: far fewer names than PCs
    plt_start, plt_size = load_elf_file(str(bash_static)).sections[".plt"]
    leaves = [s.frames[0] for s in samples if s.frames[0].module == bash_static.name]
    in_plt = [f for f in leaves if plt_start <= f.address < plt_start + plt_size]
    assert in_plt and all(f.function is None for f in in_plt)      # stubs are no function
    named = [f for f in leaves if f.function is not None]
    assert all(f.function.startswith(f"{bash_static.name}+0x") or f.function == "main" for f in named)
    # unnamed: the .plt, i386 PIC thunks and code whose FDE is missing or unreadable
    assert len(named) >= 0.9 * len(leaves)
    by_function = Counter(f.function for f in leaves)
    assert len(by_function) * 4 < len({f.address for f in leaves})
    # the stacks reach the thread's start: the outermost frames are one function, _start's
    roots = Counter(s.frames[-1].function for s in samples if not s.truncated)
    assert len(roots) == 1


def test_the_walk_up_and_its_comparison_with_full_instrumentation(bash_static):
    """--walk-up --compare-full on bash-static: full instrumentation hooks its ~4 000
    FDE-bounded functions (none that reads its own return address: setjmp, the i386 PIC
    thunks), the walk-up a few dozen; the output is the unhooked run's either way."""
    from instrumenter.profiler.walkup import WalkUpOptions
    from trapline.profile.walkup_run import compare, run_walkup

    argv = [str(bash_static), "-c", "i=0; while [ $i -lt 20 ]; do i=$((i+1)); done; echo $i"]
    sandbox = Sandbox(clear_env=True)
    run = run_walkup(sandbox, argv, interval=2_000, options=WalkUpOptions())
    c = compare(sandbox, argv, run)
    assert c.baseline.stdout == c.full.stdout == c.walkup.stdout == b"20\n"
    assert c.full.functions > 4_000 and 0 < c.walkup.hooks < c.full.hooks // 10
