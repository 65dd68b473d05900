"""User handlers (instrumenter/strategies/handlers/user.py, object_file.py): assembly and
relocatable objects become code for any address; what cannot be used is one line."""
import struct
from pathlib import Path

import pytest
from elftools.elf.elffile import ELFFile

from instrumenter.errors import InstrumenterError
from instrumenter.insn.decode import decode
from instrumenter.strategies.handlers.user import load_handler

HANDLERS = Path(__file__).resolve().parents[5] / "samples" / "handlers"
ARCHES = ("i386", "x86_64")


@pytest.mark.parametrize("arch", ARCHES)
def test_assembly_is_assembled_where_it_is_placed(arch, tmp_path):
    source = tmp_path / "h.s"
    source.write_text("# a comment\n  jmp done   // skip\n  nop\ndone:\n  ret\n")
    handler = load_handler(str(source))
    size = handler.code_size(arch)
    for at in (0x1000, 0x7000_0000):
        image = handler.image(arch, at, 0)
        assert (len(image.code), image.entry) == (size, at)
        jump = decode(image.code, at, arch)
        assert jump.branch_target == at + size - 1            # `done`, wherever it lands


def _relocations(path, name):
    with open(path, "rb") as f:
        section = ELFFile(f).get_section_by_name(name)
        return [(r["r_offset"], r["r_info_type"], r.entry.get("r_addend")) for r in
                section.iter_relocations()]


@pytest.mark.parametrize("arch", ARCHES)
def test_an_object_is_relocated_for_its_code_and_data_addresses(arch):
    path = HANDLERS / arch / "limit_n.o"
    handler = load_handler(f"{path}:limit_n")
    data_size = handler.data_size(arch)         # .data (limits, the pointer to them), .bss
    code_at, data_at = 0x40_1000, 0x40_9000
    image = handler.image(arch, code_at, data_at)
    assert image.entry == code_at and len(image.data) == data_size
    rela = ".rela" if arch == "x86_64" else ".rel"
    # The pointer in .data (R_X86_64_64 / R_386_32 to .data + the offset of `limits`).
    [(offset, _, addend)] = _relocations(path, rela + ".data")
    word, fmt = (8, "<Q") if arch == "x86_64" else (4, "<I")
    pointer = struct.unpack_from(fmt, image.data, offset)[0]
    assert data_at <= pointer < data_at + data_size and pointer % word == 0
    if addend is not None:
        assert pointer == data_at + addend
    text = _relocations(path, rela + ".text")
    if arch == "x86_64":
        # R_X86_64_PC32: rip (the end of the field) + disp lands in the data, at .data or .bss
        for off, _, addend in text:
            disp = struct.unpack_from("<i", image.code, off)[0]
            assert data_at <= code_at + off + 4 + disp - addend - 4 < data_at + data_size
    else:
        # GOTOFF: symbol + A - GOT, so GOT + field lands in the data
        got_at = code_at + len(image.code)
        for off, kind, _ in text[1:]:
            assert kind == 9
            assert data_at <= got_at + struct.unpack_from("<i", image.code, off)[0] < data_at + data_size


@pytest.mark.parametrize("arch", ARCHES)
def test_a_shared_objects_function_is_copied_whole_and_its_relative_relocations_applied(arch):
    path = HANDLERS / arch / "limit_n.so"
    handler = load_handler(f"{path}:limit_n")
    code_at = 0x50_0000
    image = handler.image(arch, code_at, 0)
    with open(path, "rb") as f:
        elf = ELFFile(f)
        symbol = elf.get_section_by_name(".dynsym").get_symbol_by_name("limit_n")[0]
        rel = elf.get_section_by_name(".rela.dyn" if arch == "x86_64" else ".rel.dyn")
        [relocation] = list(rel.iter_relocations())
    assert image.entry == code_at + symbol["st_value"]
    fmt = "<Q" if arch == "x86_64" else "<I"
    value = struct.unpack_from(fmt, image.code, relocation["r_offset"])[0]
    addend = relocation.entry.get("r_addend")
    if addend is not None:
        assert value == code_at + addend                             # R_X86_64_RELATIVE
    else:
        assert code_at < value < code_at + handler.code_size(arch)   # R_386_RELATIVE


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("spec,message", [
    ("{d}/calls_libc.o:calls_libc", r"R_(X86_64|386)_PLT32 at \.text\+0x[0-9a-f]+ refers to 'puts', "
                                    "which is not in the object"),
    ("{d}/limit_n.o:nothing", "no symbol 'nothing' defined in it"),
    ("{d}/limit_n.o", "expected FILE.s"),
    ("{d}/limit_n.s:x", "expected FILE.s|not an ELF object"),
    ("{d}/missing.o:f", "No such file"),
])
def test_what_cannot_be_used_is_one_line(arch, spec, message):
    with pytest.raises(InstrumenterError, match=message) as error:
        load_handler(spec.format(d=HANDLERS / arch))
    assert "\n" not in str(error.value)


def test_an_object_for_the_other_arch_is_refused_when_placed():
    handler = load_handler(f"{HANDLERS / 'i386' / 'limit_n.o'}:limit_n")
    with pytest.raises(InstrumenterError, match="built for i386, the probed process runs x86_64"):
        handler.code_size("x86_64")


def test_assembly_that_does_not_assemble_says_why():
    handler = load_handler(str(HANDLERS / "x86_64" / "limit_n.s"))
    with pytest.raises(InstrumenterError, match=r"\(i386\): cannot assemble"):
        handler.code_size("i386")


def test_only_an_entry_uprobes_hook_has_a_handler_to_call():
    from types import SimpleNamespace

    from instrumenter.strategies.handlers.user import handler_of
    from instrumenter.probes.definitions import Probe
    from trapline.probespec import parse_probe_spec
    handler = load_handler(str(HANDLERS / "x86_64" / "count.s"))
    entry = Probe(parse_probe_spec("uprobe:fib:fib"), handler=handler)
    ret = Probe(parse_probe_spec("uretprobe:fib:fib"), handler=handler)
    assert handler_of(SimpleNamespace(probe=entry)) is handler
    assert handler_of(SimpleNamespace(probe=ret)) is None                  # its entry hook
    assert handler_of(SimpleNamespace(probe=SimpleNamespace())) is None    # an IFUNC watch
    assert handler_of(object()) is None


@pytest.mark.parametrize("strategy", ["auto", "jump", "trampoline"])
def test_a_handler_that_cannot_run_is_refused_before_anything_is_patched(strategy, tmp_path):
    """An i386-only instruction in an x86-64 handler: the refusal names the probe and the
    handler in one line, under auto too (not as every strategy's failure), and leaves the
    probed text as it was: a jump site half made by the first attempt had made the next
    strategy say the address was already patched."""
    import io

    from instrumenter.probes.definitions import Probe
    from instrumenter.probes.records import Buffers
    from instrumenter.tracing.session import Session
    from kernel_model.fs import CapturedOutput
    from kernel_model.kernel import Kernel, KernelConfig
    from trapline.probespec import parse_probe_spec
    source = tmp_path / "bad.s"
    source.write_text("pushad\nret\n")                      # no PUSHAD in 64-bit mode
    kernel = Kernel(KernelConfig(stdin=CapturedOutput(), stdout=CapturedOutput(),
                                 stderr=CapturedOutput(), report=io.StringIO()))
    path = str(HANDLERS.parents[1] / "samples" / "bin" / "x86_64" / "fib").encode()
    proc = kernel.spawn(path, [path, b"5"], [])
    probe = Probe(parse_probe_spec("uprobe:fib:fib"), handler=load_handler(str(source)))
    session = Session(kernel, [probe], buffers=Buffers(drain=lambda records: None), strategy=strategy)
    with pytest.raises(InstrumenterError) as refused:
        session.attach(proc)
    assert str(refused.value).startswith(f"uprobe:fib:fib: handler {source} (x86_64): cannot assemble")
    assert "no strategy" not in str(refused.value) and "\n" not in str(refused.value)
    assert kernel.debug.patches_overlapping(proc, 0, 1 << 47) == []
