"""The Python binding's private parts (unicorn==2.1.4, package unicorn.unicorn_py3), used by
emu/ only through this file.

Why they are used at all: the binding wraps every call and every hook in Python (docs/unicorn.md:
a register access or a hook call through it costs several times uclib's own), so the
paths of every probe hit and system call call uclib directly with the Uc's handle and register
bare ctypes callbacks. What that needs from the binding:

  handle(uc)                 `uc._uch`, the uc_engine pointer every uclib call takes
  keep_hook_exception(...)   `uc._hook_exception`: where the binding's own hook wrappers keep an
  pending_hook_exception(uc)   exception for emu_start to re-raise; a bare callback does the same
  close(uc)                  `uc._Uc__finalizer`: uc_close, exactly once
  is_64(uc)                  `uc._mode`
  uclib, BARE_UCLIB          the loaded library (with and without the binding's prototypes)
  the CFUNC prototypes       of the hooks registered bare (interrupt, syscall, cpuid, TLB fill,
                             code, invalid memory)

There is no fallback for these: setup.cfg pins the exact version they were read from, and
check() fails at the first Machine, with the name of what is missing, if an installed binding
lacks one (UnicornInternalsError: a bug report, exit status 70), instead of an AttributeError
in the middle of a run.
"""
import ctypes

from unicorn import UC_ARCH_X86, UC_MODE_64, Uc
from unicorn.unicorn_py3.arch.intel import HOOK_INSN_CPUID_CFUNC, HOOK_INSN_SYSCALL_CFUNC
from unicorn.unicorn_py3.unicorn import (HOOK_CODE_CFUNC, HOOK_INTR_CFUNC, HOOK_MEM_INVALID_CFUNC,
                                          HOOK_TLB_FILL_CFUNC, uc_hook_h, uclib)

from ..errors import UnicornInternalsError

__all__ = ["HOOK_CODE_CFUNC", "HOOK_INSN_CPUID_CFUNC", "HOOK_INSN_SYSCALL_CFUNC",
           "HOOK_INTR_CFUNC", "HOOK_MEM_INVALID_CFUNC", "HOOK_TLB_FILL_CFUNC", "uc_hook_h",
           "uclib", "BARE_UCLIB", "handle", "keep_hook_exception", "pending_hook_exception",
           "close", "is_64", "check"]

# The binding declares uclib's prototypes with argtypes, so every call converts each argument
# through from_param: a large part of a register access. A second handle on the same
# library without prototypes takes ready ctypes objects as they are. Only ctypes objects
# (c_void_p handle, byref pointer) and small ints may be passed: a bare Python int in a
# pointer's place would be truncated to a C int.
BARE_UCLIB = ctypes.CDLL(uclib._name, handle=uclib._handle)

_ATTRIBUTES = ("_uch", "_hook_exception", "_mode", "_Uc__finalizer")


def handle(uc: Uc) -> ctypes.c_void_p:
    """The uc_engine pointer of `uc`, for uclib calls."""
    return uc._uch


def keep_hook_exception(uc: Uc, error: BaseException) -> None:
    """Keep `error` for emu_start to re-raise, as the binding's hook wrappers do (the first
    one wins), and stop the run."""
    if uc._hook_exception is None:
        uc._hook_exception = error
    uclib.uc_emu_stop(uc._uch)


def pending_hook_exception(uc: Uc) -> BaseException | None:
    """The exception a hook kept (keep_hook_exception or the binding's wrapper), if any."""
    return uc._hook_exception


def close(uc: Uc) -> None:
    """uc_close, exactly once: the binding's own finalizer, which also forgets the handle."""
    uc._Uc__finalizer()


def is_64(uc: Uc) -> bool:
    return uc._mode == UC_MODE_64


def check() -> None:
    """The binding has every private attribute used here (a scratch Uc is asked)."""
    uc = Uc(UC_ARCH_X86, UC_MODE_64)
    missing = [name for name in _ATTRIBUTES if not hasattr(uc, name)]
    if missing:
        raise UnicornInternalsError(f"the unicorn binding lacks {', '.join(missing)}: "
                                    "trapline was verified against unicorn==2.1.4")
