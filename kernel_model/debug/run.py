"""Run control for a debugger: what ptrace's stops, PTRACE_SINGLESTEP, PTRACE_GETFPREGS and
hardware breakpoints give a real one. Part of the debug interface (kernel_model/debug/).

A debugger (instrumenter/debugger/) installs one run controller. The kernel's run loop asks it,
between two slices of guest execution (never inside Unicorn's hooks, so it may read and write
every thread's registers and memory and block on its user):
  schedule_point()                 before the next thread is picked: stop the world here and
                                   talk to the user while a stop is pending
  choose(thread) -> thread         the thread to run instead (a thread being single-stepped)
  intercept_signal(thread) -> bool a signal is about to be delivered to `thread` (ptrace's
                                   signal-delivery-stop): True when the controller took it
                                   (take_signal) to report it first; the loop then goes on
                                   to the next schedule point
  slice_count(thread, count)       the instruction count of the slice (1 for a single step)
  after_slice(thread, exit)        the slice ended (a step done, a breakpoint, an interrupt)
  idle() -> bool                   nothing can run: True when the controller holds the threads
                                   that could (a debugger's user resumed others only) and has
                                   a stop for its user; False lets the loop end or report the
                                   deadlock as without a controller
Without a controller the loop runs exactly as before, so an undebugged run is unchanged.

A debugger's Ctrl-C comes from another host thread while a slice runs (interrupt_guest): it
stops the slice at its next block's start (emu/block_stop.py: a stop asked with uc_emu_stop from
there could end the run just after the store of a read-modify-write instruction, which then
ran again). The block hook goes on each Machine before its slice (arm_interrupt, which the run
loop calls while a controller is installed): only debugged runs pay it.

Code breakpoints (emu/code_breakpoints.py) stop a space's CPU before the instruction at an
address without patching the text, so they coexist with every tool patch (US 6,957,421,
US 6,957,421: debugging breakpoints in instrumented code).
"""
import threading

from emu.block_stop import BlockStop
from emu.code_breakpoints import CodeBreakpoints
from emu.fpu import read_fpu, write_fpu

from ..process.proc import RUNNABLE, ZOMBIE


class RunControl:
    run_controller = None
    _interrupts = None               # the BlockStop of a Ctrl-C, while a controller is installed
    _run_thread = None               # the host thread that runs the slices (and sets controllers)

    def __init__(self, kernel, aliases, code_breakpoints):
        self._kernel = kernel
        self._aliases = aliases                      # code_aliases.py: a tool's copies of code
        self._code_breakpoints = code_breakpoints    # SpaceHooks: space -> CodeBreakpoints

    def set_run_controller(self, controller) -> None:
        """Install (or with None, remove) the one run controller (module docstring). Called on
        the thread that runs the guest, between slices (a debugger's attach or detach), where
        the interrupt's block hooks may be added and removed."""
        self.run_controller = controller
        self._run_thread = threading.get_ident()
        if controller is not None and self._interrupts is None:
            self._interrupts = BlockStop()
        elif controller is None and self._interrupts is not None:
            interrupts, self._interrupts = self._interrupts, None
            interrupts.close()

    def arm_interrupt(self, machine) -> None:
        """`machine` runs the next slice (the run loop, while a controller is installed): a
        Ctrl-C from now on stops it at a block's start (interrupt_guest)."""
        self._run_thread = threading.get_ident()
        interrupts = self._interrupts
        if interrupts is not None:
            interrupts.arm(machine)

    # ---- code breakpoints ------------------------------------------------------------------
    def add_code_breakpoint(self, space, address: int, on_hit) -> None:
        """Stop before the instruction at `address` in `space` when `on_hit(thread, address)`
        says so (True); the run then ends and the run loop reaches a schedule point."""
        kernel = self._kernel

        aliases = self._aliases

        def hit(address):           # an alias of a tool's copy stands for its original
            thread = kernel.current
            if aliases.code_alias_passes(thread, address):
                return False
            return on_hit(thread, aliases.code_alias_original(space, address))
        breakpoints = self._code_breakpoints.hook(space, lambda machine: CodeBreakpoints(machine, hit))
        breakpoints.add(address)
        for alias in aliases.code_aliases_of(space, address):         # code_aliases.py
            breakpoints.add(alias)

    def remove_code_breakpoint(self, space, address: int) -> None:
        breakpoints = self._code_breakpoints.get(space)
        if breakpoints is not None:
            breakpoints.remove(address)
            for alias in self._aliases.code_aliases_of(space, address):
                breakpoints.remove(alias)

    def code_breakpoints(self, space) -> list[int]:
        breakpoints = self._code_breakpoints.get(space)
        return breakpoints.addresses() if breakpoints is not None else []

    def forget_code_breakpoints(self, space) -> None:
        """The space is released (or recycled for another program): its hooks go."""
        breakpoints = self._code_breakpoints.pop(space)
        if breakpoints is not None:
            breakpoints.clear()

    # ---- stopping the running guest from elsewhere ----------------------------------------
    def interrupt_guest(self) -> None:
        """End the slice that runs now, if any: the run loop then reaches a schedule point.
        From another host thread (a debugger's Ctrl-C, from its input thread) the slice stops
        at its next block's start (module docstring); from the run's own thread (a debugger's
        event, inside a system call's hook) at once, as the hook returns."""
        thread = self._kernel.current
        if thread is None or not self._kernel.in_hook or thread.process.space is None:
            return
        interrupts = self._interrupts
        if threading.get_ident() == self._run_thread:
            thread.process.machine.stop()
        elif interrupts is not None:
            interrupts.ask()
        # (from another thread with no controller, after a detach: nobody waits for a stop)

    # ---- whole-thread state ----------------------------------------------------------------
    def read_fpu(self, thread):
        """`thread`'s x87/SSE state (emu.fpu.FpuState), live or switched out."""
        return self._with_thread_live(thread, read_fpu)

    def write_fpu(self, thread, state) -> None:
        self._with_thread_live(thread, lambda machine: write_fpu(machine, state), store=True)

    def _with_thread_live(self, thread, action, *, store: bool = False):
        """Run `action(machine)` with `thread`'s registers loaded in its Machine: a switched-out
        thread's context is loaded for the while (and saved back after a change), then the
        registers of whoever was live are put back. Only between slices."""
        if thread.state == ZOMBIE:
            from ..errors import KernelError
            raise KernelError(f"tid {thread.tid} has exited: it has no registers")
        machine = thread.process.machine
        if thread.context is None:
            return action(machine)
        live = machine.save_context()
        machine.restore_context(thread.context)
        try:
            result = action(machine)
            if store:
                thread.context = machine.save_context()
        finally:
            machine.restore_context(live)
        return result

    # ---- processes -------------------------------------------------------------------------
    def kill_process(self, process, signal: int) -> None:
        """Terminate `process` by `signal` (a debugger's kill): no handler runs, as SIGKILL."""
        if process.state != ZOMBIE:
            self._kernel.kill(process, signal)

    def processes(self) -> list:
        """Every process that has not exited, by pid."""
        return [p for _, p in sorted(self._kernel.processes.items()) if p.state != ZOMBIE]

    @staticmethod
    def is_alive(process) -> bool:
        return process.state != ZOMBIE and process.space is not None

    @staticmethod
    def is_alive_thread(thread) -> bool:
        return thread.state != ZOMBIE and thread.process.state != ZOMBIE

    @staticmethod
    def thread_runnable(thread) -> bool:
        return thread.state == RUNNABLE

    def post_signal(self, thread, signal: int, info: dict | None = None) -> None:
        """Send `signal` to `thread` as tgkill does (a debugger passing a signal on, with the
        siginfo it was taken with)."""
        self._kernel.signals.post(thread.process, signal, thread=thread, info=info)

    def next_signal(self, thread) -> int:
        """The signal the kernel would deliver to `thread` next (0: none): the lowest
        pending one its mask lets through, thread-directed or process-directed."""
        pending = self._kernel.signals.deliverable(thread)
        return (pending & -pending).bit_length()

    def take_signal(self, thread):
        """Dequeue next_signal(thread) without acting on it: (signal, siginfo) or None.
        The debugger reports it and later passes it on (post_signal) or drops it."""
        signal = self.next_signal(thread)
        if not signal:
            return None
        return self._kernel.signals.dequeue(thread, 1 << (signal - 1))
