"""The emulate strategy (US 7,350,196: lossless function entry and return tracing).

The probed instruction is replaced for as long as the probe exists, and is never run: when a
thread reaches it, the trap handler calls the tracing framework (the probe hooks) and then does
what the instruction would have done, on the trap frame (instrumenter/strategies/emulate/insn.py), and
returns from the trap past it. Nothing is ever restored, so no other thread can run the
original instruction unobserved — the loss of restore-and-single-step ([0004]-[0006],
instrumenter/strategies/singlestep.py) cannot happen.

Two patch forms ([0028]):
  - "int3": the one-byte breakpoint; #BP is a trap, the saved IP is the address after it.
  - "lock": a LOCK prefix (0xf0) over the first byte, so that the bytes at the site form an
    invalid LOCK use — `push %ebp; mov %esp,%ebp` becomes `f0 89 e5` (DTrace's FBT) — and the
    CPU raises #UD, a fault: the saved IP is the patched address itself. It is refused where the
    patched bytes would form a valid locked instruction (SDM Vol. 2A, LOCK: only ADD, ADC, AND,
    BTC, BTR, BTS, CMPXCHG*, DEC, INC, NEG, NOT, OR, SBB, SUB, XOR, XADD, XCHG with a memory
    destination may be locked).

Return probes (`uretprobe:` with this strategy) patch one site per `ret`/`ret imm16` of the
function, found by disassembling it, and report eax/rax there. Which site is the `returns`
mode's choice (instrumenter/strategies/emulate/return_sites.py): "frame" (the default) takes the patent's
frame-dismantling `pop %ebp`/`pop %rbp`/`leave` right before a `ret` that nothing branches to,
and the `ret` itself otherwise; "ret" takes every `ret`, as DTrace's fbt does on amd64. Either
way each return is seen exactly once. A function that leaves by a tail jump returns through
another function's `ret`: its jumps that may leave it get sites as well, and one that leaves
for a function's entry arms the uretprobe landing in the return slot (_TailJumpHit), so that
return is reported after the tail-called function's (issue 26).
"""
import functools
from dataclasses import dataclass, field

from ...insn.decode import decode
from ...errors import DecodeError, InstrumenterError
from ..base import ProbeStrategy
from .insn import FrameCpu, StackFault, compile_emulation, emulation_refusal
from ..placement import image_at, patch_site, validate_site
from .return_sites import RETURN_MODES, leaving_jumps, return_sites

INT3, LOCK = b"\xcc", b"\xf0"
PATCHES = {"int3": INT3, "lock": LOCK}
MAX_INSN = 15
# Instructions a LOCK prefix is legal on (SDM Vol. 2A, LOCK), when their destination is memory.
LOCKABLE = frozenset({"add", "adc", "and", "btc", "btr", "bts", "cmpxchg", "cmpxchg8b",
                      "cmpxchg16b", "dec", "inc", "neg", "not", "or", "sbb", "sub", "xor",
                      "xadd", "xchg"})


@dataclass
class EmulatedSite:
    address: int
    insn: object                                   # the decoded original (instrumenter.insn.decode.Insn)
    form: str
    run: object = None                             # compile_emulation(insn): callable(cpu)
    hooks: list = field(default_factory=list)      # callables(thread, address), placement order


def lock_patch_refusal(code: bytes, address: int, arch: str) -> str | None:
    """Why a LOCK byte over code[0] would NOT raise #UD, or None when it would."""
    patched = LOCK + code[1:]
    try:
        insn = decode(patched, address, arch)
    except DecodeError:
        return None                                # no valid instruction at all: #UD
    writes_memory = any(op.kind == "mem" and "w" in op.access for op in insn.operands)
    if insn.base_mnemonic in LOCKABLE and writes_memory:
        return (f"{address:#x}: a LOCK prefix there makes `{insn.mnemonic} {insn.op_str}`, a "
                "valid locked instruction, not #UD")
    return None


class EmulateProbes(ProbeStrategy):
    """A strategy (base.py) for one patch form. sites: (space.serial, address) -> EmulatedSite;
    a fork child's copies of the patches get their handlers from the kernel (copy_breakpoints),
    and the same sites from ProbeStrategy.fork."""

    def __init__(self, session, form: str = "int3", returns: str = "frame"):
        if form not in PATCHES:
            raise InstrumenterError(f"unknown patch form {form!r} (have: int3, lock)")
        if returns not in RETURN_MODES:
            raise InstrumenterError(f"unknown return-probe mode {returns!r} (have: frame, ret)")
        super().__init__(session)
        self.form, self.returns = form, returns
        # tid -> a system-call site whose call did not finish (it blocked, or the kernel takes
        # it outside the CPU hook): its next trap there is the same execution, not a new hit.
        self.unfinished: dict[int, int] = {}

    # ---- entry (any emulatable instruction) --------------------------------------------------
    def place(self, process, address: int, hook, owner: str) -> EmulatedSite:
        key = (process.space.serial, address)
        site = self.sites.get(key)
        if site is None:
            site = self._new_site(process, address)
            try:
                patch_site(self.debug, process, address, PATCHES[self.form], owner)
            except InstrumenterError:
                self._forget(process.space, address)
                raise
        else:
            patch_site(self.debug, process, address, PATCHES[self.form], owner)
        site.hooks.append(hook)
        return site

    def remove(self, process, address: int, hook, owner: str) -> None:
        """Take one hook off a site; the last one restores the original bytes."""
        site = self.sites.get((process.space.serial, address))
        if site is None or hook not in site.hooks:
            raise InstrumenterError(f"no probe {owner} at {address:#x}")
        site.hooks.remove(hook)
        if self.debug.unpatch(process, address, owner):
            self._forget(process.space, address)

    def _forget(self, space, address: int) -> None:
        del self.sites[(space.serial, address)]
        self.debug.unregister_breakpoint(space, address)
        self.debug.unregister_invalid_opcode_site(space, address)

    def check(self, process, address: int):
        """place's refusals for a new site, without patching; the decoded instruction."""
        arch, space = self.debug.arch(process).name, process.space
        validate_site(process, address)
        code = self.debug.read_memory(process, address, MAX_INSN)
        insn = decode(code, address, arch)
        refusal = emulation_refusal(insn)
        if refusal is None and self.form == "lock":
            refusal = lock_patch_refusal(code, address, arch)
        if refusal is None and (self.debug.breakpoint_at(space, address) is not None
                                or self.debug.invalid_opcode_site(space, address) is not None):
            refusal = f"{address:#x} is already probed with another strategy"
        if refusal is None and self.debug.patches_overlapping(process, address, 1):
            refusal = f"{address:#x} is already patched by another tool"
        if refusal is not None:
            raise InstrumenterError(refusal)
        return insn

    def _new_site(self, process, address: int) -> EmulatedSite:
        space = process.space
        insn = self.check(process, address)
        site = self.sites[(space.serial, address)] = EmulatedSite(address, insn, self.form,
                                                                compile_emulation(insn))
        handler = functools.partial(self._on_trap, site)
        if self.form == "int3":
            self.debug.register_breakpoint(space, address, handler)
        else:       # armed before the patch is written (emu/machine.py trap_lock_prefix)
            self.debug.register_invalid_opcode_site(space, address, handler)
        return site

    # ---- return (one site per ret of the function) --------------------------------------------
    def place_returns(self, process, probe, function: int) -> list[EmulatedSite]:
        """Patch one site per `ret` of the function that starts at `function` (the `returns`
        mode picks `pop %ebp`/`leave` or the `ret`); hits report eax/rax."""
        image = image_at(process, function)
        symbol = image.symbols.function_at(function) if image is not None else None
        if symbol is None or symbol.addr != function:
            raise InstrumenterError(f"{probe.spec.text}: {function:#x} is not the start of a "
                                    "sized function symbol, so its returns cannot be found")
        arch = self.debug.arch(process).name
        code = self.debug.read_memory(process, symbol.addr, symbol.size)
        sites = return_sites(code, symbol.addr, arch, self.returns)
        jumps = leaving_jumps(code, symbol.addr, arch)
        for jump in jumps:
            refusal = emulation_refusal(jump)
            if refusal is not None:
                raise InstrumenterError(
                    f"{probe.spec.text}: {symbol.name} may leave by `{jump.mnemonic} "
                    f"{jump.op_str}` at {jump.address:#x} (a tail call through a pointer, or a "
                    f"jump table), which this strategy cannot emulate ({refusal}); its return "
                    "would be missed: use --strategy trampoline")
        if not sites and not jumps:
            raise InstrumenterError(f"{probe.spec.text}: {symbol.name} has no ret instruction "
                                    "and no jump out of it, so it never returns")
        placed = []
        hook = _ReturnHit(self.session, probe, function)
        placed += [self.place(process, s.address, hook, probe.spec.text) for s in sites]
        if jumps:
            self.session.returns.landing_for(process)        # mapped now, not inside a trap
            leave = _TailJumpHit(self.session, probe, function, symbol)
            placed += [self.place(process, jump.address, leave, probe.spec.text) for jump in jumps]
        return placed

    # ---- the trap handler (US 7,350,196 FIG. 3) --------------------------------------------------
    def _on_trap(self, site: EmulatedSite, frame, thread) -> bool:
        """Tracing framework first (step 302), then emulate (304), update the IP (306), return
        from the trap (308) — the IRET is the dispatcher's, from the frame changed here."""
        if self.unfinished.get(thread.tid) == site.address:
            del self.unfinished[thread.tid]      # the same system call again: seen once
        else:
            for hook in site.hooks:
                hook(thread, site.address)
        process = thread.process
        try:
            result = site.run(FrameCpu(frame, process, self.debug))
        except StackFault as fault:
            return self._stack_fault(site, frame, thread, fault)
        for hook in site.hooks:           # those that must see where the instruction went
            emulated = getattr(hook, "emulated", None)
            if emulated is not None:
                emulated(thread, frame)
        if result is None:
            return True
        if not result.finished:                  # a SyscallRun that comes back to the site
            self.unfinished[thread.tid] = site.address
        return result.go_on

    def _stack_fault(self, site, frame, thread, fault: StackFault) -> bool:
        """The real instruction would have page-faulted: the kernel raises #PF at its address."""
        return self.debug.deliver_page_fault(frame, thread, site.address, fault.address,
                                             write=fault.write, unmapped=fault.unmapped)


class _ReturnHit:
    """A uretprobe's part of a ret site: report the return value (eax/rax) for the function."""

    def __init__(self, session, probe, function: int):
        self.session, self.probe, self.function = session, probe, function

    def __call__(self, thread, address: int) -> None:
        cpu = self.session.debug.cpu(thread.process)
        retval = cpu.register("eax" if cpu.arch.bits == 32 else "rax")
        self.session.hit(self.probe, thread, self.function, kind="return", retval=retval)


class _TailJumpHit:
    """A uretprobe's part of a jump that may leave its function: when the emulated jump did
    leave for another function's entry (a tail call), the frame is dismantled and [sp] is the
    function's return address, which is swapped for the uretprobe landing as a uretprobe's
    entry does (tracing/uretprobes.py on_entry): the return through the tail-called function's
    `ret` comes back there and is reported, after that function's own. A jump into the
    function's own split-off part (gcc's `f.cold`) or into no function's entry is no tail call."""

    def __init__(self, session, probe, function: int, symbol):
        self.session, self.probe, self.function = session, probe, function
        self.start, self.end, self.name = symbol.addr, symbol.addr + symbol.size, symbol.name

    def __call__(self, thread, address: int) -> None:
        """Before the jump runs: nothing yet (its target is known once it has)."""

    def emulated(self, thread, frame) -> None:
        target = frame.ip
        if self.start <= target < self.end or not self._function_entry(thread.process, target):
            return
        self.session.returns.on_entry(thread, self.probe, self.function, sp=frame.sp)

    def _function_entry(self, process, target: int) -> bool:
        image = image_at(process, target)
        symbol = image.symbols.function_at(target) if image is not None else None
        return (symbol is not None and symbol.addr == target
                and not symbol.name.startswith(f"{self.name}.cold"))
