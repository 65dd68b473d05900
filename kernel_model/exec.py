"""Building a program image: ELF -> a fresh address space with segments, heap and stack.

Like Linux's fs/binfmt_elf.c load_elf_binary, the new image is built completely in a new Space
before anything of the caller changes; only `commit_exec` replaces the caller's image, so a
failed exec leaves the caller intact.
"""
import functools
import hashlib

from loader.elf import load_elf
from loader.errors import LoaderError
from loader.image import PERM_R, PERM_W, PERM_X
from loader.stack import build_initial_stack

from . import errno as E
from .errno import GuestErrno
from .layout import PAGE
from .space import Space
from .vm import PROT_EXEC, PROT_READ, PROT_WRITE, page_up

PLATFORM = {"i386": b"i686", "x86_64": b"x86_64"}
MAX_ARG_BYTES = 128 * 1024 * 32      # Linux MAX_ARG_STRLEN * 32 -> E2BIG beyond it


class ProgramImage:
    """A built, not yet committed image."""

    def __init__(self, space, image, entry, sp, exe_path):
        self.space, self.image, self.entry, self.sp, self.exe_path = space, image, entry, sp, exe_path


def _perms(p: int) -> int:
    return ((PROT_READ if p & PERM_R else 0) | (PROT_WRITE if p & PERM_W else 0)
            | (PROT_EXEC if p & PERM_X else 0))


def segment_areas(image) -> list[tuple[int, int, int]]:
    """(start, end, perms) of the page runs the PT_LOADs cover, in address order: pages shared
    by two segments get the union of their permissions, adjacent pages of equal permissions
    form one area (as Linux's VMAs after binfmt_elf)."""
    page_perms: dict[int, int] = {}
    for seg in image.segments:
        for page in range(seg.vaddr & ~(PAGE - 1), page_up(seg.vaddr + seg.memsz), PAGE):
            page_perms[page] = page_perms.get(page, 0) | _perms(seg.perms)
    areas: list[list[int]] = []
    for page in sorted(page_perms):
        if areas and areas[-1][1] == page and areas[-1][2] == page_perms[page]:
            areas[-1][1] = page + PAGE
        else:
            areas.append([page, page + PAGE, page_perms[page]])
    return [tuple(area) for area in areas]


def area_bytes(image, start: int, end: int) -> bytes:
    """What the pages [start, end) hold after loading: file bytes, zeros elsewhere (bss)."""
    out = bytearray(end - start)
    for seg in image.segments:
        lo, hi = max(seg.vaddr, start), min(seg.vaddr + len(seg.data), end)
        if lo < hi:
            out[lo - start:hi - start] = seg.data[lo - seg.vaddr:hi - seg.vaddr]
    return bytes(out)


@functools.lru_cache(maxsize=8)
def load_plan(segments) -> tuple[tuple[int, int, int, bytes], ...]:
    """(start, end, perms, bytes) of each area of an image's segments. The loader hands out
    the same segments for the same file (loader/elf.py), so a shell loop execing one binary
    plans it once; the bytes' hashes are cached by Python, so the lookup is cheap."""
    image = _Segments(segments)
    return tuple((start, end, perms, area_bytes(image, start, end))
                 for start, end, perms in segment_areas(image))


class _Segments:
    def __init__(self, segments):
        self.segments = segments


def map_segments(space: Space, image, name: bytes) -> int:
    """Map every PT_LOAD; return the end of the highest segment (where the heap starts). An
    area a recycled Machine kept (kernel_model/space_pool.py: same range and permissions) is
    synced instead of mapped, so that the code translated from it stays valid."""
    for start, end, perms, data in load_plan(tuple(image.segments)):
        kept = space.vm.vma_at(start)
        if kept is not None and (kept.start, kept.end, kept.perms) == (start, end, perms):
            space.machine.mem.sync(start, data)
            space.vm.rename_area(kept, name=name)
        else:
            space.vm.map_area(start, end - start, perms, name=name, data=data)
    return max(seg.vaddr + seg.memsz for seg in image.segments)


def build_program(data: bytes, exe_path: bytes, argv: list[bytes], envp: list[bytes], *,
                  seed: int, exec_count: int, memory_limit: int, pool=None) -> ProgramImage:
    """Raises GuestErrno(ENOEXEC/E2BIG/ENOMEM) for what execve would refuse."""
    if sum(len(a) + 1 for a in argv + envp) > MAX_ARG_BYTES:
        raise GuestErrno(E.E2BIG)
    try:
        image = load_elf(data, exe_path.decode(errors="replace"))
    except LoaderError as e:
        raise GuestErrno(E.ENOEXEC, str(e)) from None
    recycled = None
    if pool is not None:
        recycled = pool.take(image.arch, code_areas_of(load_plan(tuple(image.segments))))
    space = Space(image.arch, memory_limit=memory_limit, recycled=recycled)
    try:
        return _build_in(space, image, exe_path, argv, envp, seed, exec_count)
    except BaseException:
        space.release()             # the new image is dropped whole: a failed exec changes nothing
        raise


def code_areas_of(areas) -> tuple:
    return tuple(area[:3] for area in areas if area[2] & PROT_EXEC)


def _build_in(space, image, exe_path, argv, envp, seed, exec_count) -> ProgramImage:
    end = map_segments(space, image, exe_path)
    space.vm.set_brk_start(end)
    lay = space.layout
    space.vm.map_area(lay.stack_top - lay.stack_size, lay.stack_size, PROT_READ | PROT_WRITE,
                      name=b"[stack]")
    random16 = hashlib.sha256(b"AT_RANDOM|%d|%d" % (seed, exec_count)).digest()[:16]
    stack = build_initial_stack(image, argv, envp, stack_top=lay.stack_top, random16=random16,
                                execfn=exe_path, platform=PLATFORM[image.arch])
    space.machine.mem.write(stack.base, stack.data)
    return ProgramImage(space, image, image.entry, stack.sp, exe_path)
