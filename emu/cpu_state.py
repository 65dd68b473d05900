"""Direct views of the CPU state Unicorn runs on: EIP/RIP, the general registers and the CS
selector as plain ctypes integers over `CPUX86State`, for the path of every int3 probe hit.

Why: every register access through uclib is a ctypes call, and a PC written with
uc_reg_write also sets `quit_request` (uc.c), so the CPU loop leaves cpu_exec and enters it
again before the next block: together about as much as the rest of a trampoline hit
(bench/probe_rate.py). A ctypes view over the field itself is a load or a store.

Where the state lives, and how it is found and confirmed for each Uc: internals/cpu_env.py.
Where it is not found (another Unicorn build, no /proc), `cpu_state_views` gives views of the
same names made of uclib calls (ApiStateViews). The flags have no view: QEMU keeps them in
pieces (cc_src, cc_op...) that only its helpers put together.

The one rule for writers: a PC stored into the view takes effect where cpu_exec looks for the
next block, which is right after an interrupt hook returns (qemu/accel/tcg/cpu-exec.c:
cpu_handle_exception runs the UC_HOOK_INTR callbacks, then the loop calls tb_find with
env->eip). Anywhere else, a block already running would not notice: write the PC through
uc_reg_write there.
"""
import ctypes
import functools
import operator

from unicorn import Uc

from . import internals
from .internals import cpu_env
from .internals.binding import handle, is_64
from .internals.cpu_env import GPR32_ORDER as _GPR32_ORDER
from .internals.cpu_env import GPR_ORDER as _GPR_ORDER
from .registers import BareRegister


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
    """Views of `uc`'s live CPU state: direct (CpuStateViews) where the layout is located and
    confirmed for this Uc, otherwise the same attributes through uclib calls (ApiStateViews)."""
    layout = internals.located().cpu_env
    env = cpu_env.env_of(uc, layout) if layout is not None else None
    if env is None:
        return ApiStateViews(uc)
    return CpuStateViews(env, layout.eip_offset, layout.cs_offset)


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
    (cheaper than a load per ctypes view, one per register): the syscall dispatcher
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
        self._register = BareRegister(handle(uc), name)

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
        self.eip = _ApiRegister(uc, "rip" if is_64(uc) else "eip")
        self.cs = _ApiRegister(uc, "cs")

    def register(self, name: str):
        if not viewable(name):
            raise KeyError(f"no view of register {name}")
        return _ApiRegister(self._uc, name)
