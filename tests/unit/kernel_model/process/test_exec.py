"""kernel_model.process.exec + clock: an image is built completely before anything is committed,
execve's refusals are errnos, and time is virtual."""
import pytest

from kernel_model import errno as E
from kernel_model.time.clock import EPOCH_NS, SYSCALL_COST_NS, VirtualClock
from kernel_model.errno import GuestErrno
from kernel_model.process.exec import MAX_ARG_BYTES, build_program
from kernel_model.memory.layout import PAGE
from kernel_model.memory.vm import PROT_EXEC, PROT_READ, PROT_WRITE
from kernel_model.time.clock import VirtualClock
from tests.unit.loader.elf_builder import DATA_MEMSZ, build_elf

BITS = {"i386": 32, "x86_64": 64}


def build(data, argv=(b"prog",), envp=()):
    return build_program(data, b"/bin/prog", list(argv), list(envp), seed=1, exec_count=1,
                         memory_limit=1 << 30, clock=VirtualClock())


def test_image_has_segments_heap_start_and_stack(arch):
    elf = build_elf(BITS[arch])
    program = build(elf.bytes())
    vm = program.space.vm
    assert program.entry == elf.entry
    code = vm.vma_at(elf.entry)
    assert code.perms == PROT_READ | PROT_EXEC and code.name == b"/bin/prog"
    data = vm.vma_at(elf.data_vaddr)
    # i386 without PT_GNU_STACK: READ_IMPLIES_EXEC (loader.program_headers.read_implies_exec)
    assert data.perms == PROT_READ | PROT_WRITE | (PROT_EXEC if arch == "i386" else 0)
    assert program.space.machine.mem.read(elf.data_vaddr, 4) == bytes([1, 2, 3, 4])
    assert vm.brk_start == -(-(elf.data_vaddr + DATA_MEMSZ) // PAGE) * PAGE
    stack = vm.vma_at(program.sp)
    assert stack.name == b"[stack]" and stack.end == program.space.layout.stack_top
    argc = program.space.machine.mem.read(program.sp, 4)
    assert int.from_bytes(argc, "little") == 1


def test_garbage_is_enoexec():
    with pytest.raises(GuestErrno) as info:
        build(b"#!/bin/sh\necho not an elf\n")
    assert info.value.errno == E.ENOEXEC


def test_too_many_argument_bytes_is_e2big(arch):
    with pytest.raises(GuestErrno) as info:
        build(build_elf(BITS[arch]).bytes(), argv=[b"x" * MAX_ARG_BYTES])
    assert info.value.errno == E.E2BIG


def test_at_random_depends_on_seed_only(arch):
    elf = build_elf(BITS[arch]).bytes()
    a, b = build(elf), build(elf)
    assert a.space.machine.mem.snapshot() == b.space.machine.mem.snapshot()


def test_virtual_clock_advances_only_by_guest_work():
    clock = VirtualClock()
    assert clock.realtime_ns() == EPOCH_NS
    clock.tick_syscall()
    clock.advance(500)
    clock.advance(-10)                    # a negative sleep never moves time backwards
    assert clock.realtime_ns() == EPOCH_NS + SYSCALL_COST_NS + 500
    assert clock.monotonic_ns() == 3600 * 10**9 + SYSCALL_COST_NS + 500
