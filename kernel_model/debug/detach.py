"""What a tool needs to leave a process as if it had never been there (US 7,017,153:
uninstrumenting by stack unwinding and cleanup). Part of the debug interface
(kernel_model/debug/), one of its parts.

  step_thread(thread)            run one machine instruction of `thread` now, at a safe point
                                 (PTRACE_SINGLESTEP done synchronously): a thread caught half-way
                                 through the tool's code is walked to a point that corresponds
                                 to an original one;
  signal_frame_pcs(thread)       the saved PC of each pending signal frame on its stack, with
                                 the address of the word holding it (sigreturn resumes there);
  set_signal_frame_pc(...)       rewrite one (the frame is guest memory: the program's own view);
  stack_range(thread)            [sp, end of the stack area): the live part of a thread's stack;
  unmap_tool_pages(process, n)   unmap every area named `n` (the tool's XOL and data pages);
  keep_stale_range(...)          after the unmap, a fetch fault inside a former tool range is
                                 translated to its original address (`translate(ip)`) and the
                                 thread resumes there — the patent's handling of a pointer into
                                 the unmapped instrumented space that the program kept.
"""
import struct

from emu.memory import MemoryAccessError
from emu.registers import REGISTER_IDS

from ..process.proc import RUNNABLE, ZOMBIE
from ..signals.frame import (RT32_UC_OFFSET, RT64_UC_OFFSET, SC32, SF32_SC_OFFSET, UC32_HEAD,
                            UC64_HEAD)

# Where sigcontext's PC is, from the frame's first byte (kernel_model/signals/frame.py layouts):
# x86-64 rt_sigframe: 16 GPR words then rip; i386 sigcontext: 14 words then eip.
_PC_SLOTS = {64: (RT64_UC_OFFSET + UC64_HEAD.size + 16 * 8,),
             32: (RT32_UC_OFFSET + UC32_HEAD.size + 14 * 4, SF32_SC_OFFSET + 14 * 4)}
assert SC32.size == 88


class DetachAccess:
    _stale: dict | None = None            # space.serial -> [(start, end, translate)]

    def __init__(self, kernel=None):
        self._kernel = kernel

    # ---- threads ---------------------------------------------------------------------------
    def step_thread(self, thread) -> bool:
        """Run exactly one instruction of `thread` now (the caller is at a safe point: between
        instructions, outside every hook), trapping and faulting as the run loop would; the
        thread that was current is current again afterwards. Returns whether `thread` can still
        run (False: it sleeps in a system call, stopped, or died)."""
        kernel = self._kernel
        previous = kernel.current
        kernel._switch_to(thread)
        machine = thread.process.machine
        kernel.in_hook = True
        try:
            exit_ = machine.run(machine.pc, count=1)
        finally:
            kernel.in_hook = False
        kernel._release_pending()
        kernel._handle_exit(thread, exit_)
        kernel._release_pending()
        if previous is not None and previous is not thread and previous.state != ZOMBIE:
            kernel._switch_to(previous)
        return thread.state == RUNNABLE

    @staticmethod
    def thread_can_step(thread) -> bool:
        return thread.state == RUNNABLE

    def signal_frame_pcs(self, thread) -> list[tuple[int, int, int]]:
        """(address of the saved-PC word, PC, saved SP) of every pending signal frame of
        `thread`, innermost last. The frame's type (rt or not, i386) is the one whose PC word
        holds what the kernel saved when it delivered the signal."""
        if thread.state == ZOMBIE:
            return []
        machine = thread.process.machine
        bits = machine.arch.bits
        fmt = "<Q" if bits == 64 else "<I"
        size = bits // 8
        found = []
        for frame, context in thread.saved_contexts:
            saved_pc = context.reg_read(REGISTER_IDS[machine.arch.pc])
            saved_sp = context.reg_read(REGISTER_IDS[machine.arch.sp])
            for offset in _PC_SLOTS[bits]:
                slot = frame + offset
                try:
                    word = struct.unpack(fmt, bytes(machine.mem.read(slot, size)))[0]
                except MemoryAccessError:           # a frame the program unmapped since
                    continue
                if word == saved_pc:
                    found.append((slot, word, saved_sp))
                    break
        return found

    def set_signal_frame_pc(self, thread, slot: int, pc: int) -> None:
        """The frame's saved PC (at `slot`, from signal_frame_pcs) becomes `pc`; the kernel's
        own copy of the interrupted context follows."""
        machine = thread.process.machine
        bits = machine.arch.bits
        machine.mem.write(slot, struct.pack("<Q" if bits == 64 else "<I", pc))
        for frame, context in thread.saved_contexts:
            if frame < slot < frame + 1024:
                context.reg_write(REGISTER_IDS[machine.arch.pc], pc)

    @staticmethod
    def stack_range(thread, sp: int) -> tuple[int, int]:
        """[sp, end of the area holding sp): the live part of the thread's stack."""
        vma = thread.process.space.vm.vma_at(sp)
        return (sp, sp) if vma is None else (sp, vma.end)

    # ---- the tool's pages ------------------------------------------------------------------
    @staticmethod
    def unmap_tool_pages(process, names) -> list[tuple[int, int, bytes]]:
        """Unmap every area of `process`'s space named in `names` (pages map_pages mapped for a
        tool); returns them (start, end, name) by address."""
        vm = process.space.vm
        areas = sorted((v.start, v.end, v.name) for v in vm.vmas if v.name in names)
        for start, end, _ in areas:
            vm.munmap(start, end - start)
        return areas

    # ---- stale pointers into the former tool space -----------------------------------------
    def keep_stale_range(self, space, start: int, end: int, translate) -> None:
        """After the tool's pages in [start, end) are gone: `translate(ip, process) -> int |
        None` says which original address a fetch at `ip` stood for (None: none, the fault
        stays). A fork child gets its parent's ranges (copy_stale_ranges)."""
        if self._stale is None:
            self._stale = {}
        self._stale.setdefault(space.serial, []).append((start, end, translate))

    def stale_code_fault(self, process, frame) -> bool:
        """A fault at `frame.ip`: if it is a fetch in a former tool range with a translation,
        the thread resumes at the original address (True)."""
        ranges = (self._stale or {}).get(process.space.serial) if process.space else None
        if not ranges or frame.fault_address != frame.ip:
            return False
        for start, end, translate in ranges:
            if start <= frame.ip < end:
                original = translate(frame.ip, process)
                if original is not None:
                    frame.ip = original
                    return True
        return False

    def copy_stale_ranges(self, parent_space, child_space) -> None:
        """fork: the child's copy of the memory holds the program's stale pointers too."""
        ranges = (self._stale or {}).get(parent_space.serial)
        if ranges:
            self._stale[child_space.serial] = list(ranges)

    def forget_stale_ranges(self, space) -> None:
        if self._stale:
            self._stale.pop(space.serial, None)
