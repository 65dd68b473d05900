"""The jump strategy: a `jmp rel32` to the trampoline instead of an int3 — no trap per hit.

As Linux's optimized kprobes (arch/x86/kernel/kprobes/opt.c), Dyninst and E9Patch do it: the
5-byte jump overwrites every instruction that starts in those 5 bytes, so all of them are
relocated into the trampoline, and the site qualifies only when nothing can ever reach the
bytes after the first one (`qualify`):
  * each covered instruction is relocatable (policy.classify) and, except the last, falls
    through — code after a jmp/ret is reached only by jumps, which would land in the patch;
  * the covered bytes lie inside the function that contains the site (its symbol says where
    it ends; beyond it another function's entry may follow);
  * no instruction of the function refers into the patched bytes (policy.
    patched_range_conflict: a branch into them, a RIP-relative read of them, a call whose
    return address lies in them), and the function has no indirect jump, whose targets
    (a jump table) cannot be known — kprobes' can_optimize() refuses those too;
  * no other probe lies under the patch, and no thread's PC lies inside it right now.
Trampoline: [parts] then the relocated covered instructions, each at its own XOL address and
falling through to the next, then the jump back to site + covered length. A part is either
one int3 at a registered kernel breakpoint (Python actions: the handler calls the hooks and
the thread goes on at the next byte — one trap per hit, as the int3 strategy, but the site
itself is no longer a trap), a native action (instrumenter/strategies/native.py: no trap at all)
or a user handler's save/call/restore; native and handler parts are laid out by the same code
as the int3 trampoline's (instrumenter/strategies/page_layout.py).
A probe added later to the same site gets a new part in front, and the site's jump is
re-pointed at it. The tail of the covered bytes after the jump is int3: nothing executes it.
"""
import struct
from dataclasses import dataclass, field

from kernel_model.debug import PROT_EXEC

from ..insn.decode import Insn, decode
from ..insn.emit import REL_JUMP_LEN, rel32
from ..errors import InstrumenterError
from .base import ProbeStrategy
from .native import NativeData, new_slot, part_room, status_flags_dead
from .native_collector import NativeCollector
from .page_layout import SCRATCH_SIZE, HandlerCall, fault_namer, lay_out, slot_size
from .handlers.user import check_handler_of, handler_of
from .placement import image_at, patch_site, validate_site
from ..insn.policy import InsnClass, classify, patched_range_conflict
from ..insn.relocate import relocate

INT3 = b"\xcc"
MAX_PATCH = 4 + 15        # the longest jump patch: 4 one-byte instructions and a 15-byte one
BODY_SLOT = 256           # relocated covered instructions (at most 5) and the jump back
PART_SLOT = 160           # one hook part and its jump onward


@dataclass
class FunctionCode:
    """A function's instructions decoded once (unpatched bytes), and every address its
    instructions refer to — what the per-site checks look up instead of re-decoding."""
    insns: list[Insn]
    index: dict[int, int]                   # instruction address -> position in insns
    refs: dict[int, list[Insn]]             # branch/RIP/return-address target -> who refers
    indirect_jump: Insn | None


def analyse(code: bytes, function_start: int, arch: str) -> FunctionCode:
    insns, offset = [], 0
    while offset < len(code):
        insn = decode(code[offset:], function_start + offset, arch)
        insns.append(insn)
        offset += insn.length
    refs: dict[int, list[Insn]] = {}
    indirect = None
    for insn in insns:
        targets = (insn.rip_target, insn.branch_target,
                   insn.next_address if "call" in insn.groups else None)
        for target in targets:
            if target is not None:
                refs.setdefault(target, []).append(insn)
        if indirect is None and classify(insn).cls is InsnClass.JMP_INDIRECT:
            indirect = insn
    return FunctionCode(insns, {i.address: n for n, i in enumerate(insns)}, refs, indirect)


def qualify(code: bytes, function_start: int, function_name: str, address: int,
            arch: str) -> list[Insn]:
    """The instructions a 5-byte jump at `address` would cover, or InstrumenterError saying
    why the site does not qualify. `code` is the whole function, unpatched."""
    return qualify_in(analyse(code, function_start, arch), function_name, address)


def qualify_in(fc: FunctionCode, function_name: str, address: int) -> list[Insn]:
    if address not in fc.index:
        raise InstrumenterError(f"{address:#x} is not an instruction boundary in {function_name}")
    covered, size = [], 0
    for insn in fc.insns[fc.index[address]:]:
        if size >= REL_JUMP_LEN:
            break
        covered.append(insn)
        size += insn.length
    if size < REL_JUMP_LEN:
        raise InstrumenterError(f"{address:#x}: {function_name} ends {size} bytes after it; "
                                f"a {REL_JUMP_LEN}-byte jump does not fit")
    end = address + size
    for insn in covered:
        c = classify(insn)
        if c.cls is InsnClass.REFUSED:
            raise InstrumenterError(f"{insn} under the jump cannot be relocated: {c.reason}")
        if insn is not covered[-1] and insn.base_mnemonic in ("jmp", "ret"):
            raise InstrumenterError(f"{insn} under the jump does not fall through: the bytes "
                                    "after it are reached only by jumps")
    if fc.indirect_jump is not None:
        raise InstrumenterError(f"{fc.indirect_jump} in {function_name}: an indirect jump (jump "
                                "table?) might land inside the patched bytes")
    for target in range(address, end):
        for insn in fc.refs.get(target, ()):
            conflict = patched_range_conflict(insn, address, end)
            if conflict is not None:
                raise InstrumenterError(f"{conflict} ({address:#x}..{end:#x})")
    return covered


def relocate_covered(covered: list[Insn], at: int, arch: str) -> bytes:
    """The covered instructions relocated one after another from `at`: each piece falls
    through into the next (its jump back to the ORIGINAL next instruction, which is now
    patched, is dropped or re-aimed), the last one jumps back to the original code."""
    code = bytearray()
    for i, insn in enumerate(covered):
        piece = relocate(insn, at + len(code), arch)
        raw = bytearray(piece.code)
        last = i == len(covered) - 1
        if not last:
            tail = [e for e in piece.exits if e.kind == "fallthrough"]
            final = piece.address + len(raw) - REL_JUMP_LEN
            if any(e.address == final for e in tail) and raw[-REL_JUMP_LEN] == 0xE9:
                del raw[-REL_JUMP_LEN:]             # the next piece starts right here
            next_piece = piece.address + len(raw)
            for exit_ in tail:
                if exit_.address != final:
                    _aim_jump(raw, exit_.address - piece.address, next_piece, exit_.address, arch)
        code += raw
    return bytes(code)


def _aim_jump(raw: bytearray, offset: int, target: int, at: int, arch: str) -> None:
    if raw[offset] != 0xE9:
        raise InstrumenterError(f"relocated fall-through at {at:#x} is not a rel32 jump")
    raw[offset:offset + REL_JUMP_LEN] = jump_rel32(at, target, arch)


def jump_rel32(at: int, target: int, arch: str) -> bytes:
    """jmp rel32 at `at` to `target` (the XOL area is within reach: XolArea.reaches)."""
    rel = rel32(at + REL_JUMP_LEN, target, arch)
    if rel is None:
        raise InstrumenterError(f"{target:#x} is out of rel32 reach of {at:#x}")
    return b"\xe9" + struct.pack("<i", rel)


@dataclass
class JumpSite:
    address: int
    end: int
    body: int                                   # relocated covered instructions
    entry: int                                  # where the site's jump goes (first part)
    flags_dead: bool = False                    # status flags overwritten before any read
    hooks: list = field(default_factory=list)   # Python hooks(thread, address)
    python_part: int | None = None              # the int3 part's address, once there is one
    placed: list = field(default_factory=list)  # (hook, owner) of every probe at the site
    handler_pages: list = field(default_factory=list)   # page_layout Pages calling user handlers


class JumpProbes(ProbeStrategy):
    # sites: (space.serial, address) -> JumpSite; parts: (space.serial, int3 part) -> JumpSite;
    # data: space.serial -> NativeData; expected: space.serial -> address -> probe kinds;
    # owners: space.serial -> (space, the process it belongs to): whose counts the space holds.
    tables = ("sites", "parts", "data", "expected", "owners")
    runs_user_handlers = True           # a handler part per probe (page_layout.py)

    def __init__(self, session):
        super().__init__(session)
        self.trampolines = session.trampolines     # shares its XOL pages
        self.natives = NativeCollector(session)
        self.functions: dict[tuple[str, int], tuple[object, FunctionCode]] = {}

    def expect(self, process, placements) -> None:
        """Addresses (with probe kinds) about to be probed in this space: a jump must not
        cover another probe's address."""
        planned = self.expected.setdefault(process.space.serial, {})
        for kind, address in placements:
            planned.setdefault(address, set()).add(kind)

    # ---- placing -------------------------------------------------------------------------
    def place(self, process, address: int, hook, owner: str) -> JumpSite:
        check_handler_of(hook, self.debug.arch(process).name)
        key = (process.space.serial, address)
        site = self.sites.get(key) or self._new_site(process, address, owner)
        self._add_hook(process, site, hook, owner)
        return site

    def check(self, process, address: int):
        """place's refusals for a new site, without patching: (covered instructions, the
        function's code)."""
        image = image_at(process, address)
        function = image.symbols.function_at(address) if image is not None else None
        vma = self.debug.area_at(process, address)
        if function is None or vma is None or not vma.perms & PROT_EXEC:
            validate_site(process, address)   # its one-line errors
        if function is None:
            raise InstrumenterError(f"{address:#x}: no function symbol, so no way to prove that "
                                    "no branch lands inside the patched bytes")
        fc = self._function_code(process, image, function)
        if address not in fc.index:
            validate_site(process, address)   # "not an instruction boundary"
        covered = qualify_in(fc, function.name, address)
        end = covered[-1].next_address
        self._check_no_other_probe(process, address, end)
        self._check_threads(process, address, end)
        return covered, fc

    def _new_site(self, process, address: int, owner: str) -> JumpSite:
        arch = self.debug.arch(process).name
        covered, fc = self.check(process, address)
        end = covered[-1].next_address
        xol = self.trampolines.xol_for(process, near=address)
        if not xol.reaches(address):
            raise InstrumenterError(f"{address:#x}: no XOL page within ±2 GiB for the jump")
        body = xol.allocate(BODY_SLOT)
        code = relocate_covered(covered, body, arch)
        if len(code) > BODY_SLOT:
            raise InstrumenterError(f"{address:#x}: relocated code of {len(code)} bytes")
        xol.write(body, code)
        site = self.sites[(process.space.serial, address)] = JumpSite(
            address, end, body, body, flags_dead=status_flags_dead(fc.insns[fc.index[address]:]))
        patch_site(self.debug, process, address, self._patch(site, arch), owner)
        self.owners.setdefault(process.space.serial, (process.space, process))
        return site

    def _check_no_other_probe(self, process, start: int, end: int) -> None:
        for other in self.debug.patches_overlapping(process, start, end - start):
            raise InstrumenterError(f"{start:#x}: the patch at {other.address:#x} "
                                    f"({other.owners[0]}) lies under the jump's bytes")
        planned = self.expected.get(process.space.serial, {})
        for address in range(start + 1, end):
            if address in planned:
                raise InstrumenterError(f"{start:#x}: another probe at {address:#x} lies under "
                                        "the jump's bytes")

    def _function_code(self, process, image, function) -> FunctionCode:
        """Decoded once per function of an image (its unpatched bytes never change)."""
        # Keyed by path; the image kept in the entry is what makes it valid (another file at
        # the same path, or a new image of it, decodes again).
        key = (image.path, function.addr)
        cached = self.functions.get(key)
        if cached is None or cached[0] is not image:
            code = self.debug.read_memory(process, function.addr, function.size)
            cached = self.functions[key] = (image, analyse(code, function.addr,
                                                                   self.debug.arch(process).name))
        return cached[1]

    def _check_threads(self, process, start: int, end: int) -> None:
        """A thread stopped strictly inside the covered bytes would resume in the middle of
        the jump. Threads of this process only: another process sharing the space through
        clone(CLONE_VM) without CLONE_THREAD is not visible here (documented limitation);
        saved IPs in signal frames on guest stacks are not inspected either."""
        pc_name = self.debug.arch(process).pc
        for thread in self.debug.live_threads(process):
            pc = self.debug.read_register(thread, pc_name)
            if start < pc < end:
                raise InstrumenterError(f"{start:#x}: tid {thread.tid} is stopped at {pc:#x}, "
                                        "inside the bytes the jump would replace")

    def remove(self, process, address: int, hook, owner: str) -> None:
        """Take one probe off a site: a Python hook leaves the int3 part's list; the last
        owner's leaving restores the original bytes (the parts stay in their XOL slots: a
        thread may still run through one). A native part is emitted code in the chain of
        parts: it goes only with the whole site."""
        key = (process.space.serial, address)
        site = self.sites.get(key)
        if site is None or (hook, owner) not in site.placed:
            raise InstrumenterError(f"no probe {owner} at {address:#x}")
        others = [pair for pair in site.placed if pair != (hook, owner)]
        if getattr(hook, "native", None) is not None and others:
            raise InstrumenterError(f"{owner} at {address:#x}: a native action stays in the "
                                    "jump's chain of parts until every probe of the site goes")
        site.placed.remove((hook, owner))
        if hook in site.hooks:
            site.hooks.remove(hook)
        if any(o == owner for _, o in site.placed) or not self.debug.unpatch(process, address, owner):
            return
        del self.sites[key]
        if site.python_part is not None:
            self.parts.pop((process.space.serial, site.python_part), None)
            self.debug.unregister_breakpoint(process.space, site.python_part)

    def _add_hook(self, process, site: JumpSite, hook, owner: str) -> None:
        site.placed.append((hook, owner))
        handler = handler_of(hook)
        if handler is not None:          # placed first: the hook's own part runs before it
            self._add_handler_part(process, site, handler, owner)
        native = getattr(hook, "native", None)
        if native is None and site.python_part is not None:
            site.hooks.append(hook)
            self._add_owner(process, site, owner)
            return
        xol = self.trampolines.xol_for(process, near=site.address)
        arch = self.debug.arch(process).name
        part = xol.allocate(PART_SLOT if native is None else part_room(native))
        if native is None:
            code = INT3 + jump_rel32(part + 1, site.entry, arch)
            site.hooks.append(hook)
            site.python_part = part
            self.parts[(process.space.serial, part)] = site
            self.debug.register_breakpoint(process.space, part, self._on_hit)
            self._set_redirect(process.space, site, part)
        else:
            slot = new_slot(self._data_for(process, site.address), hook, site.address,
                            self.debug.arch(process).word,
                            self.debug.symbolize(process, site.address))
            page = lay_out(part, arch, probe_address=site.address, natives=[(slot, owner)],
                           onward=site.entry, flags_live=not site.flags_dead)
            code = bytes(page.code)
            self.natives.add(process, slot)
            self.natives.arm(process, page, [(slot, owner)])
        xol.write(part, code)
        site.entry = part
        self._add_owner(process, site, owner)

    def _add_handler_part(self, process, site: JumpSite, handler, owner: str) -> None:
        """Save_Registers, Call_User_BreakpointHandler, Restore_Registers and the handler's copy
        (instrumenter/strategies/page_layout.py, as in the int3 trampoline), then a jump on to
        the parts before it."""
        arch = self.debug.arch(process).name
        handler.check_arch(arch)
        scratch = self.data_for(process, site.address).allocate(SCRATCH_SIZE + handler.data_size(arch))
        call = HandlerCall(handler, owner, scratch, scratch + SCRATCH_SIZE)
        xol = self.trampolines.xol_for(process, near=site.address)
        part = xol.allocate(slot_size(arch, handlers=[call]))
        page = lay_out(part, arch, probe_address=site.address, handlers=[call], onward=site.entry)
        xol.write(part, bytes(page.code))
        for address, data in page.data:
            self.debug.write_memory(process, address, data)
        self.debug.register_tool_code(process.space, part, page.here, fault_namer(page))
        site.handler_pages.append(page)
        site.entry = part
        self._add_owner(process, site, owner)

    def _add_owner(self, process, site: JumpSite, owner: str) -> None:
        """Another owner of the site: the jump now goes to the newest part."""
        self.debug.repatch(process, site.address, self._patch(site, self.debug.arch(process).name),
                           owner)

    @staticmethod
    def _patch(site: JumpSite, arch: str) -> bytes:
        jump = jump_rel32(site.address, site.entry, arch)
        return jump + INT3 * (site.end - site.address - REL_JUMP_LEN)

    def data_for(self, process, near: int) -> NativeData:
        """A space's native data pages, shared with the trampoline strategy (its in-page
        actions and handlers keep their counters and data there): collected at exec and exit,
        copied at fork and forgotten here, whichever strategy placed them."""
        self.owners.setdefault(process.space.serial, (process.space, process))
        return self._data_for(process, near)

    def _data_for(self, process, near: int) -> NativeData:
        data = self.data.get(process.space.serial)
        if data is None:
            data = self.data[process.space.serial] = NativeData(self.debug, process, near)
        return data

    # ---- hits ----------------------------------------------------------------------------
    def _on_hit(self, frame, thread) -> bool:
        """The int3 part trapped: run the Python hooks; the thread goes on at the next byte
        of the trampoline, where frame.ip already points (#BP is a trap: SDM Vol. 3A, 6.5)."""
        site = self.parts[(thread.process.space.serial, frame.ip - 1)]
        for hook in site.hooks:
            hook(thread, site.address)
        return True

    def _set_redirect(self, space, site: JumpSite, part: int) -> None:
        """_on_hit leaves the saved IP as it is (the byte after the part's int3): the kernel
        may take these int3s by a breakpoint redirect (kernel_model/debug/
        register_breakpoint_redirect), while _on_hit is still its handler for the part."""
        def redirect(thread):
            for hook in site.hooks:
                hook(thread, site.address)
            return part + 1
        self.debug.register_breakpoint_redirect(space, part, redirect)

    # ---- process events ------------------------------------------------------------------
    def fork(self, parent, child) -> None:
        """The child's memory is a copy (patches, trampolines, native data): same sites."""
        if parent.space is child.space:
            return
        for _, site in self.sites.fork(parent.space, child.space):
            for page in site.handler_pages:
                self.debug.register_tool_code(child.space, page.address, page.here,
                                              fault_namer(page))
        for (_, part), site in self.parts.fork(parent.space, child.space):
            self._set_redirect(child.space, site, part)
        self.data.fork(parent.space, child.space, lambda data: data.forked(child))
        self.expected.fork(parent.space, child.space,
                           lambda planned: {a: set(k) for a, k in planned.items()})
        self.owners[child.space.serial] = (child.space, child)
        self.natives.fork(parent, child)

    def forget(self, space) -> None:
        """The space is released (kernel_model/debug/ space_released) or a detached child's
        copy cleaned: collect what it counted, then drop its entries."""
        self.natives.forget_space(space)
        super().forget(space)

    def forget_process(self, process, *, exited: bool) -> None:
        """exec (the old space is gone) or exit: collect what the process's old spaces
        counted, then drop every table entry keyed by them."""
        for space, owner in list(self.owners.values()):
            if owner is process and (exited or space is not process.space):
                self.forget(space)

