"""Return probes (uretprobe): the return address is replaced at function entry, as Linux's
uretprobes do (kernel/events/uprobes.c prepare_uretprobe).

At the entry hit the word at [sp] (the return address) is saved on a per-thread shadow stack
together with sp, and replaced by a "landing" address: an int3 in the XOL area. When the
function returns there, the landing's breakpoint handler reports the return value (eax/rax),
pops the shadow stack and resumes at the original return address. Frames abandoned by longjmp
are recognised because their saved sp lies below the returning frame's (the stack grows down).

Tail calls (issue 26): a function that leaves by `jmp f` hands its return slot to f, so f's
entry finds the landing there already. f's pending return is chained to the caller's (it keeps
the caller's real return address and leaves the slot alone), and one return through the landing
reports every chained frame, innermost (the tail-called function) first, each with the same
return value — as Linux's handle_trampoline() walks the return_instances that
prepare_uretprobe() chained (kernel/events/uprobes.c, RP_CHECK_CHAIN_CALL).

Children (US 7,185,320 with uretprobes): a fork or vfork child starts with its parent's stack and
registers, landing addresses included, so it inherits the forking thread's pending returns as
its own copy — what Linux does in uprobe_copy_process()/dup_utask() for CLONE_VFORK. A child the
tool does not trace gets the real return addresses instead (`detach_child`): in its registers,
because every libc's vfork pops its return address into a register before the syscall (the
child would otherwise overwrite the slot the parent returns through: musl and glibc
`pop %rdx`/`pop %edx`, push it back after), and in the live slots of its stack. A vfork child's
stack is the parent's, so those slots get the landing back before the parent resumes
(`reinsert_slots`), as the code sites do.
"""
import struct
from dataclasses import dataclass

from emu.registers import gpr_names

from ..errors import InstrumenterError


@dataclass
class Pending:
    sp: int                  # sp at function entry (pointing at the return address)
    return_address: int
    probe: object
    function: int
    chained: bool = False    # entered by a tail jump: returns with the pending below it

    @property
    def function_name(self) -> str:
        """As the probe names it: symbol tables may not size libc's assembly (musl's vfork)."""
        return self.probe.spec.function or f"{self.function:#x}"


class ReturnProbes:
    def __init__(self, session):
        self.session = session
        self.landings: dict[int, int] = {}            # space.serial -> landing address
        self.shadow: dict[int, list[Pending]] = {}    # tid -> pending returns, innermost last

    def place(self, process, probe, function: int) -> None:
        """The entry hook that swaps the return address goes on with the session's strategy,
        as any entry probe: an int3 trampoline, or a jump whose Python part runs it (Linux's
        optimized uprobes carry uretprobes the same way); the landing is an int3 either way."""
        self._landing(process)
        self.session.place(process, function, _ReturnEntry(self, probe, function), probe)

    def landing_for(self, process) -> int:
        """The landing of `process`'s space, mapped now if it is not yet (a strategy that arms
        it later, from inside a trap: emulate/strategy.py's tail jumps)."""
        return self._landing(process)

    def _landing(self, process) -> int:
        space = process.space
        landing = self.landings.get(space.serial)
        if landing is None:
            near = process.image.entry if process.image is not None else 0
            xol = self.session.trampolines.xol_for(process, near=near)
            landing = xol.allocate(16)
            xol.write(landing, b"\xcc")
            self.session.debug.register_breakpoint(space, landing, self._on_return)
            self.landings[space.serial] = landing
        return landing

    def on_entry(self, thread, probe, function: int, sp: int | None = None) -> None:
        """`thread` is at `function`'s entry, its return address at `sp` (the live sp unless
        given: a trap frame's saved sp)."""
        if not getattr(probe, "enabled", True):   # disabled (detach.py): no landing pushed
            return
        cpu = self.session.debug.cpu(thread.process)
        word = cpu.arch.word
        fmt = "<I" if word == 4 else "<Q"
        sp = cpu.sp if sp is None else sp
        original = struct.unpack(fmt, cpu.read(sp, word))[0]
        stack = self.shadow.setdefault(thread.tid, [])
        landing = self._landing(thread.process)
        # Frames a longjmp abandoned lie at or below this call's return slot: they are dead, and
        # one left at this very slot would be taken for this call's at its return (Linux drops
        # them here too: cleanup_return_instances, arch_uretprobe_is_alive(RP_CHECK_CALL)). A
        # slot holding the landing already was reached by a tail call: the frame there is alive
        # (RP_CHECK_CHAIN_CALL) and returns with this one.
        chained = original == landing
        while stack and (stack[-1].sp < sp or (stack[-1].sp == sp and not chained)):
            stack.pop()
        if chained:
            if not stack or stack[-1].sp != sp:
                # No pending return owns the landing in this slot (the program copied the
                # address there itself): nothing to chain to, as Linux refuses ("handle tail
                # call"), and the slot is left as the program made it.
                return
            # The chained frame returns where the frame it continues does (prepare_uretprobe
            # copies orig_ret_vaddr); the slot keeps the landing.
            stack.append(Pending(sp, stack[-1].return_address, probe, function, chained=True))
            return
        stack.append(Pending(sp, original, probe, function))
        self.session.debug.write_memory(thread.process, sp, struct.pack(fmt, landing))

    def is_landing(self, process, address: int) -> bool:
        return self.landings.get(process.space.serial) == address

    def _on_return(self, frame, thread) -> bool:
        chain = self.unwind_chain(frame, thread)
        cpu = self.session.debug.cpu(thread.process)
        retval = cpu.register("eax" if cpu.arch.bits == 32 else "rax")
        closed = []                  # probes that pair a whole chain themselves: hit once
        for pending in chain:
            probe = pending.probe
            resolved = getattr(probe, "resolved", None)
            if resolved is not None:        # an IFUNC resolver returned (instrumenter/tracing/ifunc.py)
                resolved(thread, retval)
                continue
            if getattr(probe, "closes_chains", False):
                if any(probe is done for done in closed):
                    continue
                closed.append(probe)
            self.session.hit(probe, thread, pending.function, kind="return", retval=retval)
        return True

    def unwind(self, frame, thread) -> Pending:
        """`thread` came back through the landing: pop the frames that returned (and frames
        they abandoned) and resume at the real return address; the outermost frame returned."""
        return self.unwind_chain(frame, thread)[-1]

    def unwind_chain(self, frame, thread) -> list[Pending]:
        """As `unwind`; every frame that returned, innermost (the last tail-called) first."""
        stack = self.shadow.get(thread.tid) or []
        sp_now = frame.sp if frame.sp is not None else self.session.debug.cpu(thread.process).sp
        index = _returning(stack, sp_now)
        if index is None:
            raise InstrumenterError(f"return landing hit by tid {thread.tid} with no pending return")
        pending = stack[index]
        end = index + 1
        while end < len(stack) and stack[end].chained and stack[end].sp == pending.sp:
            end += 1
        chain = stack[index:end][::-1]
        popped = stack[index:]
        del stack[index:]
        frame.ip = pending.return_address
        # The slots popped (and those longjmp abandoned) are dead stack now, but a frame built
        # there later may read them uninitialised: they get the word the unprobed program left
        # there, and no landing address outlives its return (a detach finds none: detach.py).
        self._write_slots(thread.process, [(p.sp, p.return_address) for p in popped],
                          expect=self.landings.get(thread.process.space.serial))
        return chain

    def returning(self, thread, sp_now: int) -> Pending | None:
        """The pending return that `thread` takes when it reaches the landing with `sp_now`."""
        stack = self.shadow.get(thread.tid) or []
        index = _returning(stack, sp_now)
        return None if index is None else stack[index]

    def fork(self, parent_thread, child_thread) -> None:
        """A fork or vfork child starts with its parent's stack, landing addresses included:
        it inherits the forking thread's pending returns (its own copy to pop)."""
        pending = self.shadow.get(parent_thread.tid)
        if pending:
            self.shadow[child_thread.tid] = list(pending)

    def detach_child(self, parent_thread, child_thread) -> tuple[list[str], list[tuple[int, int]]]:
        """A child the tool does not trace, not run yet: every reference to the landing it
        inherited from `parent_thread` becomes the real return address, so it runs the original
        program only. Registers holding the landing get the return address of the frame that is
        mid-return (entry sp below the child's sp: vfork popped it); live stack slots (entry
        sp at or above it) get theirs. Returns (registers rewritten, [(slot, return address)]):
        the slots are shared with a vfork parent, which needs its landings back afterwards."""
        landing = self.landings.get(parent_thread.process.space.serial)
        pending = self.shadow.get(parent_thread.tid)
        if landing is None or not pending:
            return [], []
        # The child has not run yet: its registers are in its saved context, which the debug
        # interface reads and writes as ptrace's GETREGS/SETREGS would.
        debug = self.session.debug
        arch = debug.arch(child_thread.process)
        sp = debug.read_register(child_thread, arch.sp)
        registers = []
        returning = _returning(pending, sp)
        if returning is not None:
            for name in gpr_names(arch):
                if name != arch.sp and debug.read_register(child_thread, name) == landing:
                    debug.write_register(child_thread, name, pending[returning].return_address)
                    registers.append(name)
        slots = [(p.sp, p.return_address) for p in pending if p.sp >= sp]
        return registers, self._write_slots(child_thread.process, slots, expect=landing)

    def reinsert_slots(self, process, slots: list[tuple[int, int]]) -> list[int]:
        """The landing back into the slots `detach_child` restored, where a slot still holds
        the return address written there (the vfork child left that frame alone, as it must);
        returns the slots re-armed."""
        landing = self.landings.get(process.space.serial)
        if landing is None:
            return []
        done = self._write_slots(process, [(slot, landing) for slot, _ in slots],
                                 expect=dict(slots))
        return [slot for slot, _ in done]

    def _write_slots(self, process, slots, *, expect) -> list[tuple[int, int]]:
        """Write each (slot, word) whose current word is `expect` (one value, or per slot)."""
        size = self.session.debug.arch(process).word
        fmt = "<I" if size == 4 else "<Q"
        written = []
        for slot, word in slots:
            wanted = expect[slot] if isinstance(expect, dict) else expect
            current = self.session.debug.read_memory(process, slot, size)
            if struct.unpack(fmt, current)[0] == wanted:
                self.session.debug.write_memory(process, slot, struct.pack(fmt, word))
                written.append((slot, word))
        return written

    def forget_process(self, process) -> None:
        for thread in process.threads:
            self.shadow.pop(thread.tid, None)


def _returning(stack: list[Pending], sp_now: int) -> int | None:
    """Index of the frame a return to the landing with `sp_now` comes from: the outermost
    entry whose entry sp lies below sp now (the ret popped its slot); entries deeper than it
    on the shadow stack were abandoned (longjmp)."""
    found = None
    for index in range(len(stack) - 1, -1, -1):
        if stack[index].sp >= sp_now:
            break
        found = index
    return found


class _ReturnEntry:
    def __init__(self, returns, probe, function):
        self.returns, self.probe, self.function = returns, probe, function

    def __call__(self, thread, address: int) -> None:
        self.returns.on_entry(thread, self.probe, self.function)
