"""The consumer side of the tracing framework (US 7,350,196 FIG. 1): probes are enabled on the
processes of a kernel, hits produce records into per-process buffers.

It talks to the kernel only through its debug interface (kernel_model/debug/), as a real
tool talks to ptrace/uprobes: breakpoint handlers, memory reads/writes, XOL pages, process
events (fork copies the patches with the memory; exec brings a new image to instrument).
"""
from ..strategies import registry as strategies
from ..strategies.table import StrategyTable
from ..children.backpatch import forget_space_tables
from ..children.policies import make_policy
from ..probes.context import ProbeContext, argument_words
from .dynamic import DynamicProbes, Placement
from .entry_hit import _EntryHit
from ..errors import InstrumenterError
from .event_probes import EventProbes
from ..profiler.probe_source import ProfileProbes
from .ifunc import IfuncResolution, bound_implementations
from ..children.monitor import ProcessMonitor
from ..probes.definitions import SYSCALL, UPROBE, URETPROBE, Probe
from ..probes.records import Buffers
from .probe_address import _Program, _function_address, _no_function
from .uretprobes import ReturnProbes


class Session:
    def __init__(self, kernel, probes: list[Probe], *, buffers: Buffers | None = None,
                 strategy: str = "auto", on_choice=None, children: str = "follow",
                 backpatch: str = "lazy"):
        self.kernel = kernel
        self.debug = kernel.debug
        self.probes = probes
        self.buffers = buffers or Buffers()
        self.strategy = strategy
        self.on_choice = on_choice                 # called with (probe, address, strategy chosen)
        # Strategy name -> object with place(process, address, hook, owner) -> site, from the one
        # registry (instrumenter/strategies/registry.py), which also gives `auto` its order;
        # each built at its first use (strategies/table.py). A user's strategy
        # (`package.module:Class`, an entry point) is built beside ours, at once.
        self.strategies = StrategyTable(
            self, extra=(strategy,) if strategies.is_user_strategy(strategy) else ())
        self.auto_order = list(strategies.AUTO_ORDER)
        self.returns = ReturnProbes(self)
        self.detacher = None                        # detach.py's Detacher, on the first detach
        self._names: dict = {}                    # (id(image), address) -> (image, "func+0x12")
        self._syscall_names = (-1, frozenset())    # (len(probes), the calls they name)
        self._ifuncs: dict[tuple, IfuncResolution] = {}   # (object path, IFUNC name) -> resolution
        # provider(process, mapped) -> [Probe]: probes made for an object when it is mapped,
        # as bpftrace's `uprobe:lib:*` (every function: profiler/full.py)
        self.providers: list = []
        self.mapped_paths: set[bytes] = set()      # every object it was told of (unattached.py)
        self.debug.subscribe(self)
        if any(p.spec.kind == SYSCALL for p in probes):
            self.debug.syscall_watchers.append(self)
        self.dynamic = DynamicProbes(self)          # probes enabled and disabled while it runs
        self.events = EventProbes(self)             # proc: and signal: probes
        self.profiles = ProfileProbes(self)         # profile: probes (US 7,823,129's timer)
        # Subscribed last: at a fork event every strategy has copied its bookkeeping to the
        # child before the children policy decides what the child keeps (US 7,185,320).
        self.monitor = ProcessMonitor(self, make_policy(self, children, backpatch))
        for probe in probes:
            self.dynamic.schedule(probe)            # --enable-at / --disable-at

    @property
    def trampolines(self):
        """The trampoline strategy: the others (jump, relocate, uretprobes) share its XOL pages."""
        return self.strategies["trampoline"]

    @property
    def jumps(self):
        """The jump strategy (built by this look if it was not yet: the session asks before it
        places uprobes, which `auto` tries with a jump first)."""
        return self.strategies["jump"]

    # ---- probes enabled and disabled while the program runs (dynamic.py) --------------------
    def add_probe(self, probe: Probe) -> Probe:
        """Enable `probe` from now on in every traced process it applies to (from an action:
        at the next safe point). It may be removed again (`remove_probe`)."""
        probe.removable = True
        self.dynamic.add(probe)
        return probe

    def remove_probe(self, probe: Probe) -> None:
        """Disable `probe` at once and take it out of every process (InstrumenterError for a
        probe the session does not have, or one removed already)."""
        self.dynamic.remove(probe)

    # ---- detaching at any moment (detach.py, US 7,017,153) --------------------------
    def detach(self, *, at_once: bool = False, on_done=None):
        """Leave every traced process as if never probed, at the next safe point (`at_once`:
        the caller is at one): records stop, text restored, tool pages unmapped, PCs and
        stacks cleaned. The report (detach.py's DetachReport) fills in when it is done (then
        `on_done(report)`). detach.py, with the stack cleaner and its unwinder, is imported
        by the first detach: a trace that never detaches does without (issue 31)."""
        if self.detacher is None:
            from .detach import Detacher
            self.detacher = Detacher(self)
        return self.detacher.request(at_once=at_once, on_done=on_done)

    # ---- enabling --------------------------------------------------------------------------
    def attach(self, process) -> None:
        """Trace `process` and place every uprobe/uretprobe on an object it has mapped: the
        program, ld.so, libraries loaded so far (the others when they are mapped)."""
        self.monitor.trace(process)
        # Records carry virtual time: the process counts its instructions exactly from here
        # on (at start, and for the new image after exec: exec() comes back here).
        self.debug.count_instructions(process)
        objects = self.debug.images(process)
        if not objects and process.image is not None:       # a space without an image map
            objects = [_Program(process)]
        for mapped in objects:
            self._provide(process, mapped)
            self._instrument_object(process, mapped)

    def image_mapped(self, process, mapped) -> None:
        """A library's code was mapped (ld.so, dlopen): place the probes pending on it."""
        if self.monitor.is_traced(process):
            self._provide(process, mapped)
            self._instrument_object(process, mapped)

    def _provide(self, process, mapped) -> None:
        for provider in self.providers:
            self.probes.extend(provider(process, mapped))

    def instrument_probes(self, process, probes) -> None:
        """Place `probes` (enabled while the program runs) on every object `process` maps."""
        objects = self.debug.images(process)
        if not objects and process.image is not None:
            objects = [_Program(process)]
        for mapped in objects:
            self._instrument_object(process, mapped, probes)

    def _instrument_object(self, process, mapped, candidates=None) -> None:
        image = mapped.image
        self.mapped_paths.add(mapped.path)
        matching = [p for p in (self.probes if candidates is None else candidates)
                    if p.spec.kind in (UPROBE, URETPROBE) and p.spec.matches_binary(mapped.path)]
        probes = [p for p in matching if p.enabled or candidates is not None]
        for probe in matching:
            if probe not in probes and self._is_ifunc(image, probe):
                # not enabled yet: its resolver is watched all the same, since it runs once
                resolver = self.resolve_in(image, mapped, probe)
                self._ifunc_resolution(mapped, probe).hook(process, resolver)
        if not probes:
            return
        sites = [(probe, self.resolve_in(image, mapped, probe)) for probe in probes]
        # The jump strategy must know every address about to be probed before it places the
        # first jump (a jump may not cover another probe's address).
        self.jumps.expect(process, [(probe.spec.kind, address) for probe, address in sites
                                    if not self._is_ifunc(image, probe)])
        for probe, address in sites:
            if self._is_ifunc(image, probe):
                # Pending until the resolver says where the implementation is (ifunc.py).
                resolution = self._ifunc_resolution(mapped, probe)
                resolution.hook(process, address)
                if candidates is not None:              # enabled now: resolved already?
                    for implementation in bound_implementations(self.debug, process, mapped,
                                                                probe.spec.function, address):
                        resolution.remember(process, implementation)
                    resolution.enable(process, probe)
                self._say(probe, address, "pending on its IFUNC resolver")
            else:
                self.place_resolved(process, probe, address)

    def place_resolved(self, process, probe: Probe, address: int) -> None:
        """Place an entry or return probe at `address`, a function's first instruction."""
        self.jumps.expect(process, [(probe.spec.kind, address)])     # (an IFUNC's, found late)
        if probe.spec.kind == UPROBE:
            if probe.native:
                from ..strategies.native import NativeHit
                hook = NativeHit(self, probe)
            else:
                hook = _EntryHit(self, probe)
            self.place(process, address, hook, probe)
        elif hasattr(self.strategies.get(self.strategy), "place_returns"):
            self.strategies[self.strategy].place_returns(process, probe, address)
            _count_placement(probe, self.strategy)      # attached (unattached.py), and -c says how
            self._say(probe, address, f"returns ({self.strategy})")
        else:
            self.returns.place(process, probe, address)
            self._say(probe, address, "return address (uretprobe)")

    def _say(self, probe: Probe, address: int, how: str) -> None:
        """Tell -v where a probe went (auto's choices are told by `place`)."""
        if self.on_choice is not None:
            self.on_choice(probe, address, how)

    @staticmethod
    def _is_ifunc(image, probe: Probe) -> bool:
        if image is None or probe.spec.function is None or probe.spec.offset:
            return False
        symbol = image.symbols.lookup(probe.spec.function)
        return symbol is not None and symbol.kind == "ifunc"

    def _ifunc_resolution(self, mapped, probe: Probe) -> IfuncResolution:
        key = (mapped.path, probe.spec.function)
        resolution = self._ifuncs.get(key)
        if resolution is None:
            resolution = self._ifuncs[key] = IfuncResolution(self, probe)
        resolution.add(probe)
        return resolution

    def place(self, process, address: int, hook, probe: Probe):
        """Place `hook` at `address` with the session's strategy; `auto` tries every strategy
        of the registry, cheapest per hit first and singlestep last (`auto_order`), takes the
        first that accepts the site and says which it chose (-v, and the probe's
        `chosen`, which the -c listing shows)."""
        if self.dynamic.deferred:
            self.dynamic.reclaim()     # sound at any time once the sites are out (dynamic.py)
        removable = getattr(probe, "removable", False)
        if removable and self._placed_through_shared_site(process, address, probe):
            return None
        try:                # a handler that cannot run is the handler's fault, whatever the strategy
            if getattr(getattr(hook, "probe", None), "handler", None) is not None:
                from ..strategies.handlers.user import check_handler_of   # (object files, ELF)
                check_handler_of(hook, self.debug.arch(process).name)
        except InstrumenterError as bad:
            raise InstrumenterError(f"{probe.spec.text}: {bad}") from None
        if self.strategy != "auto":
            strategy = self.strategies.get(self.strategy)
            if strategy is None:
                raise InstrumenterError(f"unknown strategy {self.strategy!r} "
                                        f"(have: {', '.join(sorted(self.strategies))})")
            if removable and not hasattr(strategy, "remove"):
                raise InstrumenterError(f"{probe.spec.text}: --strategy {self.strategy} cannot "
                                        "take a probe out again (disable_at, remove_probe)")
            _check_handler(probe, self.strategy, strategy)
            site = self._place_with(strategy, process, address, hook, probe)
            self._placed(probe, process, address, hook, self.strategy)
            _count_placement(probe, self.strategy)
            return site
        reasons = []
        for name in self.auto_order:
            if removable and not hasattr(self.strategies[name], "remove"):
                reasons.append(f"{name}: cannot take a probe out again")
                continue
            try:
                _check_handler(probe, name, self.strategies[name])
                site = self.strategies[name].place(process, address, hook, probe.spec.text)
            except InstrumenterError as refused:
                reasons.append(f"{name}: {refused}")
                continue
            _count_placement(probe, name)
            if self.on_choice is not None:
                self.on_choice(probe, address, name)
            self._placed(probe, process, address, hook, name)
            return site
        causes = {reason.split(": ", 1)[1] for reason in reasons}
        if len(causes) == 1:             # the site itself (not a boundary, not mapped): once
            raise InstrumenterError(f"{probe.spec.text}: {causes.pop()}")
        raise InstrumenterError(f"{probe.spec.text}: no strategy can take {address:#x} ({'; '.join(reasons)})")

    def _place_with(self, strategy, process, address: int, hook, probe):
        """strategy.place; a user's strategy that raises anything but InstrumenterError (a
        refusal) is a StrategyError naming it: its bug, not trapline's."""
        if not strategies.is_user_strategy(self.strategy):
            return strategy.place(process, address, hook, probe.spec.text)
        try:
            return strategy.place(process, address, hook, probe.spec.text)
        except InstrumenterError:
            raise
        except Exception as e:          # noqa: BLE001 -- whatever the user's code raises
            from ..errors import StrategyError
            raise StrategyError(f"strategy {self.strategy}: {type(e).__name__} while placing "
                                f"{probe.spec.text} at {address:#x}: {e}") from None

    @staticmethod
    def _placed(probe, process, address: int, hook, strategy: str) -> None:
        placements = getattr(probe, "placements", None)     # (an IFUNC resolution has none)
        if placements is not None:
            placements.append(Placement(process, process.space.serial, address, hook, strategy))

    def _placed_through_shared_site(self, process, address: int, probe) -> bool:
        """A fork child shares its parent's site objects for the patches its memory copy
        holds (trampoline.py fork): a probe enabled in both is placed once, not twice."""
        for strategy in self.strategies.built():
            site = getattr(strategy, "sites", {}).get((process.space.serial, address))
            if site is not None and any(getattr(h, "probe", None) is probe
                                        for h in getattr(site, "hooks", ())):
                return True
        return False

    def resolve(self, process, probe: Probe) -> int:
        """The address of `probe` in the program `process` runs."""
        return self.resolve_in(process.image, _Program(process), probe)

    @staticmethod
    def resolve_in(image, mapped, probe: Probe) -> int:
        """The address of `probe` in the object `mapped` (`image`: its LoadedImage). A 0xADDR
        is the object's own virtual address (as in its ELF file), moved by its load bias. It
        must start an instruction of the object's code (insn/code_boundaries.py), checked here,
        before any strategy, in every object the probe applies to, whenever it is mapped."""
        spec = probe.spec
        if image is None:
            return spec.address if spec.address is not None else _no_function(spec, mapped)
        address = spec.address + image.load_bias if spec.address is not None \
            else _function_address(image, mapped, spec)
        from ..insn.code_boundaries import NotAnInstruction, boundaries_of   # (capstone)
        try:
            boundaries_of(image).check(address, shift=image.load_bias)
        except NotAnInstruction as refused:
            raise InstrumenterError(f"{spec.text}: {refused}") from None
        return address

    # ---- records ---------------------------------------------------------------------------
    def hit(self, probe: Probe, thread, address: int, *, kind: str = "entry",
            retval: int | None = None, args: tuple | None = None,
            name: str | None = None) -> None:
        """Record one hit of `probe` (then run its action). A uprobe's entry hits take
        _EntryHit's copy of this path, which keeps the site's name at hand."""
        if not probe.enabled:
            return
        probe.hits += 1
        process = thread.process
        cpu = self.debug.cpu(process)
        if args is None:
            args = argument_words(cpu, probe.nargs) \
                if kind == "entry" and probe.nargs else ()
        self.buffers.put((cpu.instructions_retired, process.pid, thread.tid,
                          probe.spec.text, address, args, retval, kind,
                          name or self.name_of(process, address)))
        action = probe.action
        if action is not None:
            action(ProbeContext(self.kernel, thread, probe, address, retval))

    def name_of(self, process, address: int) -> str:
        """`address` symbolized in the image `process` runs, computed once per image."""
        image = process.image
        cached = self._names.get((id(image), address))
        # The image is kept with the name: an id is only an identity while its object lives,
        # and an exec'd image freed with its space could hand its id to a new one.
        if cached is None or cached[0] is not image:
            name = self.kernel.symbolize(process, address)
            cached = self._names[(id(image), address)] = (image, name)
        return cached[1]

    def flush(self) -> None:
        """Collect what native actions counted in the guests, then flush the buffers."""
        jumps = self.strategies.if_built("jump")
        if jumps is not None:
            jumps.natives.collect()
        self.buffers.flush()

    # ---- process events (kernel_model/debug/) -------------------------------------------
    def exec(self, process, path, argv) -> None:
        self.returns.forget_process(process)
        self._forget_jumps(process, exited=False)
        if self.monitor.is_traced(process):          # a detached child's new image stays bare
            self.attach(process)

    def fork(self, parent, child) -> None:
        # A fork child's new Machine counts on the same clock before it runs, so that
        # timestamps go on continuously across the fork (a child sharing the parent's space,
        # as a vfork child does, shares its Machine and whatever it counts).
        if child.space is not parent.space:
            self.debug.count_instructions(child)
        for strategy in self.strategies.built():     # base.py: each copies its tables
            strategy.fork(parent, child)
        self.dynamic.fork(parent, child)
        self.returns.fork(self.debug.current_thread(), child.threads[0])

    def vfork(self, parent, child) -> None:
        """The child shares the parent's patched space; the children policy (monitor) decides
        whether it runs the patches (follow) or the original code (detach)."""
        self.returns.fork(child.vfork_parent, child.threads[0])

    def exit(self, process, status) -> None:
        self.returns.forget_process(process)
        self._forget_jumps(process, exited=True)

    def _forget_jumps(self, process, *, exited: bool) -> None:
        jumps = self.strategies.if_built("jump")
        if jumps is not None:
            jumps.forget_process(process, exited=exited)

    def space_released(self, space) -> None:
        """The kernel frees `space` next: collect what native actions counted there, then
        forget it in every table (all are keyed by space.serial, never id(): issue 12)."""
        self.dynamic.forget_space(space.serial)
        self.returns.landings.pop(space.serial, None)
        forget_space_tables(self, space)
        serial = space.serial
        for resolution in self._ifuncs.values():
            resolution.forget_space(serial)

    # ---- syscall probes --------------------------------------------------------------------
    @property
    def syscall_names(self) -> frozenset:
        """The calls the session's syscall: probes name: the door tells it of these only
        (kernel_model/debug/events.py syscall_watchers_of). Made again when a probe is added
        (the list only grows: dynamic.py); a disabled probe's call is still told, and its
        hit ignored below."""
        probes = self.probes
        if self._syscall_names[0] != len(probes):
            self._syscall_names = (len(probes), frozenset(p.spec.syscall for p in probes
                                                          if p.spec.kind == SYSCALL))
        return self._syscall_names[1]

    def syscall_entry(self, thread, name: str, args) -> None:
        for probe in self.probes:
            if probe.spec.kind == SYSCALL and probe.spec.syscall == name and probe.enabled:
                self.hit(probe, thread, 0, kind="syscall_entry", args=tuple(args), name=name)

    def syscall_exit(self, thread, name: str, args, result: int) -> None:
        for probe in self.probes:
            if probe.spec.kind == SYSCALL and probe.spec.syscall == name and probe.enabled:
                cpu = self.debug.cpu(thread.process)
                self.buffers.put((cpu.instructions_retired, thread.process.pid,
                                  thread.tid, probe.spec.text, 0, tuple(args),
                                  _signed(result, cpu.arch.bits), "syscall_exit", name))


def _count_placement(probe, strategy: str) -> None:
    """For the -c listing; an IFUNC's resolution places its resolver's hook as a stand-in
    probe, which keeps no listing."""
    chosen = getattr(probe, "chosen", None)
    if chosen is not None:
        chosen[strategy] = chosen.get(strategy, 0) + 1


def _check_handler(probe: Probe, name: str, strategy) -> None:
    """A user handler is code in a trampoline page (US 9,336,001): only strategies that build one
    can call it."""
    handler = getattr(probe, "handler", None)      # `probe` may be an IFUNC resolver's watch
    if handler is not None and probe.spec.kind == UPROBE \
            and not getattr(strategy, "runs_user_handlers", False):
        raise InstrumenterError(f"{probe.spec.text}: strategy {name} has no trampoline page to "
                                f"call the handler {handler.spec} from (use trampoline)")


def _signed(value: int, bits: int) -> int:
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value
