"""Who called (US 7,823,129 [0178]): the caller from the return address at [sp]; a direct call to
another function before it means a tail call (the function found is the caller's caller) and
no call before it means a word the psABI does not promise — both uncertain, with the reason."""
import struct
from types import SimpleNamespace

from instrumenter.profiler.callers import FunctionId
from instrumenter.profiler.callsite import Functions, identify_caller
from loader.symbols import Symbol, SymbolTable

BASE = 0x1000
#   0x1000 caller:  push ebp; call callee (e8); ret
#   0x1010 other:   call tailer (e8) ; ret
#   0x1020 tailer:  jmp callee
#   0x1030 callee:  ret
#   0x1040 nocall:  nop x8; ret
CODE = bytearray(b"\x90" * 0x60)
CODE[0x00:0x07] = b"\x55\xe8" + struct.pack("<i", 0x1030 - 0x1006) + b"\xc3"
CODE[0x10:0x16] = b"\xe8" + struct.pack("<i", 0x1020 - 0x1015) + b"\xc3"
CODE[0x20:0x22] = b"\xeb\x0e"
CODE[0x30] = 0xC3
CODE[0x48] = 0xC3
FUNCS = [Symbol("caller", 0x1000, 0x10, "func"), Symbol("other", 0x1010, 0x10, "func"),
         Symbol("tailer", 0x1020, 0x10, "func"), Symbol("callee", 0x1030, 0x10, "func"),
         Symbol("nocall", 0x1040, 0x10, "func")]


class Door:
    def __init__(self):
        image = SimpleNamespace(symbols=SymbolTable(FUNCS))
        self.mapped = SimpleNamespace(base=BASE, end=BASE + len(CODE), image=image, name="prog")

    def images(self, process):
        return [self.mapped]

    def arch(self, process):
        return SimpleNamespace(name="i386")

    def cpu(self, process):
        return SimpleNamespace(is_mapped=lambda a, n: BASE <= a and a + n <= BASE + len(CODE))

    def read_memory(self, process, address, size):
        return bytes(CODE[address - BASE:address - BASE + size])


CALLEE = FunctionId("prog", "callee", 0x1030)


def test_a_direct_call_names_its_function_for_certain():
    assert identify_caller(Functions(Door()), None, 0x1006, CALLEE) == (FunctionId("prog", "caller", 0x1000), None)


def test_a_call_to_another_function_means_a_tail_call_and_the_callers_caller():
    caller, why = identify_caller(Functions(Door()), None, 0x1015, CALLEE)
    assert caller == FunctionId("prog", "other", 0x1010) and "tailer tail-called it" in why


def test_no_call_before_the_return_address_is_uncertain():
    caller, why = identify_caller(Functions(Door()), None, 0x1048, CALLEE)
    assert caller == FunctionId("prog", "nocall", 0x1040) and "no call before" in why


def test_addresses_outside_every_object_name_no_function():
    assert Functions(Door()).at(None, 0x9000) is None
    assert identify_caller(Functions(Door()), None, 0x1003, CALLEE)[1] is not None       # mid-instruction
