"""Direct views of the CPU state Unicorn runs on: EIP/RIP, the general registers and the CS
selector as plain ctypes integers over `CPUX86State`, for the path of every int3 probe hit.

Why: every register access through uclib is a ctypes call of ~0.2 µs, and a PC written with
uc_reg_write also sets `quit_request` (uc.c), so the CPU loop leaves cpu_exec and enters it
again before the next block: together ~0.6 µs of a trampoline hit that otherwise costs about as
much (bench/probe_rate.py). A ctypes view over the field itself is a load or a store.

Where the state lives (Unicorn 2.1.4, include/uc_priv.h and qemu/target/i386/cpu.h):
`struct uc_struct` holds `CPUState *cpu`; the CPU is an `X86CPU`, whose `CPUX86State env`
follows its CPUState at a fixed distance; in `env`, `regs[16]` come first (QEMU's order: R_EAX,
R_ECX, R_EDX, R_EBX, R_ESP, R_EBP, R_ESI, R_EDI, then r8-r15), then `eip`, and later the
segment caches (`segs[R_CS].selector`). The flags have no view: QEMU keeps them in pieces
(cc_src, cc_op...) that only its helpers put together.

How it is found: uc_context_save copies `env` from its start, so the offsets of eip and of the
CS selector show in a saved context (as errata.py finds other fields). The pointer to `env` is
found once per host process: every word of uc_struct that reads as an address is followed to
see whether a scratch CPU's known register values sit near it, and a candidate is kept only if
it follows changes made through the API and holds for fresh Ucs of both modes. Each new Uc is
confirmed again with a mark put into RAX. Memory is only ever probed through /proc/self/mem,
where a wrong guess reads nothing instead of crashing. Anything unexpected (another Unicorn
build, no /proc) makes `cpu_state_views` fall back to views of the same names made of uclib
calls.

The one rule for writers: a PC stored into the view takes effect where cpu_exec looks for the
next block, which is right after an interrupt hook returns (qemu/accel/tcg/cpu-exec.c:
cpu_handle_exception runs the UC_HOOK_INTR callbacks, then the loop calls tb_find with
env->eip). Anywhere else, a block already running would not notice: write the PC through
uc_reg_write there.
"""
import ctypes
import functools
import operator
import os
import struct

from unicorn import UC_ARCH_X86, UC_MODE_32, UC_MODE_64, Uc
from unicorn import x86_const as X

from .errata import _context_bytes
from .registers import BareRegister

_UC_STRUCT_SCAN = 4096          # uc_struct's `cpu` pointer sits in its first few hundred bytes
_CPU_SCAN = 1 << 17             # env lies within the X86CPU, some tens of KB after its start
_RAX, _RIP, _CS = 0x5A17_C0DE_0BAD_F00D, 0x0000_7EAD_BEEF_1230, 0x1237
_RAX2, _RIP2 = 0x0123_4567_89AB_CDEF, 0x0000_1111_2222_3330
# QEMU's regs[] order (target/i386/cpu.h R_EAX..R_EDI, then r8-r15); uc.reg_read's names.
_GPR_ORDER = ("rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
              "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15")
_GPR32_ORDER = ("eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi")
_FRESH = ((UC_MODE_64, 0x4D0D_E640_0000_0001, 0x0000_6464_0000_1000),
          (UC_MODE_32, 0x3232_0001, 0x3232_1000))



class CpuStateViews:
    """One Uc's CPU state, each field an integer with a `value`: `eip` (c_uint64: EIP or RIP,
    whole: in 32-bit mode the Machine masks what it reads), `cs` (c_uint32: the CS selector)
    and `register(name)` (a general register by its uc name)."""
    __slots__ = ("eip", "cs", "_env", "_registers", "_slots")

    def __init__(self, env: int, eip_offset: int, cs_offset: int):
        self._env = env
        self.eip = ctypes.c_uint64.from_address(env + eip_offset)
        self.cs = ctypes.c_uint32.from_address(env + cs_offset)
        self._registers: dict[str, object] = {}
        # regs[16] as 64-bit words and as 32-bit halves (register i's low half at 2*i on a
        # little-endian host): register_slots()
        block = memoryview((ctypes.c_char * (8 * len(_GPR_ORDER))).from_address(env)).cast("B")
        self._slots = {64: block.cast("Q"), 32: block.cast("I")}

    def register(self, name: str):
        """The view of general register `name` ("rdi", "esp"...): a 32-bit name sees the low
        half of the slot, as uc_reg_read does (little-endian host)."""
        view = self._registers.get(name)
        if view is None:
            if name in _GPR_ORDER:
                view = ctypes.c_uint64.from_address(self._env + 8 * _GPR_ORDER.index(name))
            elif name in _GPR32_ORDER:
                view = ctypes.c_uint32.from_address(self._env + 8 * _GPR32_ORDER.index(name))
            else:
                raise KeyError(f"no view of register {name}")
            self._registers[name] = view
        return view

    def register_slots(self, name: str) -> tuple[memoryview, int]:
        """(a memoryview of the general-register slots, the index of `name` in it): 64-bit
        words for a 64-bit name, 32-bit halves for a 32-bit one, as register() sees them.
        Several registers of one width are read by one operator.itemgetter over the view
        (register_fetcher)."""
        if name in _GPR_ORDER:
            return self._slots[64], _GPR_ORDER.index(name)
        if name in _GPR32_ORDER:
            return self._slots[32], 2 * _GPR32_ORDER.index(name)
        raise KeyError(f"no view of register {name}")


def cpu_state_views(uc: Uc):
    """Views of `uc`'s live CPU state: direct (CpuStateViews) where the layout is confirmed,
    otherwise the same attributes through uclib calls (ApiStateViews)."""
    return _direct_views(uc) or ApiStateViews(uc)


def _direct_views(uc: Uc) -> CpuStateViews | None:
    layout = _located_layout()
    if layout is None:
        return None
    cpu_pointer, env_distance, eip_offset, cs_offset = layout
    uc.reg_read(X.UC_X86_REG_CS)            # Unicorn creates its CPU on the first API use
    cpu = ctypes.c_uint64.from_address(uc._uch.value + cpu_pointer).value
    if not _is_env_of(uc, cpu + env_distance):
        return None
    return CpuStateViews(cpu + env_distance, eip_offset, cs_offset)


def _is_env_of(uc: Uc, env: int) -> bool:
    """Whether `env` holds `uc`'s registers: a mark put into RAX through the API must show
    there (read through /proc/self/mem: a wrong address reads nothing instead of crashing)."""
    rax = X.UC_X86_REG_RAX if _is_64(uc) else X.UC_X86_REG_EAX
    saved = uc.reg_read(rax)
    size = 8 if _is_64(uc) else 4          # a 32-bit write sets the low half (WRITE_DWORD)
    mark = _RAX2 & ((1 << 8 * size) - 1)
    uc.reg_write(rax, mark)
    try:
        with open("/proc/self/mem", "rb", buffering=0) as mem:
            return _read(mem, env, size) == mark.to_bytes(size, "little")
    except OSError:
        return False
    finally:
        uc.reg_write(rax, saved)


def _is_64(uc: Uc) -> bool:
    return uc._mode == UC_MODE_64


@functools.cache
def _located_layout() -> tuple[int, int, int, int] | None:
    """(offset of `cpu` in uc_struct, distance from it to `env`, eip and CS offsets in `env`),
    found once per host process; None where it cannot be confirmed."""
    try:
        return _locate()
    except OSError:                          # no /proc/self/mem
        return None


def _locate() -> tuple[int, int, int, int] | None:
    uc = Uc(UC_ARCH_X86, UC_MODE_64)
    marks = {name: 0x7700_0000_0000_0000 + i for i, name in enumerate(_GPR_ORDER)}
    for name, mark in marks.items():
        uc.reg_write(getattr(X, f"UC_X86_REG_{name.upper()}"), mark)
    order = _context_bytes(uc.context_save())[:8 * len(_GPR_ORDER)]
    if order != b"".join(struct.pack("<Q", mark) for mark in marks.values()):
        return None                            # regs[] is not where, or in the order, expected
    uc.reg_write(X.UC_X86_REG_RAX, _RAX)
    uc.reg_write(X.UC_X86_REG_RIP, _RIP)
    uc.reg_write(X.UC_X86_REG_CS, _CS)        # 64-bit mode stores the selector as given
    state = _context_bytes(uc.context_save())
    eip_offset = _unique(state, struct.pack("<Q", _RIP), 8)
    cs_offset = _unique(state, struct.pack("<I", _CS), 4)
    if eip_offset is None or cs_offset is None:
        return None
    with open("/proc/self/mem", "rb", buffering=0) as mem:
        candidates = _env_candidates(mem, uc, eip_offset)
        uc.reg_write(X.UC_X86_REG_RAX, _RAX2)
        uc.reg_write(X.UC_X86_REG_RIP, _RIP2)
        live = [c for c in candidates if _holds(mem, uc, c, eip_offset, _RAX2, _RIP2)]
        # Other pointers of uc_struct may happen to lie at a fixed distance from this Uc's env
        # (neighbours on the heap); only `cpu` keeps it for every new Uc, of both modes.
        fresh = [_fresh_uc(mode, ax, ip) for mode, ax, ip in _FRESH for _ in range(2)]
        general = [c for c in live
                   if all(_holds(mem, u, c, eip_offset, ax, ip) for u, ax, ip in fresh)]
    if not general:
        return None
    cpu_pointer, env_distance = general[0]
    return cpu_pointer, env_distance, eip_offset, cs_offset


def _fresh_uc(mode: int, ax: int, ip: int) -> tuple[Uc, int, int]:
    uc = Uc(UC_ARCH_X86, mode)
    uc.reg_write(X.UC_X86_REG_RAX if mode == UC_MODE_64 else X.UC_X86_REG_EAX, ax)
    uc.reg_write(X.UC_X86_REG_RIP if mode == UC_MODE_64 else X.UC_X86_REG_EIP, ip)
    return uc, ax, ip


def _unique(state: bytes, pattern: bytes, align: int) -> int | None:
    hits = [i for i in range(0, len(state) - len(pattern) + 1, align)
            if state[i:i + len(pattern)] == pattern]
    return hits[0] if len(hits) == 1 else None


def _env_candidates(mem, uc: Uc, eip_offset: int) -> list[tuple[int, int]]:
    """(offset of a pointer in uc_struct, distance from its target to an `env` holding the
    scratch values): every word of uc_struct that reads as an address is tried."""
    head = _read(mem, uc._uch.value, _UC_STRUCT_SCAN)
    rax = struct.pack("<Q", _RAX)
    found = []
    for offset in range(0, len(head) - 7, 8):
        target = struct.unpack_from("<Q", head, offset)[0]
        if target < 0x10000 or target >= 1 << 47 or target % 8:
            continue
        block = _read(mem, target, _CPU_SCAN)
        at = block.find(rax)
        while at >= 0:
            rip_there = block[at + eip_offset:at + eip_offset + 8]
            if at % 8 == 0 and rip_there == struct.pack("<Q", _RIP):
                found.append((offset, at))
            at = block.find(rax, at + 1)
    return found


def _holds(mem, uc: Uc, candidate: tuple[int, int], eip_offset: int, ax: int, ip: int) -> bool:
    cpu_pointer, env_distance = candidate
    cpu = int.from_bytes(_read(mem, uc._uch.value + cpu_pointer, 8) or bytes(8), "little")
    env = _read(mem, cpu + env_distance, eip_offset + 8)
    return len(env) == eip_offset + 8 and env[:8] == struct.pack("<Q", ax) \
        and env[eip_offset:] == struct.pack("<Q", ip)


def _read(mem, address: int, size: int) -> bytes:
    """Up to `size` bytes at `address` of this process; b"" where nothing is mapped."""
    try:
        return os.pread(mem.fileno(), size, address)
    except (OSError, OverflowError, ValueError):
        return b""


class ViewedRegisters:
    """RawRegisters' `read()` over views: one load per register instead of a uclib batch."""
    __slots__ = ("names", "_views")

    def __init__(self, views: CpuStateViews, names: tuple[str, ...]):
        self.names = names
        self._views = tuple(views.register(name) for name in names)

    def read(self) -> list[int]:
        return [view.value for view in self._views]


def register_fetcher(state, names: tuple[str, ...]):
    """A callable returning the values of `names` (general registers) as a tuple. Over a
    direct view with names of one width it is one itemgetter call on the register slots
    (~70 ns for three, where a load per ctypes view costs ~200 ns): the syscall dispatcher
    reads a call's arguments with it on every call."""
    if not names:
        return tuple
    if isinstance(state, CpuStateViews):
        located = [state.register_slots(name) for name in names]
        slots = located[0][0]
        if all(view is slots for view, _ in located):
            indices = [index for _, index in located]
            if len(indices) == 1:
                return functools.partial(_one_slot, slots, indices[0])
            return functools.partial(operator.itemgetter(*indices), slots)
    views = tuple(state.register(name) for name in names)
    return functools.partial(_values, views)


def _one_slot(slots: memoryview, index: int) -> tuple[int]:
    return (slots[index],)


def _values(views) -> tuple[int, ...]:
    return tuple(view.value for view in views)


def viewable(name: str) -> bool:
    """Whether `register()` has a view of `name` (the general registers)."""
    return name in _GPR_ORDER or name in _GPR32_ORDER


class _ApiRegister:
    """The fallback of a view: the same `value`, through uclib calls (bare handle)."""
    __slots__ = ("_register",)

    def __init__(self, uc: Uc, name: str):
        self._register = BareRegister(uc._uch, name)

    @property
    def value(self) -> int:
        return self._register.read()

    @value.setter
    def value(self, new: int) -> None:
        self._register.write(new)


class ApiStateViews:
    """What CpuStateViews offers, for a Uc whose CPU state cannot be viewed directly."""
    __slots__ = ("eip", "cs", "_uc")

    def __init__(self, uc: Uc):
        self._uc = uc
        self.eip = _ApiRegister(uc, "rip" if _is_64(uc) else "eip")
        self.cs = _ApiRegister(uc, "cs")

    def register(self, name: str):
        if not viewable(name):
            raise KeyError(f"no view of register {name}")
        return _ApiRegister(self._uc, name)
