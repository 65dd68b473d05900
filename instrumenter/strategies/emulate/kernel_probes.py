"""The emulate strategy for a bare guest (kernel_model/ring0.py): US 7,350,196 on kernel code.

The same patch forms as instrumenter/strategies/emulate/strategy.py — int3 (#BP, a trap) or a LOCK prefix over the
first byte (#UD, a fault) — and the same handler order ([0031], FIG. 3): the probe fires, the
instruction is emulated on the trap frame, the handler returns with IRET. The difference is
where the frame is: a ring-0 guest traps at the same privilege level, so the frame sits on its
own stack and the emulation moves it (instrumenter/strategies/emulate/kernel.py); a ring-3 guest's frame
is on the kernel stack with SS:ESP, as for a process.

Entry probes go on a function's first instruction (`push %ebp`/`push %rbp` or `enter`); return
probes on one site per `ret`, chosen as for processes (instrumenter/strategies/emulate/return_sites.py).
"""
from dataclasses import dataclass, field

from ...insn.decode import decode
from .strategy import PATCHES, lock_patch_refusal
from .insn import StackFault, compile_emulation, emulation_refusal
from .kernel import emulate_on_frame
from ...errors import InstrumenterError
from .return_sites import RETURN_MODES, return_sites

MAX_INSN = 15
ENTRY_FORMS = {"i386": ("push ebp", "enter"), "x86_64": ("push rbp", "enter")}


@dataclass
class BareSite:
    address: int
    insn: object
    original: bytes
    run: object
    hooks: list = field(default_factory=list)       # callables(address, frame)


class KernelEmulateProbes:
    """Probes on a BareGuest's code, emulated on the trap frame. With `record`, every
    emulation is kept in `emulations` (instrumenter.strategies.emulate.kernel.Emulation)."""

    def __init__(self, guest, form: str = "int3", returns: str = "frame", record: bool = False):
        if form not in PATCHES:
            raise InstrumenterError(f"unknown patch form {form!r} (have: int3, lock)")
        if returns not in RETURN_MODES:
            raise InstrumenterError(f"unknown return-probe mode {returns!r} (have: frame, ret)")
        self.guest, self.form, self.returns, self.record = guest, form, returns, record
        self.bp = "ebp" if guest.arch == "i386" else "rbp"
        self.sites: dict[int, BareSite] = {}
        self.emulations: list = []

    # ---- placing -----------------------------------------------------------------------------
    def place(self, address: int, hook) -> BareSite:
        """Patch the instruction at `address`; `hook(address, frame)` fires before it is
        emulated. Several hooks may share a site."""
        site = self.sites.get(address)
        if site is None:
            site = self.sites[address] = self._new_site(address)
        site.hooks.append(hook)
        return site

    def _new_site(self, address: int) -> BareSite:
        perms = self.guest.cpu().perms_at(address)
        if perms is None or not perms & 4:
            raise InstrumenterError(f"{address:#x} is not in executable memory of the guest")
        code = self._readable(address)
        if address in self.sites:
            raise InstrumenterError(f"{address:#x} is already patched")
        insn = decode(code, address, self.guest.arch)
        refusal = emulation_refusal(insn)
        if refusal is None and self.form == "lock":
            refusal = lock_patch_refusal(code, address, self.guest.arch)
        if refusal is not None:
            raise InstrumenterError(refusal)
        site = BareSite(address, insn, code[:1], compile_emulation(insn))
        if self.form == "int3":
            self.guest.on_breakpoint[address] = lambda frame: self._on_trap(site, frame)
        else:
            self.guest.on_invalid_opcode[address] = lambda frame: self._on_trap(site, frame)
            self.guest.arm_lock_site(address)            # before the patch (emu/machine.py)
        self.guest.write_code(address, PATCHES[self.form])
        return site

    def _readable(self, address: int) -> bytes:
        """Up to MAX_INSN original bytes (fewer at the end of the mapping)."""
        for size in range(MAX_INSN, 0, -1):
            if self.guest.cpu().is_mapped(address, size):
                return self.original_bytes(address, size)
        raise InstrumenterError(f"{address:#x} is not mapped")

    def original_bytes(self, address: int, size: int) -> bytes:
        """Guest code as it was before any patch of this placer (the process-image view)."""
        data = bytearray(self.guest.read(address, size))
        for at, site in self.sites.items():
            if address <= at < address + size:
                data[at - address] = site.original[0]
        return bytes(data)

    def place_entry(self, function: int, hook) -> BareSite:
        """The frame-building instruction at `function` (US 7,350,196 CODE SAMPLE 1)."""
        insn = decode(self._readable(function), function, self.guest.arch)
        text = f"{insn.mnemonic} {insn.op_str}".strip()
        if not text.startswith(ENTRY_FORMS[self.guest.arch]):
            raise InstrumenterError(f"{function:#x} starts with `{text}`, not a frame-building "
                                    "push of the frame pointer or enter")
        return self.place(function, hook)

    def place_returns(self, function: int, hook, *, size: int | None = None) -> list[BareSite]:
        """One site per `ret` of the function at `function` (its size from the guest's
        symbols unless given)."""
        if size is None:
            symbol = self.guest.symbols.function_at(function) if self.guest.symbols else None
            if symbol is None or symbol.addr != function:
                raise InstrumenterError(f"{function:#x} is not the start of a sized function")
            size = symbol.size
        code = self.original_bytes(function, size)
        sites = return_sites(code, function, self.guest.arch, self.returns)
        if not sites:
            raise InstrumenterError(f"the function at {function:#x} has no ret instruction")
        return [self.place(s.address, hook) for s in sites]

    def remove_all(self) -> None:
        """Put the original bytes back; the traps are no longer claimed."""
        for address, site in self.sites.items():
            self.guest.write_code(address, site.original)
            self.guest.on_breakpoint.pop(address, None)
            self.guest.on_invalid_opcode.pop(address, None)
        self.sites.clear()

    # ---- the trap handler (FIG. 3) -----------------------------------------------------------
    def _on_trap(self, site: BareSite, frame) -> bool:
        for hook in site.hooks:                      # step 302: the tracing framework first
            hook(site.address, frame)
        record = (site.address, site.insn, self.form) if self.record else None
        try:                                          # steps 304-306, then IRET (308)
            emulation = emulate_on_frame(site.run, frame, self.guest.cpu(), bp=self.bp,
                                         record=record)
        except StackFault as fault:
            raise InstrumenterError(f"emulating `{site.insn.mnemonic} {site.insn.op_str}` at "
                                    f"{site.address:#x}: the real instruction would fault "
                                    f"({fault}); kernel code would double-fault") from None
        if emulation is not None:
            self.emulations.append(emulation)
        return True

