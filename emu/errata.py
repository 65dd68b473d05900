"""Corrections for Unicorn 2.1.4 behaviour that differs from the architecture (docs/unicorn.md).

Kept here, behind the Machine, so that the layers above see architectural behaviour. One
erratum has a module of its own: without paging every page looks executable to Unicorn, which
sent every guest store down its slow path; tlb.py fills the TLB with each page's permissions.

Known and NOT corrected (it needs a change to Unicorn's translator, not a hook):
  cmpxchg8b/cmpxchg16b change only ZF (SDM Vol. 2A, CMPXCHG8B/CMPXCHG16B) and must keep the
  other status flags. QEMU's helpers compute those from env->cc_op, which translate.c does not
  bring up to date first (no gen_update_cc_op before gen_helper_cmpxchg*). When a code hook
  covers the instruction (Unicorn's instruction counter is one: trapline counts while probes
  are attached) and a flag-setting instruction precedes it in the same block, the helper reads
  the stale cc_op against the eflags image the hook path stored, and CF/OF/SF/AF/PF come out
  wrong (`imul rax, rax, 0; cmpxchg16b [m]` leaves CF=OF=1). ZF is always right, and code
  reads ZF after these instructions; tests/unit/emu/test_unicorn_errata.py shows the erratum
  so that an upgrade that fixes it is noticed.
"""
from . import internals
from .errors import UnicornInternalsError
from .internals.uc_context import context_int

# Vectors that QEMU's check_exception treats as contributory or page faults (Intel SDM Vol. 3A,
# 6.15, Table 6-4: #DE, #TS, #NP, #SS, #GP are contributory; #PF is its own class). A fault of these
# kinds handled by a hook leaves env->old_exception set, so the *next* one would become #DF (8) and
# the one after that a silent triple-fault stop (docs/unicorn.md item 6).
CHAINING_VECTORS = frozenset({0, 10, 11, 12, 13, 14})
DOUBLE_FAULT = 8


class InterruptErrata:
    """One Machine's corrections of how Unicorn reports interrupts, through two fields of the
    CPU state located in internals/uc_context.py, each with its fallback:

    - exception_is_int tells `int n` from a CPU exception, which Unicorn reports through the
      same hook with nothing else to tell them apart, yet the architecture treats differently:
      only a software interrupt is checked against the gate's DPL (Intel SDM Vol. 3A,
      6.12.1.1). Fallback: where the last instruction began (insn_tracker.py).
    - old_exception is reset to -1 after a handled fault, as QEMU's x86_cpu_do_interrupt does
      after a delivery. No public call resets it, so its fallback is a refusal: a fault that
      Unicorn turned into #DF because of an earlier one is reported as UnicornInternalsError
      (a bug report) instead of reaching the guest as a double fault it did not cause.
    """
    __slots__ = ("_uc", "_is_int", "_old_exception", "_tracker")

    def __init__(self, uc, bits: int, tracker):
        """`tracker()` gives the Machine's InstructionTracker (made only if needed)."""
        layout = internals.located()
        self._uc = uc
        self._is_int = layout.exception_is_int[bits]
        self._old_exception = layout.old_exception[bits]
        self._tracker = tracker() if self._is_int is None else None

    def is_software(self, vector: int, pc: int) -> bool:
        """True when the interrupt being delivered (saved IP `pc`) came from an INT n/INT3/INTO
        instruction."""
        if self._is_int is not None:
            return context_int(self._uc, self._is_int) == 1
        software = self._tracker.last != pc
        if vector == DOUBLE_FAULT and not software and self._old_exception is None:
            raise UnicornInternalsError(
                "a fault after a handled one came back as #DF: Unicorn's old_exception could "
                "not be located to clear it (emu/internals/uc_context.py)")
        return software

    def fault_handled(self) -> None:
        """A contributory fault or #PF was handled by the hook: forget it, so that the next
        one is not chained into #DF."""
        if self._old_exception is not None:
            context_int(self._uc, self._old_exception, -1)
