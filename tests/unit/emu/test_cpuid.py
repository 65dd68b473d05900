"""emu/cpuid.py: the modeled CPU answers every CPUID from its one table, on both arches."""
from hypothesis import given, strategies as st

from emu.cpuid import MAX_BASIC, RDRAND, cpuid, hwcap
from loader.stack import DEFAULT_HWCAP

from .guest import CODE, machine_with

AVX, FMA, XSAVEC = 1 << 28, 1 << 12, 1 << 1
AVX2, AVX512F, RDSEED = 1 << 5, 1 << 16, 1 << 18


def _run_cpuid(arch: str, leaf: int, subleaf: int) -> tuple[int, ...]:
    m = machine_with(arch, f"mov eax, {leaf:#x}; mov ecx, {subleaf:#x}; cpuid; nop")
    m.run(CODE, count=4)
    names = ("eax", "ebx", "ecx", "edx") if arch == "i386" else ("rax", "rbx", "rcx", "rdx")
    return tuple(m.reg(name) & 0xFFFFFFFF for name in names)


def test_guest_cpuid_is_the_table(arch):
    for leaf, subleaf in ((0, 0), (1, 0), (4, 1), (7, 0), (0xD, 1), (0x80000001, 0)):
        assert _run_cpuid(arch, leaf, subleaf) == cpuid(leaf, subleaf)


def test_nothing_the_emulator_cannot_run_or_that_is_not_deterministic():
    ecx = cpuid(1, 0)[2]
    assert not ecx & (AVX | FMA | RDRAND)
    assert not cpuid(7, 0)[1] & (AVX2 | AVX512F | RDSEED)
    assert not cpuid(0xD, 1)[0] & XSAVEC


def test_at_hwcap_is_cpuid_leaf_1_edx():
    assert DEFAULT_HWCAP == hwcap() == cpuid(1, 0)[3]


@given(st.integers(0, 0xFFFFFFFF), st.integers(0, 0xFFFFFFFF))
def test_out_of_range_leaves_answer_like_the_highest_basic_leaf(leaf, subleaf):
    """SDM Vol. 2A CPUID: above the maximum input value, the highest basic leaf's data."""
    if MAX_BASIC < leaf < 0x80000000 or leaf > cpuid(0x80000000, 0)[0]:
        assert cpuid(leaf, subleaf) == cpuid(MAX_BASIC, subleaf)
    assert all(0 <= word <= 0xFFFFFFFF for word in cpuid(leaf, subleaf))


def test_proc_cpuinfo_describes_the_same_cpu():
    """/proc/cpuinfo's fields come from the table the guest's cpuid reads."""
    from kernel_model.fs.proctext import CPUINFO
    from emu.cpuid import linux_flags, signature
    flags = linux_flags()
    assert "xsave" in flags and "sse4_2" in flags and "lm" in flags
    assert not {"avx", "avx2", "rdrand", "rdseed", "fma"} & set(flags)
    text = CPUINFO.decode()
    assert f"flags\t\t: {' '.join(flags)}\n" in text
    assert "model\t\t: %d\n" % signature()[1] in text and "GenuineIntel" in text


def test_cpuid_clears_the_upper_halves_in_64_bit_mode():
    """SDM Vol. 2A, CPUID: in 64-bit mode the high 32 bits of RAX, RBX, RCX and RDX are cleared."""
    m = machine_with("x86_64", "mov rax, -1; mov rbx, rax; mov rcx, rax; mov rdx, rax; "
                               "mov eax, 1; cpuid; nop")
    m.run(CODE, count=6)
    assert (m.reg("rax"), m.reg("rbx"), m.reg("rcx"), m.reg("rdx")) == cpuid(1, 0)
