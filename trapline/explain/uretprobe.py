"""`trapline explain --technique uretprobe`: return probes (instrumenter/tracing/uretprobes.py, as
Linux's uretprobes: kernel/events/uprobes.c prepare_uretprobe, handle_trampoline), on
samples/bin/ARCH/tailcall 2: top calls mid, which tail-jumps to hot; jumper tail-jumps to
thrower, which longjmps back to main.

The return probes' two moments are watched from outside (their methods wrapped, nothing
changed): each entry, with the word in the return slot before and after (the real return address
saved on the thread's shadow stack, the slot given the landing: an int3 in the XOL page), and
each return through the landing (the frames reported, innermost first, the real return address
the thread resumes at). A tail-called function finds the landing in its slot already: its
pending return is chained to its caller's, and one return reports both. Frames abandoned by
longjmp stay on the shadow stack until a later entry or return passes below them, and are
dropped then. The same inputs give the same output on every run.
"""
import struct

from instrumenter.probes.definitions import Probe
from instrumenter.probes.records import Buffers
from instrumenter.tracing.session import Session

from . import document as d
from .guest import spawn_sample
from ..probespec import parse_probe_spec

ROUNDS = 2
FUNCTIONS = ("top", "mid", "hot", "jumper", "thrower")


def explain_uretprobe(arch: str = "x86_64") -> dict:
    kernel, proc, stdout = spawn_sample(arch, "tailcall", [str(ROUNDS)])
    debug = kernel.debug
    probes = [Probe(parse_probe_spec(f"uretprobe:tailcall:{name}"), nargs=0) for name in FUNCTIONS]
    records: list = []
    session = Session(kernel, probes, buffers=Buffers(drain=records.extend), strategy="trampoline")
    watcher = _Watcher(debug, session.returns)
    session.attach(proc)
    status = kernel.run(proc)
    session.flush()
    output = stdout.data.decode().strip()
    landing = watcher.landing
    returns = [r for r in records if r.kind == "return"]
    sections = [
        d.section("1. the probes", [
            d.text(f"uretprobe on {', '.join(FUNCTIONS)}: an entry hook on each (trampoline "
                   "strategy) that swaps the return address; the landing is one int3 at "
                   f"{landing:#x} in the XOL page, shared by every function of the process"),
            d.text("top calls mid; mid tail-jumps (jmp) to hot; jumper tail-jumps to thrower, "
                   "which longjmps back to main: neither returns")]),
        d.section("2. the timeline (the shadow stack after each event, innermost last)",
                  _first_round(watcher.events)),
        d.section(None, [
            d.text(f"run: exit status {status >> 8}, output {output!r}"),
            d.text(f"returns reported: {len(returns)} ("
                   + ", ".join(f"{n} {sum(1 for r in returns if r.probe == p.spec.text)}"
                               for n, p in zip(FUNCTIONS, probes)) + "); jumper and thrower "
                   "never return: longjmp abandoned their frames")]),
    ]
    title = (f"{arch}: samples/bin/{arch}/tailcall {ROUNDS}, probes "
             + " ".join(f"uretprobe:tailcall:{n}" for n in FUNCTIONS))
    return d.document("uretprobe", arch, title, sections, exit_status=status >> 8,
                      output=output, landing=landing,
                      returns={p.spec.text: sum(1 for r in returns if r.probe == p.spec.text)
                               for p in probes})


def _first_round(events: list[dict]) -> list[dict]:
    """Round 1, and round 2's first entry, which drops the frames longjmp abandoned."""
    drop = next((n for n, e in enumerate(events) if "dropped" in e["what"]), None)
    if drop is None:
        return events
    rest = len(events) - drop - 1
    return events[:drop + 1] + ([d.text(f"... {rest} more events: round {ROUNDS} goes as "
                                        "round 1 did")] if rest else [])


class _Watcher:
    """ReturnProbes.on_entry and its landing handler, wrapped (before any is placed)."""

    def __init__(self, debug, returns):
        self.debug, self.returns = debug, returns
        self.events: list[dict] = []
        self.landing = None                 # the space's landing (forgotten when it is released)
        on_entry, on_return = returns.on_entry, returns._on_return

        def entry(thread, probe, function, sp=None):
            before = list(returns.shadow.get(thread.tid, []))
            slot = sp if sp is not None else debug.cpu(thread.process).sp
            word_before = self._word(thread, slot)
            on_entry(thread, probe, function, sp)
            self.landing = returns.landings.get(thread.process.space.serial, self.landing)
            after = list(returns.shadow.get(thread.tid, []))
            self._entry_event(thread, probe, slot, word_before, before, after)

        def landed(frame, thread):
            before = list(returns.shadow.get(thread.tid, []))
            cpu = debug.cpu(thread.process)
            retval = cpu.register("eax" if cpu.arch.bits == 32 else "rax")
            claimed = on_return(frame, thread)
            after = list(returns.shadow.get(thread.tid, []))
            self._return_event(thread, frame.ip, retval, before, after)
            return claimed
        returns.on_entry, returns._on_return = entry, landed

    def _word(self, thread, slot: int) -> int:
        size = self.debug.arch(thread.process).word
        return struct.unpack("<I" if size == 4 else "<Q",
                             self.debug.read_memory(thread.process, slot, size))[0]

    def _name(self, thread, address: int) -> str:
        return self.debug.symbolize(thread.process, address)

    def _shadow(self, stack) -> str:
        return "[" + ", ".join(p.function_name + (" (chained)" if p.chained else "")
                               for p in stack) + "]"

    def _entry_event(self, thread, probe, slot, word_before, before, after) -> None:
        name = probe.spec.function
        dropped = [p for p in before if p not in after]
        new = after[-1] if len(after) > len(before) - len(dropped) else None
        if new is None:
            what = f"entry of {name}: nothing pushed"
        elif new.chained:
            what = (f"entry of {name}, tail-called: its return slot [{slot:#x}] holds the "
                    f"landing already; chained to {after[-2].function_name}'s pending return "
                    f"(real return {new.return_address:#x} <{self._name(thread, new.return_address)}>)")
        else:
            where = self._name(thread, word_before)
            what = (f"entry of {name}: return address {word_before:#x} <{where}>"
                    f" saved; slot [{slot:#x}] := landing {self._word(thread, slot):#x}")
            if "+" not in where:       # the return address starts the next symbol
                what += (" (the call is its caller's last instruction: the compiler knew "
                         f"{name} never returns)")
        if dropped:
            what += (f"; dropped {', '.join(p.function_name for p in dropped)}: abandoned "
                     "(longjmp), their slots at or below this one")
        self.events.append(d.event(self.debug.instructions_retired(thread.process), thread.tid,
                                   f"{what}; shadow {self._shadow(after)}"))

    def _return_event(self, thread, resume, retval, before, after) -> None:
        gone = before[len(after):]
        # unwind_chain: the frame returning and the chained ones above it; anything deeper
        # than the chain was abandoned by longjmp
        chain = [gone[0]] + [p for p in gone[1:] if p.chained and p.sp == gone[0].sp]
        abandoned = [p for p in gone if p not in chain]
        order = " (innermost first)" if len(chain) > 1 else ""
        what = (f"ret reached the landing: returns reported for "
                f"{', '.join(p.function_name for p in reversed(chain))}{order}, "
                f"value {retval:#x}; resumes at the real return address {resume:#x} "
                f"<{self._name(thread, resume)}>")
        if abandoned:
            what += f"; dropped {', '.join(p.function_name for p in abandoned)} (abandoned)"
        self.events.append(d.event(self.debug.instructions_retired(thread.process), thread.tid,
                                   f"{what}; shadow {self._shadow(after)}"))
