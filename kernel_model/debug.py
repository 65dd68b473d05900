"""The debug interface: what a tool may observe of the kernel (as ptrace/uprobes offer).

Events are delivered synchronously, in the order they happen, to every subscriber:
  pre_fork(parent, child_pid, vfork)   before the child exists, with the pid it will get
  fork(parent, child), vfork(parent, child)
  fork_failed(parent, child_pid, errno) the fork/vfork announced by pre_fork did not happen
  vfork_done(parent, child)            the vfork parent is about to resume
  exec(process, path, argv)            after a successful execve committed the new image
  exit(process, status)                a process became a zombie (wait status word)
  signal(process, thread, signal, info) a signal is delivered (or takes its default action)
A subscriber is any object with methods of those names (missing ones are skipped).

Gates (seed 002): a tool may put a gate on an address space that several processes share (a
vfork child runs in its parent's Space). While it is there, every tool trap of that space (#BP
at a registered address, #UD at a registered LOCK site) goes to `gate(handler, address, frame,
thread)` instead of the handler, so that the tool can tell which process trapped — the traced
parent's trap goes on to the handler, an untraced child's is the tool's to deal with.

Tracer stops: a tool may leave a thread stopped "waiting for its tracer" (ptrace's
breakpoint stop), and registers itself as a tracer so that a deadlock report can say what the
tool itself waits for (seed 002 FIG. 1).
"""
import functools


class DebugInterface:
    EVENTS = ("pre_fork", "fork", "fork_failed", "vfork", "vfork_done", "exec", "exit", "signal",
              "syscall_entry", "syscall_exit")

    def __init__(self, kernel=None):
        self._kernel = kernel                                   # for tracer stops
        self._gates: dict[int, object] = {}                     # id(space) -> gate
        self.tracers: list = []                                 # tools: objects with waits_for()
        self.subscribers: list = []
        self._breakpoints: dict[tuple[int, int], object] = {}   # (id(space), address) -> handler
        self._invalid_opcodes: dict[tuple[int, int], object] = {}  # LOCK-prefix #UD sites
        self._debug_traps: dict[int, object] = {}                 # id(space) -> #DB handler
        self.syscall_watchers: list = []                        # objects with syscall_entry/exit

    # ---- kernel breakpoint handlers (seed 000: the kernel's #BP handler calls the tool's) ----
    def register_breakpoint(self, space, address: int, handler) -> None:
        """`handler(frame, thread) -> bool` runs when the int3 at `address` in `space` traps;
        it may rewrite frame.ip (IRET then resumes there). True: the guest goes on at once."""
        self._breakpoints[(id(space), address)] = handler

    def unregister_breakpoint(self, space, address: int) -> None:
        self._breakpoints.pop((id(space), address), None)

    def breakpoint_at(self, space, address: int):
        handler = self._breakpoints.get((id(space), address))
        if self._gates and handler is not None:
            return self._gated(space, handler, address)
        return handler

    def _gated(self, space, handler, address: int):
        gate = self._gates.get(id(space))
        return handler if gate is None else functools.partial(gate, handler, address)

    # ---- gates on shared address spaces -----------------------------------------------------
    def set_gate(self, space, gate) -> None:
        """`gate(handler, address, frame, thread) -> bool` sees every tool trap of `space`."""
        self._gates[id(space)] = gate

    def clear_gate(self, space) -> None:
        self._gates.pop(id(space), None)

    def clear_space(self, space) -> None:
        """Forget every handler of `space` (a detached fork child's copy): its traps, if any
        were left, would be the program's own."""
        key = id(space)
        for site in [k for k in self._breakpoints if k[0] == key]:
            del self._breakpoints[site]
        for site in [k for k in self._invalid_opcodes if k[0] == key]:
            self.unregister_invalid_opcode_site(space, site[1])
        self._debug_traps.pop(key, None)
        self._gates.pop(key, None)

    # ---- tracer stops (ptrace's breakpoint stop) ----------------------------------------------
    def register_tracer(self, tracer) -> None:
        """`tracer.waits_for() -> str | None`: what the tool waits for, for deadlock reports."""
        self.tracers.append(tracer)

    def tool_waits(self) -> list[str]:
        return [line for line in (t.waits_for() for t in self.tracers) if line]

    def stop_for_tracer(self, thread, reason: str) -> None:
        """Leave `thread` stopped until its tracer resumes it (resume_from_tracer)."""
        self._kernel.stop_for_tracer(thread, reason)

    def resume_from_tracer(self, thread) -> None:
        self._kernel.resume_from_tracer(thread)

    def copy_breakpoints(self, parent_space, child_space) -> None:
        """fork: the child's copy of the memory holds the same int3s (and LOCK patches); give
        them the same handlers (and the child's Machine the same #UD sites)."""
        for (space_id, address), handler in list(self._breakpoints.items()):
            if space_id == id(parent_space):
                self._breakpoints[(id(child_space), address)] = handler
        for (space_id, address), handler in list(self._invalid_opcodes.items()):
            if space_id == id(parent_space):
                self.register_invalid_opcode_site(child_space, address, handler)
        if id(parent_space) in self._debug_traps:
            self._debug_traps[id(child_space)] = self._debug_traps[id(parent_space)]

    # ---- #UD sites (seed 001: a LOCK prefix patched over a probed instruction) ----------------
    def register_invalid_opcode_site(self, space, address: int, handler) -> None:
        """`handler(frame, thread) -> bool` runs when the LOCK patch at `address` raises #UD
        (a fault: frame.ip == address); like a breakpoint handler it may rewrite the frame.
        Unicorn needs to be told where such patches sit (emu/machine.py trap_lock_prefix)."""
        self._invalid_opcodes[(id(space), address)] = handler
        space.machine.trap_lock_prefix(address)

    def unregister_invalid_opcode_site(self, space, address: int) -> None:
        if self._invalid_opcodes.pop((id(space), address), None) is not None:
            space.machine.untrap_lock_prefix(address)

    def invalid_opcode_site(self, space, address: int):
        handler = self._invalid_opcodes.get((id(space), address))
        if self._gates and handler is not None:
            return self._gated(space, handler, address)
        return handler

    # ---- #DB (single-step traps, TF in the saved flags) ---------------------------------------
    def register_debug_trap(self, space, handler) -> None:
        """`handler(frame, thread) -> bool | None` sees every #DB of `space` first; None means
        "not mine" and the trap takes its usual course (SIGTRAP)."""
        self._debug_traps[id(space)] = handler

    def debug_trap_handler(self, space):
        return self._debug_traps.get(id(space))

    # ---- operations a tool may perform ------------------------------------------------------
    @staticmethod
    def read_memory(process, address: int, size: int) -> bytes:
        return process.machine.mem.read(address, size)

    @staticmethod
    def write_memory(process, address: int, data: bytes) -> None:
        """Through the Machine's one write path: translations of patched code are dropped."""
        process.machine.mem.write(address, data)

    @staticmethod
    def map_pages(process, size: int, perms: int, *, near: int | None = None, name: bytes = b"[xol]") -> int:
        """Map pages into `process` on a tool's behalf (XOL pages), within ±2 GiB of `near`
        when given, so that rel32 jumps reach (x86-64)."""
        from .errno import GuestErrno
        from .errors import KernelError
        from .vm import MAP_ANONYMOUS, MAP_PRIVATE
        vm = process.vm
        hint = 0
        if near is not None and process.machine.arch.bits == 64:   # i386: rel32 reaches everything
            try:
                hint = vm.find_free(size, below=near & ~0xFFF)
            except GuestErrno:
                hint = 0
            if hint and abs(hint - near) >= (1 << 31) - size:
                hint = 0
        try:
            return vm.mmap(hint, size, perms, MAP_PRIVATE | MAP_ANONYMOUS, name=name)
        except GuestErrno as e:
            raise KernelError(f"cannot map {size} bytes into pid {process.pid}: {e}") from None

    def syscall_entry(self, thread, name: str, args) -> None:
        for watcher in self.syscall_watchers:
            watcher.syscall_entry(thread, name, args)

    def syscall_exit(self, thread, name: str, args, result: int) -> None:
        for watcher in self.syscall_watchers:
            watcher.syscall_exit(thread, name, args, result)

    def subscribe(self, subscriber) -> None:
        self.subscribers.append(subscriber)

    def _emit(self, event: str, *args, **kwargs) -> None:
        for subscriber in self.subscribers:
            handler = getattr(subscriber, event, None)
            if handler is not None:
                handler(*args, **kwargs)

    def pre_fork(self, parent, child_pid: int, *, vfork: bool) -> None:
        self._emit("pre_fork", parent, child_pid, vfork=vfork)

    def fork(self, parent, child) -> None:
        self._emit("fork", parent, child)

    def fork_failed(self, parent, child_pid: int, errno: int) -> None:
        self._emit("fork_failed", parent, child_pid, errno)

    def vfork(self, parent, child) -> None:
        self._emit("vfork", parent, child)

    def vfork_done(self, parent, child) -> None:
        self._emit("vfork_done", parent, child)

    def exec(self, process, path: bytes, argv) -> None:
        self._emit("exec", process, path, argv)

    def exit(self, process, status: int) -> None:
        self._emit("exit", process, status)

    def signal(self, process, thread, signal: int, info: dict | None = None) -> None:
        self._emit("signal", process, thread, signal, info)
