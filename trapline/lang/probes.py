"""Where the consumers' attach points meet the guest: uprobes and uretprobes placed by the
instrumenter's tracing session (its strategies, its children policy), system-call tracepoints
and process events from the door (kernel_model/debug/), timed probes on its instruction alarms.

One instrumenter probe per function site, shared by every block of every consumer that names
it (its action hands the hit to each); a wildcard or a library is expanded when the object is
mapped (Session.providers), so `uprobe:libc.so.6:str*` reaches the libc that ld.so loads.
"""
import fnmatch
import os

from instrumenter.probes.definitions import Probe, ProbeSpec

from instrumenter.probes.context import argument_fetcher

from .hit import READER_WORDS, Hit
from .native import add_native_counts, go_native, go_native_arguments, go_native_guarded, may_exit
from .native_printf import go_native_printf
from .native_table import go_native_table

UPROBE_KINDS = ("uprobe", "uretprobe")


def binary_matches(binary: str, path: bytes) -> bool:
    """BIN names the object at `path`: the same path, the same file (a symlink such as /bin
    into /usr/bin), or the same file name (libc.so.6)."""
    text = path.decode(errors="replace")
    if binary == text or os.path.basename(binary) == os.path.basename(text):
        return True
    try:
        return os.path.realpath(binary) == os.path.realpath(text)
    except OSError:
        return False


class UserProbes:
    """The uprobe and uretprobe attach points of every consumer, as a session provider."""

    def __init__(self, debug, records=None):
        self.debug = debug
        self.records = records                 # native.ArgumentRecords: the session's buffers
        self.wanted: list[tuple] = []          # (attach, consumer, block)
        self.by_site: dict[tuple, Probe] = {}  # (kind, path, function, offset, address) -> probe
        self.handlers: dict[int, list] = {}    # id(probe) -> [(consumer, block, attach text)]
        self.matched: set[str] = set()         # attach texts that found a site
        self.expanded: set[tuple] = set()      # (id(block), attach text, path) looked at
        self.mapped_paths: set[bytes] = set()  # every object the run mapped
        self.natives: list[Probe] = []         # probes counting in the guest (native.py)

    def want(self, attach, consumer, block) -> None:
        self.wanted.append((attach, consumer, block))

    def __call__(self, process, mapped) -> list[Probe]:
        """Session provider: the new probes for object `mapped` (each site once per run)."""
        new = []
        self.mapped_paths.add(mapped.path)
        for attach, consumer, block in self.wanted:
            seen = (id(block), attach.text, mapped.path)
            if seen in self.expanded or mapped.image is None \
                    or not binary_matches(attach.binary, mapped.path):
                continue
            self.expanded.add(seen)
            for function, offset, address in self._sites(attach, mapped.image):
                probe = self._probe(attach, mapped.path, function, offset, address, new)
                self.handlers[id(probe)].append((consumer, block, function))
                self.matched.add(attach.text)
        for probe in new:
            handlers = self.handlers[id(probe)]
            if go_native(probe, handlers) or go_native_guarded(probe, handlers):
                self.natives.append(probe)
            elif self.records is not None and go_native_table(probe, handlers, may_exit):
                self.records.route(probe, handlers, handlers[0][2], table=True)
            elif self.records is not None and not self.records.printers \
                    and go_native_printf(probe, handlers, may_exit):
                self.records.route(probe, handlers, handlers[0][2], printing=True)
            elif self.records is not None and go_native_arguments(probe, handlers):
                self.records.route(probe, handlers, handlers[0][2])
        return new

    def guarded(self) -> list[str]:
        """The probes whose predicate runs in the guest (a native guard, guards.py)."""
        return sorted(probe.spec.text for probe in self.by_site.values()
                      if getattr(probe.native, "guard", None) is not None)

    def collected(self) -> None:
        """The session collected the guests' native counts: hand them to the maps."""
        for probe in self.natives:
            add_native_counts(probe, self.handlers[id(probe)])

    @staticmethod
    def _sites(attach, image) -> list[tuple]:
        if attach.address is not None:
            return [("", 0, attach.address)]
        if not attach.wildcard:
            found = image.symbols.lookup(attach.function)
            return [(attach.function, attach.offset, None)] if found is not None \
                and found.kind in ("func", "ifunc") else []
        sites, addresses = [], set()
        for symbol in image.symbols.functions():
            if fnmatch.fnmatchcase(symbol.name, attach.function) and symbol.addr not in addresses:
                addresses.add(symbol.addr)          # one probe a function, not one per alias
                sites.append((symbol.name, 0, None))
        return sorted(sites)

    def _probe(self, attach, path: bytes, function: str, offset: int, address, new: list) -> Probe:
        key = (attach.kind, path, function, offset, address)
        probe = self.by_site.get(key)
        if probe is not None:
            return probe
        where = f"{address:#x}" if address is not None else function + (f"+{offset}" if offset else "")
        text = f"{attach.kind}:{path.decode(errors='replace')}:{where}"
        spec = ProbeSpec(text, attach.kind, binary=path.decode(errors="replace"),
                         function=function or None, offset=offset, address=address)
        probe = Probe(spec, nargs=0)
        handlers = self.handlers[id(probe)] = []
        debug = self.debug
        bound = [None, None]            # the door's view of a space (one per space), its reader

        def action(context):
            cpu = debug.cpu(context.process)
            if bound[0] is not cpu:
                bound[:] = cpu, argument_fetcher(cpu, READER_WORDS)
            hit = Hit(debug, context.thread, context.address, text, function,
                      retval=context.retval, context=context, reader=bound[1])
            for consumer, block, _ in handlers:
                consumer.fire(block, hit)
        probe.action = action
        self.by_site[key] = probe
        new.append(probe)
        return probe

    def unmatched(self) -> list[str]:
        """Why each attach point that found no site found none, as bpftrace reports an attach
        failure: no object named BIN was mapped (a library never loaded), or none of those
        has the function."""
        lines = {}
        for attach, _, _ in self.wanted:
            if attach.text in self.matched:
                continue
            objects = sorted(p.decode(errors="replace") for p in self.mapped_paths
                             if binary_matches(attach.binary, p))
            lines[attach.text] = (f"{attach.text}: no function matched in {', '.join(objects)}"
                                  if objects else
                                  f"{attach.text}: no object named {attach.binary} was mapped in the run")
        return [lines[text] for text in sorted(lines)]


class SyscallTracepoints:
    """tracepoint:syscalls:sys_enter_NAME / sys_exit_NAME (and syscall:NAME, an entry): a
    watcher of the door's system-call events (DebugInterface.syscall_watchers)."""

    def __init__(self, debug):
        self.debug = debug
        self.entries: dict[str, list] = {}     # syscall name -> [(consumer, block, text)]
        self.exits: dict[str, list] = {}
        self.wanted: list[tuple] = []          # (attach, consumer, block)

    def want(self, attach, consumer, block) -> None:
        self.wanted.append((attach, consumer, block))

    def _handlers(self, table: dict, name: str, entry: bool) -> list:
        found = table.get(name)
        if found is None:
            found = table[name] = [
                (consumer, block, _tracepoint_text(attach, name))
                for attach, consumer, block in self.wanted
                if _is_entry(attach) == entry and _matches(attach, name)]
        return found

    def syscall_entry(self, thread, name: str, args) -> None:
        handlers = self._handlers(self.entries, name, True)
        if handlers:
            args = tuple(args)
            for consumer, block, text in handlers:
                consumer.fire(block, Hit(self.debug, thread, 0, text, name, syscall=name,
                                         syscall_args=args))

    def syscall_exit(self, thread, name: str, args, result: int) -> None:
        handlers = self._handlers(self.exits, name, False)
        if handlers:
            bits = self.debug.arch(thread.process).bits
            result &= (1 << bits) - 1
            signed = result - (1 << bits) if result >> (bits - 1) else result
            for consumer, block, text in handlers:
                consumer.fire(block, Hit(self.debug, thread, 0, text, name, retval=signed,
                                         syscall=name, syscall_args=tuple(args)))


def _is_entry(attach) -> bool:
    return attach.kind == "syscall" or attach.entry


def _matches(attach, name: str) -> bool:
    if attach.kind == "syscall":
        return attach.text.partition(":")[2] == name
    return attach.matches_syscall(name)


def _tracepoint_text(attach, name: str) -> str:
    if attach.kind == "syscall" or attach.raw:
        return attach.text
    return f"tracepoint:syscalls:sys_{'enter' if attach.entry else 'exit'}_{name}"
