"""The modeled CPU: what CPUID answers, decided in one place (docs/ARCHITECTURE.md, "Dynamic loading").

glibc picks its string and memory functions by CPUID (ifuncs), ld.so checks the ISA level of
libraries, and programs test feature bits before using an instruction. So CPUID must advertise
what the emulator executes correctly, and nothing that breaks determinism:

- The table is what Unicorn 2.1.4's default x86 CPU answers (a Haswell-class "Intel Core
  Processor (Haswell)", family 6 model 0x3c), recorded once, so that the answers do not change
  with the emulator's version and are the same for every run.
- AVX, AVX2, AVX-512, FMA and XSAVEC stay off (CPUID.01H:ECX bits 28 and 12, CPUID.07H:EBX
  bits 5 and 16+, CPUID.(0DH,1):EAX bit 1): Unicorn does not execute them correctly
  (unicorn#1879, #1913: glibc's __strlen_evex; #2218), and glibc then picks its SSE2 code.
- RDRAND (CPUID.01H:ECX bit 30) is cleared: Unicorn's RDRAND returns host randomness, and a
  program that saw the bit would make runs differ. RDSEED (CPUID.07H:EBX bit 18) is off already.
- A leaf above the maximum returns the highest basic leaf's data, as Intel CPUs do (SDM Vol. 2A,
  CPUID: "If a value entered for CPUID.EAX is higher than the maximum input value...").

Linux's AT_HWCAP on x86 is CPUID.01H:EDX; loader/stack.py's DEFAULT_HWCAP is that word.
"""
from __future__ import annotations

RDRAND = 1 << 30

# (leaf, subleaf) -> (eax, ebx, ecx, edx). Leaves without subleaves are stored at subleaf 0
# and answer every ECX.
_LEAVES: dict[tuple[int, int], tuple[int, int, int, int]] = {
    (0x0, 0): (0xD, 0x756E6547, 0x6C65746E, 0x49656E69),              # max leaf 0xd, "GenuineIntel"
    (0x1, 0): (0x306C4, 0x800, 0xCED82203 & ~RDRAND, 0x78BFBFD),
    (0x2, 0): (0x1, 0x0, 0x0, 0x2C307D),
    (0x4, 0): (0x121, 0x1C0003F, 0x3F, 0x1),                          # L1d
    (0x4, 1): (0x122, 0x1C0003F, 0x3F, 0x1),                          # L1i
    (0x4, 2): (0x143, 0x3C0003F, 0xFFF, 0x1),                         # L2
    (0x4, 3): (0x0, 0x0, 0x0, 0x0),
    (0x6, 0): (0x4, 0x0, 0x0, 0x0),
    (0x7, 0): (0x0, 0x389, 0x0, 0x0),                                 # FSGSBASE BMI1 SMEP BMI2 ERMS
    (0x7, 1): (0x0, 0x0, 0x0, 0x0),
    (0xB, 0): (0x0, 0x0, 0x0, 0x0),
    (0xD, 0): (0x7, 0x240, 0x340, 0x0),                               # XSAVE area sizes
    (0xD, 1): (0x1, 0x0, 0x0, 0x0),                                   # XSAVEOPT only
    (0xD, 2): (0x100, 0x240, 0x0, 0x0),
    (0x80000000, 0): (0x80000008, 0x756E6547, 0x6C65746E, 0x49656E69),
    (0x80000001, 0): (0x306C4, 0x0, 0x21, 0x28100800),                # LAHF LZCNT, SYSCALL NX 1G LM
    (0x80000002, 0): (0x65746E49, 0x6F43206C, 0x50206572, 0x65636F72),  # "Intel Core Processor (Haswell)"
    (0x80000003, 0): (0x726F7373, 0x61482820, 0x6C657773, 0x296C),
    (0x80000004, 0): (0x0, 0x0, 0x0, 0x0),
    (0x80000005, 0): (0x1FF01FF, 0x1FF01FF, 0x40020140, 0x40020140),
    (0x80000006, 0): (0x0, 0x42004200, 0x2008140, 0x0),
    (0x80000007, 0): (0x0, 0x0, 0x0, 0x0),
    (0x80000008, 0): (0x3028, 0x0, 0x0, 0x0),                         # 40-bit physical, 48-bit virtual
}
_WITH_SUBLEAVES = frozenset(leaf for leaf, sub in _LEAVES if sub)
MAX_BASIC = _LEAVES[(0x0, 0)][0]
MAX_EXTENDED = _LEAVES[(0x80000000, 0)][0]


def cpuid(leaf: int, subleaf: int) -> tuple[int, int, int, int]:
    """EAX, EBX, ECX, EDX of `cpuid` with EAX=leaf, ECX=subleaf on the modeled CPU."""
    leaf &= 0xFFFFFFFF
    if leaf > MAX_EXTENDED or MAX_BASIC < leaf < 0x80000000:
        leaf = MAX_BASIC
    sub = subleaf & 0xFFFFFFFF if leaf in _WITH_SUBLEAVES else 0
    return _LEAVES.get((leaf, sub), (0, 0, 0, 0))


def hwcap() -> int:
    """Linux's AT_HWCAP for x86: CPUID.01H:EDX (arch/x86/include/asm/elf.h ELF_HWCAP)."""
    return cpuid(1, 0)[3]


def install(uc, state=None):
    """Answer every CPUID the guest executes from the table (a UC_HOOK_INSN hook for
    UC_X86_INS_CPUID; returning 1 tells Unicorn the instruction is handled). Returns what the
    caller must keep referenced while the hook is installed, or None.

    With `state`, direct views of the CPU state (cpu_state.py), the hook is a raw one
    (raw_hooks.py) that reads and writes the registers' low halves through the views: what
    uc_reg_read/uc_reg_write of EAX..EDX do (in 64-bit mode WRITE_DWORD keeps the upper
    halves), without the binding's wrapper and four binding register writes. A static glibc
    program runs ~23 cpuid at start, so every exec paid them (docs/benchmarks.md)."""
    from unicorn import UC_HOOK_INSN
    from unicorn import x86_const as X

    from .cpu_state import CpuStateViews      # imported here: the table's users need no Unicorn
    if isinstance(state, CpuStateViews):
        return _install_viewed(uc, state, UC_HOOK_INSN, X.UC_X86_INS_CPUID)
    out = (X.UC_X86_REG_EAX, X.UC_X86_REG_EBX, X.UC_X86_REG_ECX, X.UC_X86_REG_EDX)

    def on_cpuid(uc, _user) -> int:
        answer = cpuid(uc.reg_read(X.UC_X86_REG_EAX), uc.reg_read(X.UC_X86_REG_ECX))
        for register, value in zip(out, answer):
            uc.reg_write(register, value)
        return 1

    uc.hook_add(UC_HOOK_INSN, on_cpuid, None, 1, 0, X.UC_X86_INS_CPUID)
    return None


def _install_viewed(uc, state, hook_insn: int, insn_cpuid: int):
    import ctypes

    from .internals.binding import HOOK_INSN_CPUID_CFUNC

    from .raw_hooks import add_raw_hook, hook_failed

    eax, ecx = state.register("eax"), state.register("ecx")
    # Written as whole slots: in 64-bit mode CPUID clears the upper halves of RAX..RDX (SDM
    # Vol. 2A, CPUID: "the high-order 32 bits ... are cleared"); in 32-bit mode they are unseen.
    rax, rbx, rcx, rdx = (state.register(name) for name in ("rax", "rbx", "rcx", "rdx"))

    def on_cpuid(_handle, _user) -> int:
        try:
            rax.value, rbx.value, rcx.value, rdx.value = cpuid(eax.value, ecx.value)
        except BaseException as error:          # noqa: B036 - re-raised by emu_start
            hook_failed(uc, error)
        return 1

    return add_raw_hook(uc, hook_insn, HOOK_INSN_CPUID_CFUNC, on_cpuid, ctypes.c_int(insn_cpuid))


# Linux's names of the feature bits (arch/x86/include/asm/cpufeatures.h), in /proc/cpuinfo's
# order: (leaf, register index, bit, name). Only bits that can be set in the table are listed.
_FLAG_BITS = (
    *((1, 3, bit, name) for bit, name in (
        (0, "fpu"), (1, "vme"), (2, "de"), (3, "pse"), (4, "tsc"), (5, "msr"), (6, "pae"),
        (7, "mce"), (8, "cx8"), (9, "apic"), (11, "sep"), (12, "mtrr"), (13, "pge"), (14, "mca"),
        (15, "cmov"), (16, "pat"), (17, "pse36"), (19, "clflush"), (23, "mmx"), (24, "fxsr"),
        (25, "sse"), (26, "sse2"), (27, "ss"))),
    *((0x80000001, 3, bit, name) for bit, name in (
        (11, "syscall"), (20, "nx"), (26, "pdpe1gb"), (27, "rdtscp"), (29, "lm"))),
    *((1, 2, bit, name) for bit, name in (
        (0, "pni"), (1, "pclmulqdq"), (9, "ssse3"), (12, "fma"), (13, "cx16"), (19, "sse4_1"),
        (20, "sse4_2"), (22, "movbe"), (23, "popcnt"), (25, "aes"), (26, "xsave"), (28, "avx"),
        (30, "rdrand"), (31, "hypervisor"))),
    *((0x80000001, 2, bit, name) for bit, name in ((0, "lahf_lm"), (5, "abm"))),
    *((7, 1, bit, name) for bit, name in (
        (0, "fsgsbase"), (3, "bmi1"), (5, "avx2"), (7, "smep"), (8, "bmi2"), (9, "erms"),
        (18, "rdseed"))),
    *((0xD, 0, bit, name) for bit, name in ((0, "xsaveopt"), (1, "xsavec"))),
)


def linux_flags() -> list[str]:
    """The `flags` of /proc/cpuinfo for the modeled CPU (what Linux prints for its bits)."""
    return [name for leaf, register, bit, name in _FLAG_BITS
            if cpuid(leaf, 1 if leaf == 0xD else 0)[register] >> bit & 1]


def signature() -> tuple[int, int, int]:
    """(family, model, stepping) of CPUID.01H:EAX, with the extended fields (SDM Vol. 2A)."""
    eax = cpuid(1, 0)[0]
    family, model, stepping = eax >> 8 & 0xF, eax >> 4 & 0xF, eax & 0xF
    if family in (6, 15):
        model |= (eax >> 16 & 0xF) << 4
    if family == 15:
        family += eax >> 20 & 0xFF
    return family, model, stepping


def brand() -> str:
    """The processor brand string of leaves 0x80000002-4."""
    words = [word for leaf in (0x80000002, 0x80000003, 0x80000004) for word in cpuid(leaf, 0)]
    return b"".join(word.to_bytes(4, "little") for word in words).rstrip(b"\0").decode().strip()
