"""Issue 15: the door keeps the tools' patches, so every client of the debug interface (the
instrumenter, a debugger, any tool) reads the program's own bytes under them, and a write
through the door into a patched range changes the program's bytes while the patch stays.
"""
import pytest

from instrumenter.probes.definitions import Probe
from loader.elf import load_elf_file
from trapline import Sandbox
from trapline.probespec import parse_probe_spec

from .test_probes_fib import fibonacci
from ..samples.test_samples_run import SAMPLES
from tests.quick_profile import alternates


def _original(binary, address: int, size: int) -> bytes:
    image = load_elf_file(str(binary))
    segment = next(s for s in image.segments if s.vaddr <= address < s.vaddr + s.memsz)
    return segment.data[address - segment.vaddr:address - segment.vaddr + size]


@pytest.mark.e2e
@pytest.mark.parametrize("arch", ["i386", "x86_64"])
@pytest.mark.parametrize("strategy", ["trampoline", "jump", "emulate", "singlestep"])
@alternates("arch")
def test_a_write_over_a_probe_through_the_door_keeps_the_probe(arch, strategy):
    """At every hit a client of the door reads the site (the original bytes, not the int3 or
    jump the raw view shows) and writes those bytes back over it, as a naive debugger
    'restoring' code would: the patch stays, so every call is still seen."""
    binary = SAMPLES / arch / "fib"
    seen, raw = [], []

    def action(ctx):
        debug = ctx.kernel.debug
        data = debug.read_memory(ctx.process, ctx.address, 5)
        seen.append(data)
        raw.append(debug.read_memory_raw(ctx.process, ctx.address, 5))
        debug.write_memory(ctx.process, ctx.address, data)
    probe = Probe(parse_probe_spec("uprobe:fib:fib"), action=action)
    result = Sandbox(probes=[probe], strategy=strategy).run([str(binary), "10"])
    assert result.exit_code == 0 and result.stdout.strip().endswith(str(fibonacci(10)).encode())
    calls = result.hits["uprobe:fib:fib"]
    assert calls == 177 and len(seen) == calls
    fib = load_elf_file(str(binary)).symbols.lookup("fib").addr
    assert set(seen) == {_original(binary, fib, 5)}
    if strategy != "singlestep":          # singlestep's window has the original in place
        assert all(r != seen[0] for r in raw)
