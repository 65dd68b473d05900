"""What a tool may read and change of a traced process besides its events: areas,
the CPU view of its address space, the objects mapped in it and their symbols; pages mapped on
the tool's behalf (XOL pages). Part of the debug interface (kernel_model/debug/), the one door
between a tool and the kernel, as /proc/PID/maps and uprobes' XOL area are. Memory reads and
writes, which must respect the tools' patches, are kernel_model/debug/patches.py's.
"""
from .cpu import SpaceCpu


class ProcessAccess:
    _cpus: dict | None = None

    def cpu(self, process) -> SpaceCpu:
        """The CPU and memory of `process`'s address space, as a tool may use them in a trap
        or event handler (kernel_model/debug/cpu.py). One view per space, kept until the space
        is released."""
        space = process.space
        cpus = self._cpus
        if cpus is None:
            cpus = self._cpus = {}
        view = cpus.get(space.serial)
        if view is None:
            view = cpus[space.serial] = SpaceCpu(space)
        return view

    def forget_cpu(self, space) -> None:
        if self._cpus:
            self._cpus.pop(space.serial, None)

    @staticmethod
    def arch(process):
        """The architecture `process` runs (emu.arch.Arch: name, bits, word, pc/sp names)."""
        return process.space.machine.arch

    @staticmethod
    def area_at(process, address: int):
        """The area of `process` holding `address` (kernel_model.memory.vm.Vma), None if unmapped:
        a line of /proc/PID/maps."""
        return process.space.vm.vma_at(address)

    @staticmethod
    def instructions_retired(process) -> int:
        """Instructions run so far on the clock `process` counts on — exact inside a trap or
        event handler too (the raising instruction included); 0 if it is not counted."""
        return process.space.machine.instructions_retired

    @staticmethod
    def symbolize(process, address: int) -> str:
        """`address` as "function+0xoff" in the program, "libc.so.6:malloc+0x12" in another
        object mapped in `process` (kernel_model/images.py), else "0x..."."""
        return symbolize(process, address)

    @staticmethod
    def images(process) -> list:
        """The ELF objects mapped in `process` (MappedImage: path, base, end, image), by
        address: the program, ld.so, the shared libraries loaded so far."""
        return list(_image_map(process) or ())

    @staticmethod
    def image_map_version(process) -> tuple[int, int]:
        """Changes whenever `process`'s image map does (an exec, a fork's new space, an
        object mapped or unmapped): a tool that named addresses under one version need not
        look at the map again while it holds."""
        images = _image_map(process)
        return (getattr(process.space, "serial", 0), images.version if images is not None else 0)

    @staticmethod
    def image_at(process, address: int):
        """The LoadedImage (relocated where it is mapped) whose object holds `address`, or
        None: what a tool decodes and symbolizes a probe site with."""
        images = _image_map(process)
        mapped = images.at(address) if images is not None else None
        if mapped is None:
            return process.image          # a space without an image map: its program's, as before
        return mapped.image

    @staticmethod
    def map_pages(process, size: int, perms: int, *, near: int | None = None, name: bytes = b"[xol]") -> int:
        """Map pages into `process` on a tool's behalf (XOL pages), within ±2 GiB of `near`
        when given, so that rel32 jumps reach (x86-64)."""
        from ..errno import GuestErrno
        from ..errors import KernelError
        from ..memory.vm import MAP_ANONYMOUS, MAP_PRIVATE
        vm = process.space.vm
        hint = 0
        if near is not None and process.space.machine.arch.bits == 64:   # i386: rel32 reaches everything
            try:
                hint = vm.find_free(size, below=near & ~0xFFF)
            except GuestErrno:
                hint = 0
            if hint and abs(hint - near) >= (1 << 31) - size:
                hint = 0
        try:
            return vm.mmap(hint, size, perms, MAP_PRIVATE | MAP_ANONYMOUS, name=name)
        except GuestErrno as e:
            raise KernelError(f"cannot map {size} bytes into pid {process.pid}: {e}") from None



def _image_map(process):
    """The process's ImageMap; None for a space that keeps none (a tool's stand-in in tests)."""
    return getattr(process.space, "images", None)


def symbolize(process, address: int) -> str:
    """The kernel's and every tool's one way to name a code address (issue 14: records, fault
    reports and symbolization say `lib+offset` in a shared object)."""
    images = _image_map(process)
    mapped = images.at(address) if images is not None else None
    if mapped is None or (process.image is not None and mapped.image is process.image):
        image = process.image
        return image.symbols.symbolize(address) if image is not None else f"{address:#x}"
    image = mapped.image
    if image is None:
        return f"{mapped.name}+{address - mapped.base:#x}"
    name = image.symbols.symbolize(address)
    return f"{mapped.name}:{name}" if not name.startswith("0x") else f"{mapped.name}+{address - mapped.base:#x}"
