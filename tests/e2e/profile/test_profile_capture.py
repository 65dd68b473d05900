"""The timer's C handler on real programs (issue 18's overhead work): Debian's `sort`, dynamic,
stripped, glibc and libstdc++-free code without frame pointers, PLT stubs whose CFI is a DWARF
expression. The handler walks what the profiler taught it and declines the rest; the samples are
exactly those of the same run with every tick delivered through the IDT and unwound live."""
import pytest

from instrumenter.profiler.sampler import Sampler
from trapline.sandbox import Sandbox

ARGV = ["/usr/bin/sort", "/usr/share/common-licenses/GPL-3"]


def _profile(rootfs: str, native: bool):
    samplers, samples = [], []

    def attach(kernel, process):
        sampler = Sampler(kernel.debug, interval=1_000, on_sample=samples.append, native=native)
        sampler.attach(process)
        samplers.append(sampler)

    result = Sandbox(rootfs=rootfs, tools=[attach]).run(ARGV)
    return result, samples, samplers[0]


@pytest.mark.parametrize("deb_arch", ["amd64", "i386"])
def test_captured_samples_of_a_debian_binary_are_the_live_ones(debian_rootfs, deb_arch):
    rootfs = str(debian_rootfs[deb_arch])
    live_result, live, live_sampler = _profile(rootfs, native=False)
    result, captured, sampler = _profile(rootfs, native=True)
    assert result.stdout == live_result.stdout and result.exit_code == live_result.exit_code == 0
    assert len(captured) > 50 and captured == live
    assert live_sampler.captured == 0
    assert sampler.captured >= len(captured) // 2, (sampler.captured, len(captured))


def test_an_i386_pic_thunk_without_symbol_or_fde_is_unwound(debian_rootfs):
    """Debian's i386 libjq calls __x86.get_pc_thunk.bx (`mov (%esp),%ebx; ret` at +0x60e0),
    which strip leaves with neither a symbol nor an FDE: a tick on its first instruction finds
    the return address on the stack top, as on its `ret` (4 % of jq's samples were truncated
    there). The C handler is taught the same step. A tick every 9 973 instructions (a prime, as
    the 997 it replaces, so ticks land anywhere in the loops) takes a tenth of the samples, and
    the thunk, which jq calls all the time, still gets many of them on its first instruction."""
    rootfs = str(debian_rootfs["i386"])
    argv = ["/usr/bin/jq", "-n", "[range(2000)]|add"]
    runs = {}
    for native in (False, True):
        samples, samplers = [], []

        def attach(kernel, process, native=native, samples=samples, samplers=samplers):
            sampler = Sampler(kernel.debug, interval=9_973, on_sample=samples.append, native=native)
            sampler.attach(process)
            samplers.append(sampler)

        result = Sandbox(rootfs=rootfs, tools=[attach]).run(argv)
        assert result.exit_code == 0 and result.stdout.strip() == b"1999000"
        runs[native] = samples, samplers[0]
    (live, _), (captured, sampler) = runs[False], runs[True]
    assert captured == live and sampler.captured > 0
    in_thunk = [s for s in captured if s.frames[0].module.startswith("libjq")
                and s.frames[0].function is None and s.frames[0].offset == 0x60E0]
    assert in_thunk and not any(s.truncated for s in in_thunk)
    assert all(s.frames[1].module.startswith("libjq") for s in in_thunk)   # its caller
