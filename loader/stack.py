"""The initial process stack, laid out exactly as Linux does for a fresh ELF process.

Two kernel steps build it (no ASLR, so no random offsets):
  * fs/exec.c: bprm->p starts one pointer below the top of the stack VMA (an 8-byte zero end
    marker on a 64-bit kernel, also for i386 processes); copy_string_kernel() puts the execve
    filename there, then copy_strings() copies envp and argv, each list last-string-first, so
    in memory (ascending): argv strings, envp strings, filename, end marker, stack_top.
  * fs/binfmt_elf.c create_elf_tables(): align p down to 16 (arch_align_stack), push the
    AT_PLATFORM string and the 16 AT_RANDOM bytes, then reserve room for the auxv and for
    argc/argv[]/NULL/envp[]/NULL and round that start down to 16 (STACK_ROUND), so the initial
    %esp/%rsp points at argc and is 16-byte aligned, as the i386 and x86-64 psABIs require.
    auxv follows envp's NULL directly; any padding sits between the auxv and the random bytes.
"""
from __future__ import annotations

import struct
from typing import NamedTuple

from loader import auxv as at
from loader.errors import LoaderError
from loader.image import LoadedImage

END_MARKER_SIZE = 8
STACK_ALIGN = 16
# Linux's AT_HWCAP on x86 is CPUID.01H:EDX; this is what the emulated CPU (Unicorn's default
# x86 model) reports for that leaf, so a guest that compares AT_HWCAP with cpuid agrees.
DEFAULT_HWCAP = 0x078B_FBFD


class InitialStack(NamedTuple):
    base: int          # lowest address of the block, == sp
    data: bytes        # bytes to write at `base`, up to stack_top
    sp: int            # initial stack pointer: points at argc
    argv_addrs: tuple[int, ...]
    envp_addrs: tuple[int, ...]
    auxv: tuple[tuple[int, int], ...]  # as written, ending with (AT_NULL, 0)
    execfn_addr: int = 0
    platform_addr: int = 0             # 0 when no platform string was given
    random_addr: int = 0
    arg_start: int = 0                 # mm->arg_start/arg_end/env_start/env_end (/proc/PID/cmdline, environ)
    arg_end: int = 0
    env_start: int = 0
    env_end: int = 0


class _DownwardWriter:
    """Places blobs below `top` the way STACK_ALLOC does: p -= len; copy to p."""

    def __init__(self, top: int):
        self.p = top
        self.blobs: list[tuple[int, bytes]] = []

    def push(self, blob: bytes) -> int:
        self.p -= len(blob)
        self.blobs.append((self.p, blob))
        return self.p

    def align_down(self, alignment: int) -> None:
        self.p &= ~(alignment - 1)


def _check_strings(kind: str, strings: list[bytes]) -> None:
    for s in strings:
        if not isinstance(s, (bytes, bytearray)):
            raise LoaderError(f"{kind} entries must be bytes, got {type(s).__name__}")
        if b"\0" in s:
            raise LoaderError(f"{kind} entry {bytes(s)!r} contains a NUL byte")


def _auxv_entries(image: LoadedImage, *, hwcap: int, hwcap2: int, pagesz: int, clktck: int, interp_base: int,
                  uid: int, euid: int, gid: int, egid: int, secure: int, random_addr: int, execfn_addr: int,
                  platform_addr: int, sysinfo: int | None, sysinfo_ehdr: int | None,
                  minsigstksz: int | None) -> list[tuple[int, int]]:
    """In create_elf_tables' order: ARCH_DLINFO first, then the generic entries, then AT_NULL."""
    entries = []
    if sysinfo is not None:  # ARCH_DLINFO_IA32: __kernel_vsyscall, only for i386 processes
        entries.append((at.AT_SYSINFO, sysinfo))
    if sysinfo_ehdr is not None:
        entries.append((at.AT_SYSINFO_EHDR, sysinfo_ehdr))
    if minsigstksz is not None:
        entries.append((at.AT_MINSIGSTKSZ, minsigstksz))
    entries += [
        (at.AT_HWCAP, hwcap), (at.AT_PAGESZ, pagesz), (at.AT_CLKTCK, clktck),
        (at.AT_PHDR, image.phdr_addr), (at.AT_PHENT, image.phent), (at.AT_PHNUM, image.phnum),
        (at.AT_BASE, interp_base), (at.AT_FLAGS, 0), (at.AT_ENTRY, image.entry),
        (at.AT_UID, uid), (at.AT_EUID, euid), (at.AT_GID, gid), (at.AT_EGID, egid),
        (at.AT_SECURE, secure), (at.AT_RANDOM, random_addr), (at.AT_HWCAP2, hwcap2),
        (at.AT_EXECFN, execfn_addr),
    ]
    if platform_addr:
        entries.append((at.AT_PLATFORM, platform_addr))
    entries.append((at.AT_NULL, 0))
    return entries


def _pack_words(values: list[int], word_size: int) -> bytes:
    limit = 1 << (8 * word_size)
    for value in values:
        if not 0 <= value < limit:
            raise LoaderError(f"initial stack value {value:#x} does not fit a {word_size * 8}-bit word")
    return struct.pack(f"<{len(values)}{'Q' if word_size == 8 else 'I'}", *values)


def _push_strings(writer: _DownwardWriter, strings: list[bytes]) -> tuple[int, ...]:
    """copy_strings() copies the last string first, so the list ends up in order, ascending."""
    addrs = [writer.push(bytes(s) + b"\0") for s in reversed(strings)]
    return tuple(reversed(addrs))


def build_initial_stack(image: LoadedImage, argv: list[bytes], envp: list[bytes], *, stack_top: int,
                        random16: bytes, execfn: bytes, platform: bytes, hwcap: int = DEFAULT_HWCAP,
                        hwcap2: int = 0, uid: int = 0, euid: int = 0, gid: int = 0, egid: int = 0,
                        secure: int = 0, clktck: int = 100, pagesz: int = 4096, interp_base: int = 0,
                        sysinfo_ehdr: int | None = None, sysinfo: int | None = None,
                        minsigstksz: int | None = None) -> InitialStack:
    """The bytes from the initial stack pointer up to `stack_top`, and where everything is."""
    _check_strings("argv", argv)
    _check_strings("envp", envp)
    _check_strings("execfn", [execfn])
    _check_strings("platform", [platform])
    if len(random16) != 16:
        raise LoaderError(f"AT_RANDOM needs exactly 16 bytes, got {len(random16)}")
    if stack_top % STACK_ALIGN or stack_top <= 0:
        raise LoaderError(f"stack_top {stack_top:#x} is not a 16-byte aligned address")
    word = image.word_size

    writer = _DownwardWriter(stack_top - END_MARKER_SIZE)
    execfn_addr = writer.push(bytes(execfn) + b"\0")
    envp_addrs = _push_strings(writer, envp)
    argv_addrs = _push_strings(writer, argv)
    writer.align_down(STACK_ALIGN)
    platform_addr = writer.push(bytes(platform) + b"\0") if platform else 0
    random_addr = writer.push(bytes(random16))

    auxv = _auxv_entries(image, hwcap=hwcap, hwcap2=hwcap2, pagesz=pagesz, clktck=clktck,
                         interp_base=interp_base, uid=uid, euid=euid, gid=gid, egid=egid, secure=secure,
                         random_addr=random_addr, execfn_addr=execfn_addr, platform_addr=platform_addr,
                         sysinfo=sysinfo, sysinfo_ehdr=sysinfo_ehdr, minsigstksz=minsigstksz)
    items = (len(argv) + 1) + (len(envp) + 1) + 1  # argv[] + NULL, envp[] + NULL, argc
    sp = (writer.p - 2 * len(auxv) * word - items * word) & ~(STACK_ALIGN - 1)
    if sp <= 0:
        raise LoaderError("arguments and environment do not fit below stack_top")
    table = [len(argv), *argv_addrs, 0, *envp_addrs, 0] + [v for pair in auxv for v in pair]
    writer.blobs.append((sp, _pack_words(table, word)))

    block = bytearray(stack_top - sp)
    for addr, blob in writer.blobs:
        block[addr - sp:addr - sp + len(blob)] = blob
    arg_end = envp_addrs[0] if envp_addrs else execfn_addr
    return InitialStack(base=sp, data=bytes(block), sp=sp, argv_addrs=argv_addrs, envp_addrs=envp_addrs,
                        auxv=tuple(auxv), execfn_addr=execfn_addr, platform_addr=platform_addr,
                        random_addr=random_addr, arg_start=argv_addrs[0] if argv_addrs else arg_end,
                        arg_end=arg_end, env_start=arg_end, env_end=execfn_addr)
