"""Probe sites in stripped static binaries: the instructions that load a syscall number.

Debian's busybox-static and bash-static have no symbol table, so probes on their libc functions
go by address (``uprobe:BIN:0xADDR``). A libc syscall wrapper loads the number into eax
(``mov eax, NR``) and traps a few straight-line instructions later (x86-64 ``syscall``; i386
``int 0x80`` or glibc's ``call *%gs:0x10`` into the vDSO entry). Every such ``mov`` is a site
that each call of the wrapper passes exactly once before making the syscall, so the hits on
all of them, per pid, are that process's calls of NR through libc — which the kernel's
``syscall:NAME`` records count independently of any probe patch.
"""
from __future__ import annotations

import functools
import re
import struct

import capstone
from elftools.elf.elffile import ELFFile

# How far after the mov the trap may come: glibc loads the other arguments in between.
MAX_FOLLOWING = 4
NUMBERS = {
    "x86_64": {"write": 1, "close": 3, "dup2": 33, "execve": 59, "vfork": 58, "wait4": 61},
    "i386": {"write": 4, "close": 6, "dup2": 63, "execve": 11, "vfork": 190, "wait4": 114},
}


def _is_trap(insn) -> bool:
    text = f"{insn.mnemonic} {insn.op_str}"
    return text in ("syscall ", "int 0x80", "call dword ptr gs:[0x10]")


def _ends_straight_line(insn) -> bool:
    """A branch, call or return before the trap: the mov is not a wrapper's load."""
    groups = set(insn.groups)
    return bool(groups & {capstone.CS_GRP_JUMP, capstone.CS_GRP_CALL, capstone.CS_GRP_RET,
                          capstone.CS_GRP_INT})


def _writes_eax(insn) -> bool:
    return insn.op_str.split(",")[0].strip() in ("eax", "rax", "ax", "al")


@functools.lru_cache(maxsize=None)
def syscall_sites(path: str, arch: str, name: str) -> tuple[int, ...]:
    """Addresses of every ``mov eax, NR`` followed, in straight-line code, by the trap."""
    mode = capstone.CS_MODE_64 if arch == "x86_64" else capstone.CS_MODE_32
    md = capstone.Cs(capstone.CS_ARCH_X86, mode)
    md.detail = True
    load = b"\xb8" + struct.pack("<I", NUMBERS[arch][name])
    found = []
    with open(path, "rb") as handle:
        elf = ELFFile(handle)
        for segment in elf.iter_segments(type="PT_LOAD"):
            if not segment["p_flags"] & 1:          # PF_X
                continue
            data, base = segment.data(), segment["p_vaddr"]
            for match in re.finditer(re.escape(load), data):
                window = data[match.start():match.start() + 48]
                insns = list(md.disasm(window, base + match.start(), MAX_FOLLOWING + 1))
                if _leads_to_trap(insns):
                    found.append(base + match.start())
    return tuple(sorted(found))


def _leads_to_trap(insns) -> bool:
    if not insns or insns[0].mnemonic != "mov":
        return False
    for insn in insns[1:]:
        if _is_trap(insn):
            return True
        if _ends_straight_line(insn) or _writes_eax(insn):
            return False
    return False
