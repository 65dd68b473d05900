"""kernel_model.process.fork: what a child gets of its parent.

copy_space is checked on its own (every area with its permissions, name, offset and the bytes
the parent wrote, the break, the TLS descriptors; the copy is the child's alone). Then small
guest programs fork, vfork and clone(CLONE_FILES) on both ABIs: the child writes a byte of the
stack and closes fd 1, the parent waits for it and writes that byte to fd 1. What the parent
sees tells what was copied and what was shared:

  fork                   memory copied, fd table copied:  the parent's own byte, written
  vfork                  memory shared, fd table copied:  the child's byte, written
  clone(CLONE_FILES)     memory copied, fd table shared:  nothing (fd 1 is closed for both)
"""
import io

import pytest

from kernel_model.process.fork import CLONE_FILES, copy_space
from kernel_model.fs import CapturedOutput
from kernel_model.cpu.gdt import descriptor
from kernel_model.kernel import Kernel, KernelConfig
from kernel_model.memory.vm import MAP_ANONYMOUS, MAP_FIXED, MAP_PRIVATE, PROT_EXEC, PROT_READ, PROT_WRITE
from tests.unit.emu.guest import asm
from tests.unit.loader.elf_builder import build_elf

from ..userland import USER_CODE, USER_STACK, user_program

SIGCHLD = 17


def test_a_fork_copies_every_area_with_its_bytes_and_attributes(arch):
    parent = user_program(arch, "nop", enter=False).space
    parent.vm.mmap(0x0070_0000, 0x3000, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED)
    parent.vm.map_area(0x0080_0000, 0x2000, PROT_READ, name=b"/lib/data.so", offset=0x5000)
    parent.vm.set_brk_start(0x0090_0000)
    parent.vm.brk(0x0090_2000)
    parent.machine.mem.write(0x0070_1ff0, b"parent bytes across a page" )
    parent.machine.mem.write(USER_STACK + 8, b"stack")
    child = copy_space(parent, 4 << 30)
    assert child.serial != parent.serial and child.machine is not parent.machine
    assert [(v.start, v.end, v.perms, v.name, v.offset, v.shared) for v in child.vm.vmas] == \
        [(v.start, v.end, v.perms, v.name, v.offset, v.shared) for v in parent.vm.vmas]
    assert child.machine.mem.read(0x0070_1ff0, 26) == b"parent bytes across a page"
    assert child.machine.mem.read(USER_STACK + 8, 5) == b"stack"
    assert child.machine.mem.read(USER_CODE, 1) == parent.machine.mem.read(USER_CODE, 1)
    assert (child.vm.brk_start, child.vm.brk_end) == (0x0090_0000, 0x0090_2000)
    assert child.vm.vma_at(USER_CODE).perms == PROT_READ | PROT_EXEC


def test_the_copy_is_the_childs_alone(arch):
    parent = user_program(arch, "nop", enter=False).space
    parent.machine.mem.write(USER_STACK, b"before")
    child = copy_space(parent, 4 << 30)
    child.machine.mem.write(USER_STACK, b"child!")
    parent.machine.mem.write(USER_STACK + 0x100, b"parent")
    assert parent.machine.mem.read(USER_STACK, 6) == b"before"
    assert child.machine.mem.read(USER_STACK + 0x100, 6) == bytes(6)
    child.vm.munmap(USER_STACK, 0x1000)
    assert parent.vm.vma_at(USER_STACK) is not None


def test_the_childs_gdt_keeps_the_parents_tls_descriptors():
    parent = user_program("i386", "nop", enter=False).space
    tls = descriptor(0x1234_0000, 0xFFFFF, 0xF3, 0xC)
    parent.gdt.set_entry(12, tls)
    child = copy_space(parent, 4 << 30)
    assert child.gdt.entries[12] == tls == parent.gdt.entries[12]


# ---- fork, vfork and clone as a guest calls them ----------------------------------------------

NR = {"i386": {"fork": 2, "vfork": 190, "clone": 120, "wait": 7, "write": 4, "close": 6, "exit": 1},
      "x86_64": {"fork": 57, "vfork": 58, "clone": 56, "wait": 61, "write": 1, "close": 3, "exit": 60}}
ARGS = {"i386": ("ebx", "ecx", "edx", "esi", "edi"), "x86_64": ("rdi", "rsi", "rdx", "r10", "r8")}
ENTER = {"i386": "int 0x80", "x86_64": "syscall"}
SP = {"i386": "esp", "x86_64": "rsp"}


def _call(arch: str, name: str, *args) -> str:
    moves = [f"mov {reg}, {value}" for reg, value in zip(ARGS[arch], args)]
    return "; ".join([f"mov eax, {NR[arch][name]}", *moves, ENTER[arch]])


def _program(arch: str, how: str) -> str:
    sp = SP[arch]
    new = _call(arch, "clone", CLONE_FILES | SIGCHLD, 0, 0, 0, 0) if how == "clone" \
        else _call(arch, how)
    return "; ".join([
        f"sub {sp}, 64", f"mov byte ptr [{sp}], 0x50",              # 'P'
        new, "test eax, eax", "jz child",
        _call(arch, "wait", -1, 0, 0, 0),
        _call(arch, "write", 1, sp, 1),
        _call(arch, "exit", 0),
        f"child: mov byte ptr [{sp}], 0x43",                        # 'C'
        _call(arch, "close", 1),
        _call(arch, "exit", 0)])


def _run(tmp_path, arch: str, source: str) -> bytes:
    built = build_elf(32 if arch == "i386" else 64)
    built.set_code(asm(source, arch, built.entry))
    (tmp_path / "prog").write_bytes(built.bytes())
    (tmp_path / "prog").chmod(0o755)
    out = CapturedOutput()
    kernel = Kernel(KernelConfig(rootfs=str(tmp_path), stdin=CapturedOutput(), stdout=out,
                                 stderr=CapturedOutput(), report=io.StringIO()))
    assert kernel.run(kernel.spawn(b"/prog", [b"prog"], [])) == 0
    assert not kernel.unimplemented
    return out.data


@pytest.mark.parametrize("how, seen", [("fork", b"P"), ("vfork", b"C"), ("clone", b"")])
def test_what_the_child_shares_with_its_parent(tmp_path, arch, how, seen):
    assert _run(tmp_path, arch, _program(arch, how)) == seen
