"""The vDSO's unwind tables as an unwinder reads them (pyelftools standing in for libgcc's
_Unwind_Find_FDE and gdb): a PT_GNU_EH_FRAME over .eh_frame_hdr whose search table finds, for
every exported function, an FDE covering all its bytes; an ordinary function's CFA rows are
the stack depth of its code (cfa_rows.py); the i386 signal trampolines' FDEs (the "S"
augmentation, starting a byte early, as Linux's vdso32/sigreturn.S) give the CFA and every
register as read from the sigcontext the kernel's frame builder wrote."""
import io
import struct

import pytest
from elftools.dwarf.callframe import FDE
from elftools.dwarf.dwarf_expr import DWARFExprParser
from elftools.elf.elffile import ELFFile

from kernel_model.signals.frame import SavedRegisters, build_frame32, build_rt_frame32
from kernel_model.vdso.code import CFA_ROWS, CODE
from kernel_model.vdso.elf_image import vdso_image
from kernel_model.vdso.source import FUNCTIONS

TRAMPOLINES = ("__kernel_sigreturn", "__kernel_rt_sigreturn")
I386_DWARF = {"eax": 0, "ecx": 1, "edx": 2, "ebx": 3, "ebp": 5, "esi": 6, "edi": 7}


def _elf(arch):
    return ELFFile(io.BytesIO(vdso_image(arch).data))


def _fdes(arch):
    return [e for e in _elf(arch).get_dwarf_info().EH_CFI_entries() if isinstance(e, FDE)]


@pytest.mark.parametrize("arch", sorted(FUNCTIONS))
def test_the_search_table_finds_an_fde_covering_each_function(arch):
    elf, image = _elf(arch), vdso_image(arch)
    header = next(s for s in elf.iter_segments() if s["p_type"] == "PT_GNU_EH_FRAME")
    hdr = elf.get_section_by_name(".eh_frame_hdr")
    assert header["p_vaddr"] == hdr["sh_addr"] and header["p_memsz"] == hdr["sh_size"]
    version, _, _, table_enc, _, count = struct.unpack_from("<BBBBiI", image.data, hdr["sh_addr"])
    assert (version, table_enc, count) == (1, 0x3B, len(image.symbols))
    pairs = struct.unpack_from(f"<{2 * count}i", image.data, hdr["sh_addr"] + 12)
    starts = [hdr["sh_addr"] + pc for pc in pairs[::2]]
    assert starts == sorted(starts)
    by_offset = {fde.offset + elf.get_section_by_name(".eh_frame")["sh_addr"]: fde for fde in _fdes(arch)}
    for name, start in image.symbols.items():
        end = start + len(CODE[arch][name])
        # the last table entry whose pc is <= the function's first byte, as a binary search takes
        index = max(i for i, pc in enumerate(starts) if pc <= start)
        fde = by_offset[hdr["sh_addr"] + pairs[2 * index + 1]]
        low = fde.header["initial_location"]
        assert low <= start and end <= low + fde.header["address_range"], name
        signal = b"S" in fde.cie.header["augmentation"]
        assert signal == (name in TRAMPOLINES) and (low == start - 1) == signal, name


@pytest.mark.parametrize("arch", sorted(FUNCTIONS))
def test_an_ordinary_function_s_cfa_is_its_stack_depth(arch):
    sp = 7 if arch == "x86_64" else 4
    fdes = {fde.header["initial_location"]: fde for fde in _fdes(arch)}
    checked = 0
    for name, start in vdso_image(arch).symbols.items():
        if name in TRAMPOLINES:
            continue
        table = fdes[start].get_decoded().table
        assert [(row["pc"] - start, row["cfa"].offset) for row in table] == list(CFA_ROWS[arch][name])
        assert all(row["cfa"].reg == sp for row in table)
        checked += len(table) > 1
    assert checked >= (0 if arch == "x86_64" else 6)      # i386's clocks push and pop


def _frame_bytes(builder, frame_addr):
    regs = SavedRegisters(gpr={"edi": 0x1111, "esi": 0x2222, "ebp": 0x3333, "esp": 0xBFFF0000,
                               "ebx": 0x4444, "edx": 0x5555, "ecx": 0x6666, "eax": 0x7777},
                          pc=0x8048123, flags=0x246, segs={}, mask=0)
    if builder == "__kernel_sigreturn":
        pieces = build_frame32(frame_addr, 10, regs, 0xB7EC9370)
    else:
        pieces = [(0, build_rt_frame32(frame_addr, 10, regs, bytes(128), 0xB7EC9380, (0, 2, 0)))]
    memory = bytearray(2048)
    for offset, blob in pieces:
        memory[offset:offset + len(blob)] = blob
    return regs, memory


def _evaluate(expr, esp, memory, frame_addr, parser):
    value = None
    for op in parser.parse_expr(expr):
        if op.op_name == "DW_OP_breg4":
            value = esp + op.args[0]
        elif op.op_name == "DW_OP_deref":
            value = struct.unpack_from("<I", memory, value - frame_addr)[0]
        else:
            raise AssertionError(op)
    return value


@pytest.mark.parametrize("name", TRAMPOLINES)
def test_a_trampoline_s_rules_read_the_kernel_s_sigcontext(name):
    elf = _elf("i386")
    start = vdso_image("i386").symbols[name]
    fde = next(f for f in _fdes("i386") if f.header["initial_location"] == start - 1)
    parser = DWARFExprParser(elf.get_dwarf_info().structs)
    frame_addr = 0xBFFE0000
    regs, memory = _frame_bytes(name, frame_addr)
    rows = fde.get_decoded().table
    assert len(rows) == (2 if name == "__kernel_sigreturn" else 1)
    for row in rows:
        # at the trampoline's first byte the handler's ret popped pretcode; `popl %eax` then sig
        popped = 4 + 4 * (row["pc"] > start)
        esp = frame_addr + popped
        assert _evaluate(row["cfa"].expr, esp, memory, frame_addr, parser) == regs.gpr["esp"]
        for register, number in I386_DWARF.items():
            address = _evaluate(row[number].arg, esp, memory, frame_addr, parser)
            assert struct.unpack_from("<I", memory, address - frame_addr)[0] == regs.gpr[register]
        address = _evaluate(row[8].arg, esp, memory, frame_addr, parser)
        assert struct.unpack_from("<I", memory, address - frame_addr)[0] == regs.pc
