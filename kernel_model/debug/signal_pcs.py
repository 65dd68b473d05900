"""Signal frames show original PCs (US 6,898,785: signal handlers never see an
address of a relocated instrumented function). Part of the debug interface
(kernel_model/debug/), one of its parts.

A tool that runs the program's instructions somewhere else (a relocated copy of a function,
instrumenter/strategies/relocate/) registers a translator; the kernel's signal-frame code
(kernel_model/signals/delivery.py) asks it about the interrupted PC before it builds a frame:

  translate(thread, pc) -> None | STEP | (original, resume)
      None      pc is not the tool's: the frame saves it as it is;
      STEP      pc is half-way through the tool's rendering of one original instruction (the
                registers are the program's at no original address): the thread runs one
                instruction on and the tool is asked again — an asynchronous signal may be
                taken a few instructions late, as every kernel takes it at points of its own
                choosing; a synchronous one (a fault: the instruction would fault again) is
                never stepped, its frame keeps the tool's address;
      (original, resume)
                the frame (sigcontext's IP, the kernel's copy of the interrupted context, and
                siginfo's si_addr when it was that PC) saves `original`; at sigreturn, if the
                frame's PC is still `original` (the handler did not redirect it), the thread
                goes on at `resume(thread)`, which the tool answers then: where the same
                instruction runs now (its copy, a newer copy, or the original code when the
                copy is gone) — nothing runs twice, nothing is skipped.

Frames a handler abandoned (siglongjmp) are forgotten when a frame further up the stack
returns or a new one is built over them, as the kernel's saved contexts are.
"""
from emu.registers import REGISTER_IDS

STEP = "step"
_MAX_STEPS = 64          # a tool's rendering of one instruction is a few instructions long


class SignalFramePcs:
    SIGNAL_PC_STEP = STEP               # a translator's answer (tools see only the door)
    _pc_translators: list | None = None
    _frame_pcs: dict | None = None      # (space.serial, tid) -> [(frame, original, resume)]
    _unbound: dict | None = None        # (space.serial, tid) -> (original, resume), frame not built

    def __init__(self, step_thread):
        self._step_thread = step_thread     # detach.py: one instruction of a thread, now

    def register_signal_pc_translator(self, translate) -> None:
        if self._pc_translators is None:
            self._pc_translators = []
        if translate not in self._pc_translators:
            self._pc_translators.append(translate)

    def unregister_signal_pc_translator(self, translate) -> None:
        if self._pc_translators and translate in self._pc_translators:
            self._pc_translators.remove(translate)

    def _translate_pc(self, thread, pc: int):
        for translate in self._pc_translators:
            answer = translate(thread, pc)
            if answer is not None:
                return answer
        return None

    # ---- the kernel's signal-frame code asks ------------------------------------------------
    def signal_frame_pc(self, thread, *, synchronous: bool) -> int | None:
        """Before a frame is built for `thread` (registers live): the PC its frame saves, after
        stepping it out of a half-done tool rendering (asynchronous signals only); None: no
        translator knows the PC. The thread may have stopped running (it faulted while
        stepped): the caller checks its state."""
        if not self._pc_translators:
            return None
        machine = thread.process.machine
        answer = self._translate_pc(thread, machine.pc)
        steps = 0
        while answer == STEP and not synchronous and steps < _MAX_STEPS:
            if not self._step_thread(thread):             # detach.py
                return None
            steps += 1
            answer = self._translate_pc(thread, machine.pc)
        if answer is None or answer == STEP:
            return None
        original, resume = answer
        self._unbound_frames()[(thread.process.space.serial, thread.tid)] = (original, resume)
        return original

    def signal_frame_built(self, thread, frame: int, context) -> None:
        """The frame at `frame` holds the translated PC: the kernel's saved `context` of the
        interrupted code says so too (what detach and code_addresses_in_use read), and the
        sigreturn over it resumes where the tool says."""
        unbound = self._unbound
        key = (thread.process.space.serial, thread.tid)
        note = unbound.pop(key, None) if unbound else None
        if note is None:
            return
        original, resume = note
        context.reg_write(REGISTER_IDS[thread.process.machine.arch.pc], original)
        if self._frame_pcs is None:
            self._frame_pcs = {}
        frames = [f for f in self._frame_pcs.get(key, []) if f[0] > frame]
        frames.append((frame, original, resume))
        self._frame_pcs[key] = frames

    def signal_return_pc(self, thread, frame: int, pc: int) -> int:
        """sigreturn over the frame at `frame` restores `pc`: where the thread goes on."""
        frames_by_thread = self._frame_pcs
        if not frames_by_thread:
            return pc
        key = (thread.process.space.serial, thread.tid)
        frames = frames_by_thread.get(key)
        if not frames:
            return pc
        match = [f for f in frames if f[0] == frame]
        kept = [f for f in frames if f[0] > frame]
        if kept:
            frames_by_thread[key] = kept
        else:
            del frames_by_thread[key]
        if match and match[-1][1] == pc:
            return match[-1][2](thread)
        return pc

    def _unbound_frames(self) -> dict:
        if self._unbound is None:
            self._unbound = {}
        return self._unbound

    def forget_signal_frame_pcs(self, space) -> None:
        for table in (self._frame_pcs, self._unbound):
            if table:
                for key in [k for k in table if k[0] == space.serial]:
                    del table[key]
