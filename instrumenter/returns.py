"""Return probes (uretprobe): the return address is replaced at function entry, as Linux's
uretprobes do (kernel/events/uprobes.c prepare_uretprobe).

At the entry hit the word at [sp] (the return address) is saved on a per-thread shadow stack
together with sp, and replaced by a "landing" address: an int3 in the XOL area. When the
function returns there, the landing's breakpoint handler reports the return value (eax/rax),
pops the shadow stack and resumes at the original return address. Frames abandoned by longjmp
are recognised because their saved sp lies below the returning frame's (the stack grows down).
"""
import struct
from dataclasses import dataclass

from .errors import InstrumenterError


@dataclass
class Pending:
    sp: int                  # sp at function entry (pointing at the return address)
    return_address: int
    probe: object
    function: int


class ReturnProbes:
    def __init__(self, session):
        self.session = session
        self.landings: dict[int, int] = {}            # id(space) -> landing address
        self.shadow: dict[int, list[Pending]] = {}    # tid -> pending returns, innermost last

    def place(self, process, probe, function: int) -> None:
        self._landing(process)
        self.session.trampolines.place(process, function, _ReturnEntry(self, probe, function),
                                       probe.spec.text)

    def _landing(self, process) -> int:
        space = process.space
        landing = self.landings.get(id(space))
        if landing is None:
            xol = self.session.trampolines.xol_for(process, near=process.image.entry)
            landing = xol.allocate(16)
            xol.write(landing, b"\xcc")
            self.session.debug.register_breakpoint(space, landing, self._on_return)
            self.landings[id(space)] = landing
        return landing

    def on_entry(self, thread, probe, function: int) -> None:
        machine = thread.process.machine
        word = machine.arch.word
        fmt = "<I" if word == 4 else "<Q"
        sp = machine.sp
        original = struct.unpack(fmt, machine.mem.read(sp, word))[0]
        self.shadow.setdefault(thread.tid, []).append(Pending(sp, original, probe, function))
        self.session.debug.write_memory(thread.process, sp, struct.pack(fmt, self._landing(thread.process)))

    def _on_return(self, frame, thread) -> bool:
        stack = self.shadow.get(thread.tid) or []
        sp_now = frame.sp if frame.sp is not None else thread.process.machine.sp
        # The returning frame is the innermost one whose entry sp lies below sp now; deeper
        # entries above it on the shadow stack were abandoned (longjmp) and are dropped.
        while len(stack) > 1 and stack[-2].sp < sp_now:
            stack.pop()
        if not stack or stack[-1].sp >= sp_now:
            raise InstrumenterError(f"return landing hit by tid {thread.tid} with no pending return")
        pending = stack.pop()
        machine = thread.process.machine
        retval = machine.reg("eax" if machine.arch.bits == 32 else "rax")
        self.session.hit(pending.probe, thread, pending.function, kind="return", retval=retval)
        frame.ip = pending.return_address
        return True

    def fork(self, parent_thread, child_thread) -> None:
        """A fork or vfork child starts with its parent's stack, landing addresses included:
        it inherits the forking thread's pending returns (its own copy to pop)."""
        pending = self.shadow.get(parent_thread.tid)
        if pending:
            self.shadow[child_thread.tid] = list(pending)

    def restore_stack(self, thread, process) -> None:
        """Put the original return addresses back where `thread` has landings pending, in
        `process`'s memory (a detached fork child's copy of the stack): nothing then returns
        into the tool's landing there."""
        machine = process.machine
        fmt = "<I" if machine.arch.word == 4 else "<Q"
        landing = self.landings.get(id(thread.process.space))
        for pending in self.shadow.get(thread.tid, ()):
            word = struct.unpack(fmt, machine.mem.read(pending.sp, machine.arch.word))[0]
            if word == landing:
                self.session.debug.write_memory(process, pending.sp, struct.pack(fmt, pending.return_address))

    def forget_process(self, process) -> None:
        for thread in process.threads:
            self.shadow.pop(thread.tid, None)


class _ReturnEntry:
    def __init__(self, returns, probe, function):
        self.returns, self.probe, self.function = returns, probe, function

    def __call__(self, thread, address: int) -> None:
        self.returns.on_entry(thread, self.probe, self.function)
