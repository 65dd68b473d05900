"""A uprobe's entry hook: the per-hit path that records an entry hit and runs the probe's action.

It is apart from session.py because it is the hot path (every hit of every int3 and jump probe
runs it, bench/probe_rate.py) and one concept of its own: the session builds one per entry
site (Session.place_resolved) and keeps the general, slower Session.hit for the other kinds.
"""
from ..probes.context import argument_fetcher, new_context


def _EntryHit(session, probe):
    """A uprobe's part of a site: `hook(thread, address)` records the hit (and runs the probe's
    action); `hook.session` and `hook.probe` are what it was made for (the strategies ask a
    hook for its probe: handlers/user.py handler_of).

    This is Session.hit for kind "entry", inlined: it runs on every hit of every int3 and jump
    probe, where each call and lookup counts (bench/probe_rate.py). It is a function, not an
    object with __call__: CPython 3.11 calls a function from Python code in the caller's
    evaluation loop, an object's __call__ through its type's call slot and a new one, about
    twice the cost of the call (issue 31). The site's symbolized name is kept with the image
    it was computed for (a fork child runs the same image, an exec'd one gets new hooks). The
    door's view of the space and the reader of the arguments are kept with the space they were
    made for (a fork child's hit makes its own): getting them on every hit was a fifth or more
    of a record's cost (issue 31, bench/trace_cost.py)."""
    # The row of an entry hit is plain (its arguments are ints read from registers and
    # memory, no retval, no fields): buffers that take such rows apart get it so
    # (records.py Buffers.put_plain), others as any row
    buffers = session.buffers
    put = getattr(buffers, "put_plain", buffers.put)
    kernel, name_of, door = session.kernel, session.name_of, session.debug
    bound_space = bound_image = bound_address = name = cpu = None
    bound_nargs, read_args = 0, tuple
    hit_clock = None

    def hook(thread, address: int) -> None:
        nonlocal bound_space, bound_image, bound_address, name, cpu, bound_nargs, read_args, \
            hit_clock
        if not probe.enabled:             # disabled, not taken out yet (dynamic.py)
            return
        probe.hits += 1
        process = thread.process
        nargs = probe.nargs
        if process.space is not bound_space or nargs != bound_nargs:
            # the door's view of `process`'s space and the reader of `nargs` argument words
            bound_space, bound_nargs = process.space, nargs
            cpu = door.cpu(process)
            hit_clock = cpu.hit_clock
            read_args = argument_fetcher(cpu, nargs) if nargs else tuple
        image = process.image
        if address != bound_address or image is not bound_image:
            name = name_of(process, address)
            bound_image, bound_address = image, address
        # the clock the C interrupt hook read for this hit, -1 outside one (SpaceCpu.hit_clock)
        ts = hit_clock.value
        put((ts if ts >= 0 else cpu.read_clock(), process.pid, thread.tid, probe.spec.text,
             address, read_args(), None, "entry", name))
        action = probe.action
        if action is not None:
            action(new_context((kernel, thread, probe, address, None, cpu)))
    hook.session, hook.probe = session, probe
    return hook
