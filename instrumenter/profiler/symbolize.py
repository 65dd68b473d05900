"""Address -> module, function and offset, for the profiler's samples (US 7,823,129's "ID to name"
records; issue 18: the program, shared libraries, the vDSO and tool pages named as such).

Names are taken when the sample is taken, from the objects mapped in the process at that moment
(the debug interface's image map), so an address resolves to the object last loaded over it
(dlopen/dlclose reusing a range) and a sample never carries a stale name. What no object covers
is named by its area: tool pages (the probes' XOL pages, native actions) as `[tool:NAME]`, the
stack, the heap, and code in anonymous memory as `[jit]` — code written at run time has no
symbol, and none is invented for it. Code of an object that has no symbol there (Debian's
stripped programs) is named by the function its `.eh_frame` FDE bounds, from that function's
start (`sort+0x8bb0`, and `main` where glibc's `_start` names it: callsite.Functions), as the
walk-up names and hooks it, so that a report counts functions, not instructions.
A signal frame (the handler's return into a restorer, or a PC in one: sigframe.py) is named
`[signal]` in the object or area that holds the restorer, as gdb shows `<signal handler
called>` between a handler and the code it interrupted; the frame after it is an interrupted
PC, named by its own address.
"""
from __future__ import annotations

import bisect
from typing import NamedTuple

from kernel_model.debug import PROT_EXEC

from .sigframe import SIGNAL_MARK

TOOL_PAGES = (b"[uprobes]", b"[trapline-native]", b"[xol]")
STACKS_KEPT = 1 << 16          # whole stacks remembered (a bound on the memory they take)


class Frame(NamedTuple):
    module: str            # "fib", "libc.so.6", "[tool:uprobes]", "[jit]", "[unknown]"
    function: str | None   # None when neither a symbol nor an FDE-bounded function covers it
    offset: int            # from the function's start, else from the module's base
    address: int

    @property
    def name(self) -> str:
        """What a report shows: the function, or module+offset without one."""
        return self.function if self.function is not None else f"{self.module}+{self.offset:#x}"


class Symbolizer:
    """Names the addresses of one process at a time (its current image map)."""

    def __init__(self, door, functions=None, unwinder=None):
        self.door = door
        # The unwinder whose walks meet the signal frames (its signal_return_at, and
        # signals.seen: the restorers met); None: no frame is taken for one.
        self.unwinder = unwinder
        # Stripped code: the function its .eh_frame FDE bounds (callsite.Functions), named
        # "module+0xSTART" (or `main`) as the walk-up names and hooks it, so that a report's
        # function rows and the walk-up's hot spots are the same functions. None: by offset.
        self.functions = functions
        self._sizeless: dict[tuple, tuple] = {}     # (path, bias) -> starts, functions
        # Frames named from objects, for the image map they were named in (`_map`): a
        # sample's return addresses repeat from sample to sample, and naming one costs a search
        # of the map and of the object's symbols. Interrupted PCs and return addresses apart
        # (a return address is named by the call before it).
        self._map: tuple = ()
        self._named_pcs: dict[int, Frame] = {}
        self._named_returns: dict[int, Frame] = {}
        # Whole stacks, named from objects only: a hot loop's samples repeat the same stacks
        # (most of callchain 4000's and of Debian gawk's; none of fib's, all distinct).
        self._stacks: dict[tuple[int, ...], tuple[Frame, ...]] = {}
        # The image map followed: its version (the door's image_map_version) and its objects
        self._version: tuple | None = None
        self._images: list = []
        self._bases: list[int] = []

    def frames(self, process, addresses) -> tuple[Frame, ...]:
        """Names for a stack: the first address is the interrupted PC, the others return
        addresses, named by the call before them (address - 1), as gdb's backtrace does: a
        call that is a function's last instruction returns to the next function's start."""
        self.follow(process)
        return self.named(process, addresses)

    def named(self, process, addresses) -> tuple[Frame, ...]:
        """frames(), for a process whose image map was just followed (follow)."""
        addresses = tuple(addresses)
        known = self._stacks.get(addresses)
        if known is not None or not addresses:
            return known or ()
        seen = self.unwinder.signals.seen if self.unwinder is not None else None
        if seen and not seen.isdisjoint(addresses):
            return self._name_signal_stack(process, addresses)
        first = self._named_pcs.get(addresses[0])
        rest = tuple(map(self._named_returns.get, addresses[1:]))     # (map: no Python loop)
        if first is None or None in rest:
            return self._name_stack(process, addresses, first, rest)
        frames = (first, *rest)             # every one named from an object before
        self._keep(addresses, frames)
        return frames

    def named_after(self, process, addresses, shared: int, previous: tuple) -> tuple[Frame, ...]:
        """named() for a stack whose outermost `shared` addresses are those of the stack just
        named `previous`, under the same image map and areas (a batch of captured ticks:
        CapturedFrame.shared), neither's PC among them: their frames are previous's, and only
        the frames inside are looked up. Where signal frames were met, the stack is named
        whole: there a frame's name depends on the one inside it."""
        seen = self.unwinder.signals.seen if self.unwinder is not None else None
        if seen:
            return self.named(process, addresses)
        inner = addresses[:len(addresses) - shared]
        first = self._named_pcs.get(inner[0])
        rest = tuple(map(self._named_returns.get, inner[1:]))
        if first is None or None in rest:
            return self._name_stack(process, inner, first, rest) + previous[-shared:]
        return (first, *rest, *previous[-shared:])

    def follow(self, process) -> None:
        """Look at `process`'s image map again only when its version changed; forget the
        names when the objects or their places did."""
        version = self.door.image_map_version(process)
        if version == self._version:
            return
        images = self.door.images(process)
        self._version, self._images, self._bases = version, images, [m.base for m in images]
        layout = tuple([(m.name, m.base, m.end) for m in images])
        if layout != self._map:
            self._map, self._stacks = layout, {}
            self._named_pcs, self._named_returns = {}, {}

    def _name_stack(self, process, addresses: tuple, first, rest) -> tuple[Frame, ...]:
        context = (process, self._images, self._bases)
        if first is None:
            first = self._name(context, addresses[0], 0)
        rest = [frame if frame is not None else self._name(context, address, 1)
                for frame, address in zip(rest, addresses[1:])]
        frames = (first, *rest)
        if not any(frame.module.startswith("[") for frame in frames):   # all named from objects
            self._keep(addresses, frames)
        return frames

    def _name_signal_stack(self, process, addresses: tuple) -> tuple[Frame, ...]:
        """_name_stack for a stack that may pass through signal frames: the frame of a restorer
        is the signal's mark, and the PC after it an interrupted one."""
        context = (process, self._images, self._bases)
        frames, interrupted = [], True
        for address in addresses:
            signal = self.unwinder.signal_return_at(process, address, interrupted)
            frame = self._name(context, address, 0 if interrupted or signal is not None else 1)
            if signal is not None:
                frame = Frame(frame.module, SIGNAL_MARK, address - signal.start, address)
            frames.append(frame)
            interrupted = signal is not None
        frames = tuple(frames)
        if not any(frame.module.startswith("[") for frame in frames):
            self._keep(addresses, frames)
        return frames

    def _keep(self, addresses: tuple, frames: tuple) -> None:
        if len(self._stacks) >= STACKS_KEPT:
            self._stacks.clear()
        self._stacks[addresses] = frames

    def _name(self, context, address: int, is_return: int) -> Frame:
        process, images, bases = context
        frame = self._frame(process, images, bases, address, address - is_return)
        if not frame.module.startswith("["):               # areas change under the same map
            (self._named_returns if is_return else self._named_pcs)[address] = frame
        return frame

    def _frame(self, process, images, bases, address: int, lookup: int) -> Frame:
        i = bisect.bisect_right(bases, lookup) - 1
        mapped = images[i] if i >= 0 and lookup < images[i].end else None
        if mapped is not None:
            image = mapped.image
            symbol = image.symbols.function_at(lookup) if image is not None else None
            if symbol is None and image is not None:
                symbol = self._sizeless_before(image, lookup)
            if symbol is not None:
                return Frame(mapped.name, symbol.name, address - symbol.addr, address)
            function = self.functions.by_fde(process, mapped, lookup) \
                if self.functions is not None and image is not None else None
            if function is not None:
                return Frame(mapped.name, function.name, address - function.entry, address)
            return Frame(mapped.name, None, address - mapped.base, address)
        return self._area_frame(process, address, lookup)

    def _sizeless_before(self, image, address: int):
        """A function symbol of size 0 (assembly such as musl's `_start`) names the addresses
        from it up to the next function, as gdb's minimal symbols do; a sized one never
        stretches past its end."""
        key = (image.path, image.load_bias)
        cached = self._sizeless.get(key)
        if cached is None:
            functions = image.symbols.functions()
            cached = self._sizeless[key] = ([f.addr for f in functions], functions)
        starts, functions = cached
        i = bisect.bisect_right(starts, address) - 1
        if i < 0 or functions[i].size != 0:
            return None
        return functions[i]

    def _area_frame(self, process, address: int, lookup: int) -> Frame:
        area = self.door.area_at(process, lookup)
        if area is None:
            return Frame("[unknown]", None, address, address)
        name = area.name
        if name in TOOL_PAGES:
            module = f"[tool:{name.decode().strip('[]')}]"
        elif name.startswith(b"[") and name.endswith(b"]"):
            module = name.decode(errors="replace")          # [vdso], [stack], [heap]
        elif not name and area.perms & PROT_EXEC:
            module = "[jit]"                                  # code the program wrote itself
        else:
            module = name.rsplit(b"/", 1)[-1].decode(errors="replace") or "[anon]"
        return Frame(module, None, address - area.start, address)
