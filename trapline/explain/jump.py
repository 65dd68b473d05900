"""`trapline explain --technique jump`: the 5-byte jump patch (instrumenter/strategies/jump.py, as
Linux's optimized kprobes: arch/x86/kernel/kprobes/opt.c), as placed in a run.

samples/bin/ARCH/fib 10 is probed with native counts (no trap per hit) at fib's entry and at
the first later site whose covered instructions relocation has to rewrite (a call: its copy
must push the ORIGINAL return address). Before anything is patched, the strategy's own check
is asked at every instruction of fib: where a jump fits and, where it does not, why (an
instruction after the site that does not fall through, a branch into the patched bytes, the
end of the function). Then the patch through the door (bytes before and after), the chain the
jump leads to (the native part, the covered instructions relocated, the jump back) with what
relocation changed in each, and the first hit followed instruction by instruction with code
breakpoints (steps.py), the guest's counter going up in its own data page. Addresses are fixed
(no randomization), so the output is the same on every run.
"""
import capstone

from instrumenter.insn.decode import decode
from instrumenter.insn.emit import REL_JUMP_LEN
from instrumenter.insn.relocate import relocate
from instrumenter.strategies.jump import analyse
from instrumenter.probes.definitions import Probe
from instrumenter.probes.records import Buffers
from instrumenter.tracing.session import Session

from . import document as d
from .guest import spawn_sample
from .steps import StepRecorder
from ..probespec import parse_probe_spec

N = 10
METHODS = {
    "copy": "copied unchanged: position-independent",
    "displacement": "RIP-relative displacement re-aimed: it still reads the same address",
    "scratch": "RIP-relative operand out of reach: read through a scratch register",
    "branch": "branch re-aimed: the same target, from the copy",
    "call": "call re-made: the ORIGINAL return address is pushed, then a jump to the callee",
}


def explain_jump(arch: str = "x86_64") -> dict:
    kernel, proc, stdout = spawn_sample(arch, "fib", [str(N)])
    debug = kernel.debug
    fib = proc.image.symbols.lookup("fib")
    session = Session(kernel, [], buffers=Buffers(), strategy="jump")
    jump = session.strategies["jump"]
    insns = _function_insns(debug, proc, fib, arch)
    verdicts = [(insn, jump.refusal(proc, insn.address)) for insn in insns]   # nothing placed yet
    second = _rewriting_site(verdicts, arch)
    offsets = [0, second.address - fib.addr]
    probes = [Probe(parse_probe_spec(f"uprobe:fib:fib+{off:#x}" if off else "uprobe:fib:fib"),
                    native="count") for off in offsets]
    session.probes.extend(probes)
    before = {a: debug.read_memory_raw(proc, a, 8) for a in (fib.addr, second.address)}
    session.attach(proc)
    sites = [jump.sites[(proc.space.serial, a)] for a in (fib.addr, second.address)]
    counter = _counter_of(debug, proc, sites[0].entry, arch)
    labels: dict[int, str] = {}
    sections = [_fits(verdicts, fib.addr)]
    for n, site in enumerate(sites):
        sections += _site_sections(debug, proc, site, before[site.address], arch, n, fib.addr,
                                   insns, labels)
    recorder = StepRecorder(debug, proc, fib.addr, _path(debug, proc, sites[0], arch),
                            sites[0].end, watch=lambda: _read_word(debug, proc, counter),
                            watch_name="counter",
                            where=lambda a: labels.get(a) or debug.symbolize(proc, a))
    status = kernel.run(proc)
    recorder.close()
    session.flush()
    sections.append(d.section(
        f"{len(sections) + 1}. the first hit, instruction by instruction (code breakpoints: "
        "nothing stops, nothing traps; 'counter' is the hit counter in the guest's data page "
        f"at {counter:#x})", recorder.items())
    )
    output = stdout.data.decode().strip()
    sections.append(d.section(None, [d.text(
        f"run: exit status {status >> 8}, output {output!r}; hits counted in the guest: "
        f"{probes[0].hits} at fib, {probes[1].hits} at fib+{offsets[1]:#x} (read from the data "
        "page when the process exited: no trap, no kernel entry per hit)")]))
    title = (f"{arch}: samples/bin/{arch}/fib {N}, probes uprobe:fib:fib and "
             f"uprobe:fib:fib+{offsets[1]:#x} with --native count (jump strategy)")
    return d.document("jump", arch, title, sections, exit_status=status >> 8, output=output,
                      hits={p.spec.text: p.hits for p in probes})


def _function_insns(debug, proc, symbol, arch):
    code = debug.read_memory(proc, symbol.addr, symbol.size)
    insns, offset = [], 0
    while offset < len(code):
        insn = decode(code[offset:], symbol.addr + offset, arch)
        insns.append(insn)
        offset += insn.length
    return insns


def _covered(insns, address):
    start = next(i for i, insn in enumerate(insns) if insn.address == address)
    out, size = [], 0
    for insn in insns[start:]:
        if size >= REL_JUMP_LEN:
            break
        out.append(insn)
        size += insn.length
    return out


def _rewriting_site(verdicts, arch):
    """The first accepted site clear of the entry's patch whose covered instructions
    relocation rewrites, a call first (its copy must push the ORIGINAL return address), else
    any rewritten one, so the listing shows what relocation does."""
    insns = [insn for insn, _ in verdicts]
    entry_end = _covered(insns, insns[0].address)[-1].next_address
    candidates = [insn for insn, refusal in verdicts[1:]
                  if refusal is None and insn.address > entry_end]
    for wanted in ("call", None):
        for insn in candidates:
            methods = {relocate(c, 0x1000, arch).method for c in _covered(insns, insn.address)}
            if (wanted in methods) if wanted else methods != {"copy"}:
                return insn
    return candidates[0]


def _fits(verdicts, start) -> dict:
    items = []
    for insn, refusal in verdicts:
        note = "a jump fits here" if refusal is None else f"refused: {refusal}"
        items.append(d.insn(insn.address, insn.raw, f"{insn.mnemonic} {insn.op_str}".strip(),
                            f"fib+{insn.address - start:#x}: {note}"))
    return d.section("1. where a 5-byte jump fits in fib: the strategy's check asked at every "
                     "instruction before anything is patched (JumpProbes.check)", items)


def _site_sections(debug, proc, site, before, arch, n, fib, insns, labels) -> list[dict]:
    length = site.end - site.address
    after = debug.read_memory_raw(proc, site.address, length)
    name = f"fib+{site.address - fib:#x}" if site.address != fib else "fib"
    covered = _covered(insns, site.address)
    head = [d.text(f"covers {len(covered)} instruction(s), {length} bytes: "
                   + "; ".join(f"`{c.mnemonic} {c.op_str}`".replace(" `", "`") for c in covered)),
            d.text("accepted: every covered instruction is relocatable and falls through but the "
                   "last, the bytes lie inside fib, no instruction of fib branches, reads or "
                   "returns into them, fib has no indirect jump, no other probe and no thread "
                   "lies under them"),
            d.text(_references(insns, site.address, site.end)),
            d.text("the status flags are written before anything reads them after the site "
                   "(status_flags_dead): the count needs no save" if site.flags_dead else
                   "the status flags are live after the site: the count saves and restores them"),
            d.patch(site.address, before[:length], after, f"jmp {site.entry:#x}" + (
                f", then {length - REL_JUMP_LEN} int3 that nothing runs"
                if length > REL_JUMP_LEN else ""))]
    part = _listing(debug, proc, site.entry, site.body, arch,
                    "native count: the action, run by the guest itself")
    body = _relocated(debug, proc, site, covered, arch)
    labels.update({i["address"]: f"native part of {name}" for i in part})
    labels.update({i["address"]: f"{name} relocated" for i in body})
    return [d.section(f"{2 + 2 * n}. {name}: the patch (through the door: kernel_model/"
                      "debug/patches.py)", head),
            d.section(f"{3 + 2 * n}. {name}: where the jump leads (an XOL page, [uprobes])",
                      part + body)]


def _references(insns, start: int, end: int) -> str:
    """Every address fib's instructions refer to (analyse(): branch targets, RIP-relative
    operands, the return addresses of calls), against the patched bytes."""
    refs = analyse(b"".join(i.raw for i in insns), insns[0].address, insns[0].arch).refs
    inside = sorted(t for t in refs if start < t < end)
    at_site = [f"`{i.mnemonic} {i.op_str}`" for i in refs.get(start, [])]
    listed = ", ".join(f"{t:#x}" for t in sorted(refs))
    said = (f"fib's instructions refer to {len(refs)} addresses ({listed}); "
            + (f"inside {start + 1:#x}..{end - 1:#x}: {', '.join(f'{t:#x}' for t in inside)}"
               if inside else f"none inside {start + 1:#x}..{end - 1:#x}"))
    if at_site:
        said += f"; {', '.join(at_site)} reach the site itself: the jmp is there, as it should be"
    return said


def _listing(debug, proc, start, onward, arch, note) -> list[dict]:
    """Tool code from `start` to its jump to `onward`."""
    code = debug.read_memory_raw(proc, start, 256)
    items, at = [], start
    while at < start + len(code):
        insn = decode(code[at - start:], at, arch)
        target = insn.branch_target
        asm = f"{insn.mnemonic} {insn.op_str}".strip()
        if insn.base_mnemonic == "jmp" and target == onward:
            items.append(d.insn(at, insn.raw, asm, "on to the relocated instructions"))
            break
        items.append(d.insn(at, insn.raw, asm, note))
        at += insn.length
    return items


def _relocated(debug, proc, site, covered, arch) -> list[dict]:
    """The body: each covered instruction's piece, laid out as relocate_covered lays them out
    (a piece that falls through drops its jump back: the next piece follows it)."""
    items, at = [], site.body
    for i, insn in enumerate(covered):
        piece = relocate(insn, at, arch)
        size = piece.length
        last = i == len(covered) - 1
        if not last and piece.code[-REL_JUMP_LEN] == 0xE9 and any(
                e.kind == "fallthrough" and e.address == at + size - REL_JUMP_LEN for e in piece.exits):
            size -= REL_JUMP_LEN
        code = debug.read_memory_raw(proc, at, size)
        pos = at
        for k, one in enumerate(_disasm(code, at, arch)):
            asm = f"{one.mnemonic} {one.op_str}".strip()
            if k == 0:
                original = f"{insn.mnemonic} {insn.op_str}".strip()
                note = f"from {insn.address:#x} `{original}`: {METHODS.get(piece.method, piece.method)}"
            elif one.mnemonic == "jmp" and int(one.op_str, 16) == site.end:
                note = f"back to {site.end:#x}, the first instruction after the patched bytes"
            else:
                note = "(same piece)"
            items.append(d.insn(one.address, bytes(one.bytes), asm, note))
            pos = one.address + one.size
        at = pos
    return items


def _disasm(code, address, arch):
    cs = capstone.Cs(capstone.CS_ARCH_X86, capstone.CS_MODE_32 if arch == "i386" else capstone.CS_MODE_64)
    return list(cs.disasm(code, address))


def _path(debug, proc, site, arch) -> list[int]:
    """Every address a hit of `site` runs through: the chain of parts and the relocated body,
    following the jumps that stay in the tool's area, up to the jump back to site.end (a
    relocated call's jump to its callee leaves the area: the path ends there too)."""
    tool = debug.area_at(proc, site.entry)
    out, at = [], site.entry
    while len(out) < 256 and tool.start <= at < tool.end:
        insn = decode(debug.read_memory_raw(proc, at, 16), at, arch)
        out.append(at)
        target = insn.branch_target
        if insn.base_mnemonic == "jmp" and target is not None:
            if target == site.end:
                break
            at = target
        else:
            at = insn.next_address
    return out


def _counter_of(debug, proc, part, arch) -> int:
    """The hit counter the native part increments (its first instruction's memory operand)."""
    cs = capstone.Cs(capstone.CS_ARCH_X86, capstone.CS_MODE_32 if arch == "i386" else capstone.CS_MODE_64)
    cs.detail = True
    insn = next(cs.disasm(debug.read_memory_raw(proc, part, 16), part, 1))
    mem = next(op.mem for op in insn.operands if op.type == capstone.x86.X86_OP_MEM)
    return (insn.address + insn.size + mem.disp) if mem.base == capstone.x86.X86_REG_RIP \
        else mem.disp & 0xFFFFFFFF


def _read_word(debug, proc, address) -> int:
    return int.from_bytes(debug.read_memory_raw(proc, address, 8), "little")
