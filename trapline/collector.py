"""The cyclic garbage collector waits while trapline starts (issue 31, start-up).

Importing trapline's modules and click allocates tens of thousands of objects that live for the
whole run, and the collector, triggered by the allocations alone, traversed them again and
again: a measurable share of a static hello's instructions (callgrind) went to collections that
found nothing to free. It is off from the start of the `trapline` command (trapline/entry.py)
until the command's own work starts; then what start-up made is frozen (gc.freeze: kept out of
every later collection, as it is garbage only at exit) and the collector runs as usual for the
guest's run.
"""
import gc


def pause() -> None:
    gc.disable()


def resume() -> None:
    """The collector on again (start-up's objects frozen first); a no-op once it runs."""
    if not gc.isenabled():
        gc.freeze()
        gc.enable()
