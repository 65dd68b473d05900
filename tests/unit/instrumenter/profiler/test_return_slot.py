"""instrumenter/profiler/return_slot.py: functions that read their own return address, found by
their code (what full instrumentation must not give an exit hook), with hand-assembled bytes in
the shapes glibc and musl have them."""
import pytest

from instrumenter.profiler.return_slot import uses_return_address
from kernel_model.debug import MemoryFault

BASE = 0x1000


def _check(code: bytes, arch: str = "x86_64", entry: int = BASE, functions=None) -> bool:
    """`code` at BASE; `functions`: [(start, end)] bounds (default: all of it, one function)."""
    functions = functions or [(BASE, BASE + len(code))]

    def read(address, size):
        if not BASE <= address or address + size > BASE + len(code):
            raise MemoryFault(f"{address:#x}")
        return code[address - BASE:address - BASE + size]

    def bounds(address):
        return next(((s, e) for s, e in functions if s <= address < e), None)

    return uses_return_address(read, entry, arch, bounds)


SIGSETJMP = (b"\x48\x89\x1f"              # mov %rbx,(%rdi)
             b"\x48\x89\xe8"              # mov %rbp,%rax
             b"\x48\x8d\x54\x24\x08"      # lea 0x8(%rsp),%rdx   (the caller's sp: no read)
             b"\x48\x8b\x04\x24"          # mov (%rsp),%rax      (the return address)
             b"\x48\x89\x47\x38"          # mov %rax,0x38(%rdi)
             b"\xc3")


def test_setjmp_reads_it_and_a_tail_call_to_it_too():
    assert _check(SIGSETJMP)
    # _setjmp: xor %esi,%esi; jmp __sigsetjmp (rel8 back to BASE)
    setjmp = b"\x31\xf6\xeb" + bytes([(-(len(SIGSETJMP) + 4)) & 0xFF])
    code = SIGSETJMP + setjmp
    assert _check(code, entry=BASE + len(SIGSETJMP),
                  functions=[(BASE, BASE + len(SIGSETJMP)), (BASE + len(SIGSETJMP), BASE + len(code))])


def test_vfork_pops_it():
    # glibc: endbr64; pop %rdi; mov $58,%eax; syscall; push %rdi; ret
    assert _check(b"\xf3\x0f\x1e\xfa\x5f\xb8\x3a\x00\x00\x00\x0f\x05\x57\xc3")
    assert _check(b"\x59\xb8\xbe\x00\x00\x00\xcd\x80\x51\xc3", arch="i386")     # pop %ecx...


def test_the_slot_is_followed_through_pushes_and_frames():
    # push %rbp; push %rbx; sub $0x38,%rsp; mov 0x48(%rsp),%rax: 0x38 + 2 words = the slot
    assert _check(b"\x55\x53\x48\x83\xec\x38\x48\x8b\x44\x24\x48\xc3")
    # ... and 0x40(%rsp) is the saved %rbp, 0x50(%rsp) the first stack argument's slot
    assert not _check(b"\x55\x53\x48\x83\xec\x38\x48\x8b\x44\x24\x40\xc3")
    assert not _check(b"\x55\x53\x48\x83\xec\x38\x48\x8b\x44\x24\x50\xc3")
    # a call returns with sp as it was: mov (%rsp) after it still reads the slot
    assert _check(b"\xe8\x00\x00\x00\x00\x48\x8b\x04\x24\xc3")


def test_the_i386_pic_thunk_reads_it():
    assert _check(b"\x8b\x1c\x24\xc3", arch="i386")


def test_ordinary_functions_do_not():
    # push %rbp; mov %rsp,%rbp; pop %rbp; ret: the pop takes what the push put
    assert not _check(b"\x55\x48\x89\xe5\x5d\xc3")
    # sub $8,%rsp; mov (%rsp),%rax reads a local
    assert not _check(b"\x48\x83\xec\x08\x48\x8b\x04\x24\xc3")


def test_the_path_ends_with_its_function():
    """After a call that never returns (exit), the bytes that follow are the next function's:
    its `pop` is not this function's."""
    first = b"\xe8\x00\x00\x00\x00"                 # call (noreturn)
    second = b"\x5f\xc3"                            # pop %rdi; ret  (a vfork-like neighbour)
    code = first + second
    split = [(BASE, BASE + len(first)), (BASE + len(first), BASE + len(code))]
    assert not _check(code, functions=split)
    assert _check(code, entry=BASE + len(first), functions=split)


@pytest.mark.parametrize("code", [b"\xff\xe0", b"\x48\x89\xc4\xc3", b""])
def test_it_stops_where_it_cannot_follow(code):
    """jmp *%rax, mov %rax,%rsp, and code it cannot read: no finding, no error."""
    assert not _check(code or b"\x90", entry=BASE + len(code or b"\x90") if not code else BASE)
