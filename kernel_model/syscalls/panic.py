"""The KernelPanic of a Python exception escaping a system call: the report names the call (name,
number, the six argument words as the calling ABI saw them), the exception and where it was
raised, as Linux's oops names the task, the syscall and RIP (kernel_model/panic.py says which
exceptions are a kernel bug)."""
from ..errors import KernelPanic
from ..panic import is_kernel_bug, where
from .numbers import numbers


def syscall_panic(thread, abi: str, exc: Exception) -> KernelPanic:
    """The KernelPanic for `exc` escaping the syscall `thread` is making in `abi`. The number
    and arguments are read back from the registers: nothing has written the result yet."""
    words = _registers(thread, abi)
    mask = (1 << (32 if abi == "i386" else 64)) - 1
    nr, args = words[0] & mask, [w & mask for w in words[1:7]]
    table = numbers(abi)
    name = table.get(nr, f"syscall_{nr:#x}")
    if nr not in table and nr >= mask - 4095:
        # a failure while the call's exit was reported (strace): eax/rax holds its result
        name += f" (the register holds a result, -{mask + 1 - nr}: the call had returned)"
    tid = getattr(thread, "tid", "?")
    text = (f"kernel bug in {name} (nr {nr}, {abi} ABI) called by tid {tid}: "
            f"args ({', '.join(hex(a) for a in args)}): "
            f"{type(exc).__name__}: {exc} at {where(exc)}")
    return KernelPanic(text)


ABI_REGISTERS = {"i386": ("eax", "ebx", "ecx", "edx", "esi", "edi", "ebp"),
                 "x86_64": ("rax", "rdi", "rsi", "rdx", "r10", "r8", "r9")}


def _registers(thread, abi: str) -> list[int]:
    """The call's number and arguments from the Machine (0 for what cannot be read)."""
    try:
        machine = thread.process.machine
    except Exception:
        return [0] * 7
    words = []
    for name in ABI_REGISTERS[abi]:
        try:
            words.append(machine.reg(name))
        except Exception:
            words.append(0)
    return words


def raise_if_kernel_bug(thread, abi: str, exc: Exception) -> None:
    """Raise the KernelPanic for `exc` escaping a syscall, when it is a kernel bug; return
    otherwise (the caller re-raises trapline's own errors unchanged)."""
    if is_kernel_bug(exc):
        raise syscall_panic(thread, abi, exc) from exc
