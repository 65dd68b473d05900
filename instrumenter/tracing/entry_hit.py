"""A uprobe's entry hook: the per-hit path that records an entry hit and runs the probe's action.

It is apart from session.py because it is the hot path (every hit of every int3 and jump probe
runs it, bench/probe_rate.py) and one concept of its own: the session builds one per entry
site (Session.place_resolved) and keeps the general, slower Session.hit for the other kinds.
"""
from ..probes.context import ProbeContext, argument_fetcher


class _EntryHit:
    """A uprobe's part of a site: record the hit (and run the probe's action).

    This is Session.hit for kind "entry", inlined: it runs on every hit of every int3 and jump
    probe, where each call and lookup counts (bench/probe_rate.py). The site's symbolized
    name is kept with the image it was computed for (a fork child runs the same image, an
    exec'd one gets new hooks). The door's view of the space and the reader of the arguments
    are kept with the space they were made for (a fork child's hit makes its own): getting
    them on every hit was a fifth or more of a record's cost (issue 31, bench/trace_cost.py)."""
    __slots__ = ("session", "probe", "_image", "_address", "_name", "_space", "_cpu",
                 "_nargs", "_args", "_put")

    def __init__(self, session, probe):
        self.session, self.probe = session, probe
        # The row of an entry hit is plain (its arguments are ints read from registers and
        # memory, no retval, no fields): buffers that take such rows apart get it so
        # (records.py Buffers.put_plain), others as any row
        buffers = session.buffers
        self._put = getattr(buffers, "put_plain", buffers.put)
        self._image = self._address = self._name = self._space = self._cpu = None
        self._nargs, self._args = 0, tuple

    def __call__(self, thread, address: int) -> None:
        probe, session = self.probe, self.session
        if not probe.enabled:             # disabled, not taken out yet (dynamic.py)
            return
        probe.hits += 1
        process = thread.process
        nargs = probe.nargs
        if process.space is not self._space or nargs != self._nargs:
            self._bind(process, nargs)
        image = process.image
        if address != self._address or image is not self._image:
            self._name = session.name_of(process, address)
            self._image, self._address = image, address
        self._put((self._cpu.read_clock(), process.pid, thread.tid,
                   probe.spec.text, address, self._args(), None, "entry", self._name))
        action = probe.action
        if action is not None:
            action(ProbeContext(session.kernel, thread, probe, address, None, self._cpu))

    def _bind(self, process, nargs: int) -> None:
        """The door's view of `process`'s space and the reader of `nargs` argument words."""
        self._space = process.space
        self._cpu = cpu = self.session.debug.cpu(process)
        self._nargs = nargs
        self._args = argument_fetcher(cpu, nargs) if nargs else tuple
