"""`trapline explain --technique relocate`: US 6,957,421's function relocation (US 6,957,421) and
original-space return pointers (US 6,898,785), as done in a run.

samples/bin/ARCH/fib is probed at fib's entry and at fib+1 with the relocate strategy. At the
probe's 3rd hit the run is three frames deep in fib's copy; the listing shows then the original
function beside its instrumented copy (each original instruction, the piece of the copy that
runs it: call-out int3s, the relocated instruction, retargeted branches), the relocation table
both ways, and the stack: every return address the recursion pushed is an ORIGINAL address
(the copy's calls push them), each with its breakpoint at that original address and the
thread's record that maps it back into the copy. Addresses are fixed (no randomization), so the
output is the same on every run.
"""

from instrumenter.insn.decode import decode
from instrumenter.probes.definitions import Probe
from instrumenter.probes.records import Buffers
from instrumenter.tracing.session import Session

from .guest import spawn_fib
from ..probespec import parse_probe_spec

SHOW_AT_HIT = 3


def explain_relocate(arch: str = "x86_64", n: int = 5) -> str:
    lines, _ = _relocate(arch, n)
    return "\n".join(lines) + "\n"


def relocate_document(arch: str = "x86_64") -> dict:
    """The lines as a document (document.py), with the run's figures as facts."""
    from .document import from_lines
    lines, facts = _relocate(arch, 5)
    return from_lines("relocate", arch, lines, **facts)


def _relocate(arch: str, n: int) -> tuple[list[str], dict]:
    kernel, proc, stdout = spawn_fib(arch, n)
    shown: list[str] = []

    def action(context):
        if entry.hits == SHOW_AT_HIT:
            shown.extend(_snapshot(kernel, session, context.thread))
    entry = Probe(parse_probe_spec("uprobe:fib:fib"), nargs=1, action=action)
    inside = Probe(parse_probe_spec("uprobe:fib:fib+1"))
    session = Session(kernel, [entry, inside], buffers=Buffers(drain=lambda r: None),
                      strategy="relocate")
    session.attach(proc)
    status = kernel.run(proc)
    head = (f"=== {arch}: samples/bin/{arch}/fib {n}, probes uprobe:fib:fib and uprobe:fib:fib+1 "
            f"(relocate strategy), shown at the entry probe's {SHOW_AT_HIT}rd hit ===")
    tail = (f"run: exit status {status >> 8}, output {stdout.data.decode().strip()!r}; hits "
            f"{entry.hits} and {inside.hits} (fib is called {entry.hits} times)")
    facts = {"exit_status": status >> 8, "output": stdout.data.decode().strip(),
             "hits": {entry.spec.text: entry.hits, inside.spec.text: inside.hits}}
    return [head, *shown, tail], facts


def _snapshot(kernel, session, thread) -> list[str]:
    debug = kernel.debug
    process = thread.process
    strategy = session.strategies["relocate"]
    arch = debug.arch(process).name
    fc = next(f.code for f in strategy.functions.values() if f.code.name == "fib")
    copy = strategy.relocations[process.space.serial].current[fc.start]
    code = debug.read_memory(process, copy.address, len(copy.code))
    out = [f"1. fib [{fc.start:#x}, {fc.end:#x}) relocated to {copy.address:#x}-{copy.end:#x} "
           "(an XOL area, [uprobes]); breakpoints in the original (door patches, shown "
           "unpatched by reads): "
           + ", ".join(f"{a:#x}" for a in [fc.start] + [c.next_address for c in fc.calls]),
           "   original                                   | copy"]
    for insn in fc.insns:
        piece = copy.by_original[insn.address]
        left = f"   {insn.address:#x}: {insn.mnemonic} {insn.op_str}".ljust(47)[:47]
        lines = _disassemble(code, copy.address, piece.start, piece.end, arch, copy)
        out.append(f"{left}| {lines[0]}")
        out += [f"{'':47}| {line}" for line in lines[1:]]
    out.append("   continuations (a return not made from the copy goes on in original code):")
    for original, stub in sorted(copy.stubs.items()):
        for line in _disassemble(code, copy.address, stub.start, stub.end, arch, copy):
            out.append(f"   for {original:#x}: {line}")
    out.append("2. the relocation table, both ways (relocate/table.py):")
    for insn in fc.insns[:4]:
        at = strategy.relocated_of(process, insn.address)
        out.append(f"   relocated_of({insn.address:#x}) = {at:#x};  original_of({at:#x}) = "
                   f"{_pair(strategy.original_of(process, at))}")
    pc = debug.read_register(thread, "rip" if arch == "x86_64" else "eip")
    out.append(f"   the thread's PC {pc:#x} is in the copy: original_of -> "
               f"{_pair(strategy.original_of(process, pc))}")
    out.append("3. original-space return pointers (relocate/returns.py): the stack holds")
    records = strategy.returns.records.get((process.space.serial, thread.tid), [])
    word = 8 if arch == "x86_64" else 4
    for sp, original in reversed(records):
        slot = sp - word
        value = int.from_bytes(debug.read_memory(process, slot, word), "little")
        out.append(f"   [{slot:#x}] = {value:#x} <{debug.symbolize(process, value)}> (original): "
                   f"its int3 sends this thread back to {copy.return_point(original):#x} in the "
                   "copy")
    return out


def _pair(location) -> str:
    original, exact = location
    return f"({original:#x}, {'exact' if exact else 'not exact'})"


def _disassemble(code: bytes, base: int, start: int, end: int, arch: str, copy) -> list[str]:
    lines, at = [], start
    while at < end:
        insn = decode(code[at - base:], at, arch)
        note = {"probe": "  ; call-out: the probes' Python actions",
                "call": "  ; the call is recorded for its return point"}.get(
                    copy.callouts.get(at, ("", 0))[0], "")
        target = insn.branch_target
        if target is not None and copy.address <= target < copy.end and not note:
            note = "  ; retargeted into the copy"
        elif target is not None and not note:
            note = "  ; to original code"
        lines.append(f"{at:#x}: {insn.mnemonic} {insn.op_str}".rstrip() + note)
        at += insn.length
    return lines or [""]
