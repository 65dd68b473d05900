"""The initial stack, word by word, for both word sizes (Linux create_elf_tables layout)."""
from __future__ import annotations

import struct

import pytest

from loader import auxv as at
from loader.elf import load_elf
from loader.errors import LoaderError
from loader.stack import DEFAULT_HWCAP, build_initial_stack
from tests.unit.loader.elf_builder import build_elf

RANDOM = bytes(range(0xA0, 0xB0))
LINUX_ORDER = [at.AT_HWCAP, at.AT_PAGESZ, at.AT_CLKTCK, at.AT_PHDR, at.AT_PHENT, at.AT_PHNUM, at.AT_BASE,
               at.AT_FLAGS, at.AT_ENTRY, at.AT_UID, at.AT_EUID, at.AT_GID, at.AT_EGID, at.AT_SECURE,
               at.AT_RANDOM, at.AT_HWCAP2, at.AT_EXECFN, at.AT_PLATFORM, at.AT_NULL]
STACK_TOP = {32: 0xBFFFF000, 64: 0x7FFFFFFFF000}


class StackView:
    """Reads the built block as guest memory would."""

    def __init__(self, stack, word: int):
        self.stack, self.word = stack, word
        self.fmt = "<Q" if word == 8 else "<I"

    def word_at(self, addr: int) -> int:
        return struct.unpack_from(self.fmt, self.stack.data, addr - self.stack.base)[0]

    def bytes_at(self, addr: int, n: int) -> bytes:
        return self.stack.data[addr - self.stack.base:addr - self.stack.base + n]

    def cstring_at(self, addr: int) -> bytes:
        start = addr - self.stack.base
        return self.stack.data[start:self.stack.data.index(b"\0", start)]


def _build(bits: int, argv, envp, **kw):
    image = load_elf(build_elf(bits).bytes())
    options = dict(stack_top=STACK_TOP[bits], random16=RANDOM, execfn=b"/usr/bin/prog",
                   platform=b"x86_64" if bits == 64 else b"i686")
    options.update(kw)
    stack = build_initial_stack(image, argv, envp, **options)
    return image, stack, StackView(stack, bits // 8)


ARGS = [
    ([b"prog"], []),
    ([b"prog", b"-v", b"hello world"], [b"HOME=/root", b"PATH=/bin"]),
    ([], []),
    ([b"a" * 100, b""], [b"X=" + b"y" * 33]),
    ([b"p", b"q", b"r", b"s"], [b"A=1", b"B=2", b"C=3"]),
]


@pytest.mark.parametrize("bits", [32, 64])
@pytest.mark.parametrize("argv, envp", ARGS)
def test_layout_word_by_word(bits, argv, envp):
    image, stack, view = _build(bits, argv, envp)
    word = bits // 8
    top = STACK_TOP[bits]
    # psABI: at process entry the stack pointer is 16-byte aligned and points at argc.
    assert stack.sp == stack.base and stack.sp % 16 == 0
    assert len(stack.data) == top - stack.sp
    addr = stack.sp
    assert view.word_at(addr) == len(argv)
    addr += word
    for i, arg in enumerate(argv):
        assert view.word_at(addr) == stack.argv_addrs[i]
        assert view.cstring_at(stack.argv_addrs[i]) == arg
        addr += word
    assert view.word_at(addr) == 0
    addr += word
    for i, env in enumerate(envp):
        assert view.word_at(addr) == stack.envp_addrs[i]
        assert view.cstring_at(stack.envp_addrs[i]) == env
        addr += word
    assert view.word_at(addr) == 0
    addr += word
    pairs = []
    while True:
        key, value = view.word_at(addr), view.word_at(addr + word)
        pairs.append((key, value))
        addr += 2 * word
        if key == at.AT_NULL:
            break
    assert tuple(pairs) == stack.auxv
    assert [key for key, _ in pairs] == LINUX_ORDER
    auxv = dict(pairs)
    assert auxv[at.AT_PHDR] == image.phdr_addr and auxv[at.AT_PHENT] == image.phent
    assert auxv[at.AT_PHNUM] == image.phnum and auxv[at.AT_ENTRY] == image.entry
    assert (auxv[at.AT_PAGESZ], auxv[at.AT_CLKTCK], auxv[at.AT_HWCAP], auxv[at.AT_HWCAP2]) == (4096, 100,
                                                                                                DEFAULT_HWCAP, 0)
    assert (auxv[at.AT_BASE], auxv[at.AT_FLAGS], auxv[at.AT_SECURE]) == (0, 0, 0)
    assert view.bytes_at(auxv[at.AT_RANDOM], 16) == RANDOM
    assert view.cstring_at(auxv[at.AT_EXECFN]) == b"/usr/bin/prog"
    assert view.cstring_at(auxv[at.AT_PLATFORM]) == (b"x86_64" if bits == 64 else b"i686")

    # Between the auxv and the random bytes only the STACK_ROUND padding (< 16 bytes, zero).
    assert 0 <= auxv[at.AT_RANDOM] - addr < 16
    assert view.bytes_at(addr, auxv[at.AT_RANDOM] - addr) == bytes(auxv[at.AT_RANDOM] - addr)
    # AT_RANDOM directly below AT_PLATFORM, which sits right under the 16-aligned string area.
    assert auxv[at.AT_RANDOM] + 16 == auxv[at.AT_PLATFORM] == stack.platform_addr
    strings_start = stack.argv_addrs[0] if argv else (stack.envp_addrs[0] if envp else stack.execfn_addr)
    assert auxv[at.AT_PLATFORM] + len(view.cstring_at(auxv[at.AT_PLATFORM])) + 1 == strings_start & ~15

    # bprm->p order: argv strings, envp strings, execfn, 8-byte zero end marker, stack_top; contiguous.
    cursor = strings_start
    for s, a in zip(argv + envp + [b"/usr/bin/prog"], stack.argv_addrs + stack.envp_addrs + (stack.execfn_addr,)):
        assert a == cursor
        cursor += len(s) + 1
    assert cursor == top - 8
    assert view.bytes_at(top - 8, 8) == bytes(8)
    assert (stack.arg_start, stack.env_end) == (strings_start, stack.execfn_addr)


def test_golden_i386_layout():
    """Hand-computed: top-8=0xbfffeff8; "/bin/prog" at ...efee, "X=1" at ...efea, "a" at ...efe8,
    "prog" at ...efe3; align -> ...efe0; "i686" at ...efdb; random at ...efcb; 19 auxv pairs (152
    bytes) + 6 words (24 bytes) below that: 0xbfffef1b, rounded down to 16: 0xbfffef10."""
    image = load_elf(build_elf(32).bytes())
    stack = build_initial_stack(image, [b"prog", b"a"], [b"X=1"], stack_top=0xBFFFF000, random16=RANDOM,
                                execfn=b"/bin/prog", platform=b"i686")
    assert stack.sp == 0xBFFFEF10
    assert stack.argv_addrs == (0xBFFFEFE3, 0xBFFFEFE8) and stack.envp_addrs == (0xBFFFEFEA,)
    assert (stack.execfn_addr, stack.platform_addr, stack.random_addr) == (0xBFFFEFEE, 0xBFFFEFDB, 0xBFFFEFCB)
    assert stack.data[:24] == struct.pack("<6I", 2, 0xBFFFEFE3, 0xBFFFEFE8, 0, 0xBFFFEFEA, 0)


@pytest.mark.parametrize("bits", [32, 64])
def test_sp_alignment_for_every_small_argc(bits):
    for argc in range(8):
        for envc in range(3):
            _, stack, view = _build(bits, [b"x" * argc] * argc, [b"E=" + b"v" * envc] * envc)
            assert stack.sp % 16 == 0 and view.word_at(stack.sp) == argc


def test_vdso_entries_come_first_in_arch_dlinfo_order():
    _, stack, _ = _build(32, [b"p"], [], sysinfo=0xF7FFC000 + 0x570, sysinfo_ehdr=0xF7FFC000, minsigstksz=0x6F0)
    assert stack.auxv[:4] == ((at.AT_SYSINFO, 0xF7FFC570), (at.AT_SYSINFO_EHDR, 0xF7FFC000),
                              (at.AT_MINSIGSTKSZ, 0x6F0), (at.AT_HWCAP, DEFAULT_HWCAP))
    _, stack, _ = _build(64, [b"p"], [], sysinfo_ehdr=0x7FFFF7FC1000)
    assert stack.auxv[0] == (at.AT_SYSINFO_EHDR, 0x7FFFF7FC1000) and stack.auxv[1][0] == at.AT_HWCAP


def test_identity_and_interp_values_are_passed_through():
    _, stack, _ = _build(64, [b"p"], [], uid=1000, euid=1001, gid=100, egid=101, secure=1, hwcap=0x1234,
                         hwcap2=2, clktck=250, interp_base=0x7F0000000000)
    auxv = dict(stack.auxv)
    assert (auxv[at.AT_UID], auxv[at.AT_EUID], auxv[at.AT_GID], auxv[at.AT_EGID]) == (1000, 1001, 100, 101)
    assert (auxv[at.AT_SECURE], auxv[at.AT_HWCAP], auxv[at.AT_HWCAP2], auxv[at.AT_CLKTCK]) == (1, 0x1234, 2, 250)
    assert auxv[at.AT_BASE] == 0x7F0000000000


def test_no_platform_string_means_no_at_platform():
    _, stack, view = _build(64, [b"p"], [], platform=b"")
    keys = [key for key, _ in stack.auxv]
    assert at.AT_PLATFORM not in keys and stack.platform_addr == 0
    assert stack.random_addr + 16 == stack.argv_addrs[0] & ~15


def test_same_inputs_same_bytes():
    assert _build(64, [b"a", b"b"], [b"C=d"])[1] == _build(64, [b"a", b"b"], [b"C=d"])[1]


@pytest.mark.parametrize("kw, pattern", [
    (dict(random16=b"short"), "AT_RANDOM needs exactly 16 bytes"),
    (dict(stack_top=0xBFFFF008), "not a 16-byte aligned"),
    (dict(execfn=b"/bin/a\0b"), "contains a NUL byte"),
    (dict(uid=1 << 32), "does not fit a 32-bit word"),
])
def test_bad_stack_requests(kw, pattern):
    with pytest.raises(LoaderError, match=pattern):
        _build(32, [b"p"], [], **kw)


@pytest.mark.parametrize("argv, envp", [([b"a\0b"], []), ([b"p"], [b"X=\0"]), (["text"], [])])
def test_arguments_must_be_nul_free_bytes(argv, envp):
    with pytest.raises(LoaderError, match="argv|envp"):
        _build(64, argv, envp)


def test_auxv_names():
    assert at.auxv_name(at.AT_RANDOM) == "AT_RANDOM" and at.auxv_name(999) == "AT_999"
