"""A guest for the block stop's tests: a loop that adds 1 to a counter in memory with a
read-modify-write instruction and 1 to ECX, on a bare Unicorn (a Machine's `uc` is all a
BlockStop needs). The two counters differ exactly when an instruction ran twice."""
import types

from unicorn import UC_ARCH_X86, Uc
from unicorn import x86_const as X

CODE, DATA = 0x10000, 0x20000
LOOP = bytes.fromhex("830301"      # add dword [ebx/rbx], 1: load, add, store
                     "83c101"      # add ecx, 1
                     "ebf8")       # jmp back to the add: one block per round


def looping_machine(mode):
    uc = Uc(UC_ARCH_X86, mode)
    uc.mem_map(CODE, 0x1000)
    uc.mem_map(DATA, 0x1000)
    uc.mem_write(CODE, LOOP)
    uc.reg_write(X.UC_X86_REG_RBX if mode == 8 else X.UC_X86_REG_EBX, DATA)
    uc.reg_write(X.UC_X86_REG_ECX, 0)
    uc.reg_write(X.UC_X86_REG_RIP if mode == 8 else X.UC_X86_REG_EIP, CODE)
    return types.SimpleNamespace(uc=uc)


def pc(machine, mode) -> int:
    return machine.uc.reg_read(X.UC_X86_REG_RIP if mode == 8 else X.UC_X86_REG_EIP)


def counters(machine) -> tuple[int, int]:
    """(the memory counter, ECX)."""
    memory = int.from_bytes(machine.uc.mem_read(DATA, 4), "little")
    return memory, machine.uc.reg_read(X.UC_X86_REG_ECX)
