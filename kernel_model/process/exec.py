"""execve: a program image built in a fresh address space, then committed in place of the caller's.

Like Linux's fs/exec.c and fs/binfmt_elf.c load_elf_binary (and xv6's exec), the new image is
built completely in a new Space — segments, the interpreter (kernel_model/interp.py), heap and
stack — before anything of the caller changes (`build_program`; the file and `#!` lookup are
binprm.py); only `commit_program`, the point of no return, replaces the caller's
image, so a failed exec leaves the caller intact. `execve` is the whole call.
"""
import functools

from loader.elf import load_elf
from loader.errors import LoaderError
from loader.image import PERM_R, PERM_W, PERM_X
from loader.stack import build_initial_stack

from .. import errno as E
from ..digest import sha256_digest
from ..errno import GuestErrno
from .exit import exit_thread, release_vfork_parent
from .setid import set_ids
from ..fs.proctext import TASK_COMM_LEN
from ..images import MappedImage
from ..interp import LOADER_BRK, place_interpreter, place_loader, span_of
from ..memory.layout import PAGE
from ..personality import apply_exec_personality
from ..time_namespace import INITIAL as INITIAL_TIME_NS
from ..vdso.vvar import serve_vdso
from ..vdso.mapping import map_vdso
from .proc import Thread
from ..memory.space import Space
from ..memory.vm import PROT_EXEC, PROT_READ, PROT_WRITE, page_up

PLATFORM = {"i386": b"i686", "x86_64": b"x86_64"}
MAX_ARG_BYTES = 128 * 1024 * 32      # Linux MAX_ARG_STRLEN * 32 -> E2BIG beyond it


class ProgramImage:
    """A built, not yet committed image."""

    def __init__(self, space, image, entry, sp, exe_path, interp=None):
        self.space, self.image, self.entry, self.sp, self.exe_path = space, image, entry, sp, exe_path
        self.interp = interp        # kernel_model.interp.Interpreter of a dynamic program, else None


def _perms(p: int) -> int:
    return ((PROT_READ if p & PERM_R else 0) | (PROT_WRITE if p & PERM_W else 0)
            | (PROT_EXEC if p & PERM_X else 0))


def segment_areas(image) -> list[tuple[int, int, int]]:
    """(start, end, perms) of the page runs the PT_LOADs cover, in address order: pages shared
    by two segments get the union of their permissions, adjacent pages of equal permissions
    form one area (as Linux's VMAs after binfmt_elf). Worked out on the segments' edges, not
    page by page: a 2 GiB .bss is half a million pages."""
    runs = [(seg.vaddr & ~(PAGE - 1), page_up(seg.vaddr + seg.memsz), _perms(seg.perms))
            for seg in image.segments]
    edges = sorted({edge for start, end, _ in runs for edge in (start, end)})
    areas: list[list[int]] = []
    for lo, hi in zip(edges, edges[1:]):
        covering = [perms for start, end, perms in runs if start <= lo and hi <= end]
        if not covering:
            continue                                    # a hole between segments
        perms = functools.reduce(lambda a, b: a | b, covering)
        if areas and areas[-1][1] == lo and areas[-1][2] == perms:
            areas[-1][1] = hi
        else:
            areas.append([lo, hi, perms])
    return [tuple(area) for area in areas]


def area_bytes(image, start: int, end: int) -> bytes:
    """What the pages [start, end) hold after loading: file bytes, zeros elsewhere (bss), cut
    after the page that holds the last file byte. The pages past it are bss only: fresh zero
    pages the host materialises on first touch (emu/host_pages.py), so a 2 GiB .bss costs
    neither a 2 GiB buffer here nor host memory until the guest writes it, as with Linux's
    anonymous bss mapping (binfmt_elf set_brk / vm_brk_flags)."""
    file_end = max((seg.vaddr + len(seg.data) for seg in image.segments
                    if seg.data and seg.vaddr < end and seg.vaddr + len(seg.data) > start), default=start)
    end = min(end, page_up(file_end))
    out = bytearray(max(0, end - start))
    for seg in image.segments:
        lo, hi = max(seg.vaddr, start), min(seg.vaddr + len(seg.data), end)
        if lo < hi:
            out[lo - start:hi - start] = seg.data[lo - seg.vaddr:hi - seg.vaddr]
    return bytes(out)


@functools.lru_cache(maxsize=8)
def load_plan(segments) -> tuple[tuple[int, int, int, bytes], ...]:
    """(start, end, perms, bytes) of each area of an image's segments; the bytes cover the
    area's first pages up to its last file byte (area_bytes), the rest is zero. The loader
    hands out the same segments for the same file (loader/elf.py), so a shell loop execing one
    binary plans it once; the bytes' hashes are cached by Python, so the lookup is cheap."""
    image = _Segments(segments)
    return tuple((start, end, perms, area_bytes(image, start, end))
                 for start, end, perms in segment_areas(image))


class _Segments:
    def __init__(self, segments):
        self.segments = segments


def check_segment_fits(space: Space, start: int, end: int) -> None:
    """Refuse, with the reason, an area the address space cannot hold. It must leave the
    stack's place free: Linux maps the stack first (setup_arg_pages) and each PT_LOAD with
    MAP_FIXED_NOREPLACE (binfmt_elf elf_map), so one reaching into the stack fails the exec
    with EEXIST. And it must fit the guest memory limit, which counts mapped bytes (a strict
    commit limit, like vm.overcommit_memory=2 with CommitLimit = the limit): a 2 GiB .bss
    fits the default 4 GiB, and costs the host only the pages the guest touches."""
    lay, vm = space.layout, space.vm
    where = f"segment [{start:#x}, {end:#x})"
    if vm.mapped_bytes() + (end - start) > vm.memory_limit:
        raise GuestErrno(E.ENOMEM, f"{where} of {(end - start) >> 20} MiB does not fit the guest "
                                   f"memory limit ({vm.memory_limit >> 20} MiB)")
    stack_bottom = lay.stack_top - lay.stack_size
    if start < lay.stack_top and end > stack_bottom:     # (i386's mmap area is above it)
        raise GuestErrno(E.EEXIST, f"{where} overlaps the stack [{stack_bottom:#x}, {lay.stack_top:#x})")


def area_offset(image, start: int) -> int:
    """The file offset /proc/PID/maps shows for the area starting at `start`: where the page
    comes from in the file of the segment that covers it (elf_map maps p_offset's page at
    p_vaddr's page)."""
    for seg in image.segments:
        page = seg.vaddr & ~(PAGE - 1)
        if page <= start < seg.vaddr + seg.memsz:
            return (seg.offset & ~(PAGE - 1)) + (start - page)
    return 0


def map_segments(space: Space, image, name: bytes) -> int:
    """Map every PT_LOAD; return the end of the highest segment (where the heap starts). An
    area a recycled Machine kept (kernel_model/memory/space_pool.py: same range and permissions) is
    synced instead of mapped, so that the code translated from it stays valid."""
    for start, end, perms, data in load_plan(tuple(image.segments)):
        check_segment_fits(space, start, end)
        kept = space.vm.vma_at(start)
        # A kept area is synced only when the file bytes cover it: its bss tail may hold what
        # the process before wrote, and zeroing a large tail would touch every page of it.
        if kept is not None and (kept.start, kept.end, kept.perms) == (start, end, perms) \
                and len(data) == end - start:
            space.machine.mem.sync(start, data)
            space.vm.rename_area(kept, name=name, offset=area_offset(image, start))
        else:
            space.vm.map_area(start, end - start, perms, name=name, data=data,
                              offset=area_offset(image, start))
    return max(seg.vaddr + seg.memsz for seg in image.segments)


def build_program(data: bytes, exe_path: bytes, argv: list[bytes], envp: list[bytes], *,
                  seed: int, exec_count: int, memory_limit: int, clock, pool=None,
                  read_interpreter=None, execfn: bytes | None = None) -> ProgramImage:
    """Raises GuestErrno(ENOEXEC/E2BIG/ENOMEM/ELIBBAD...) for what execve would refuse.
    `read_interpreter(path)` gives (bytes, resolved path) of the file a PT_INTERP names.
    `exe_path` is the file's resolved path (the mapped image, /proc/self/exe); `execfn` the
    path execve was given, which Linux copies to the top of the new stack and AT_EXECFN points
    at (fs/exec.c: bprm->filename, bprm->exec), symlinks unresolved (default: exe_path).
    `clock` is the kernel's VirtualClock, which the vDSO's clock page is written from."""
    if sum(len(a) + 1 for a in argv + envp) > MAX_ARG_BYTES:
        raise GuestErrno(E.E2BIG)
    try:
        image = load_elf(data, exe_path.decode(errors="replace"))
    except LoaderError as e:
        raise GuestErrno(E.ENOEXEC, str(e)) from None
    brk_start = None
    if image.is_pie and image.interp is None:
        image, brk_start = place_loader(image, data), LOADER_BRK[image.arch]
    interp_file = None
    if image.interp is not None:
        if read_interpreter is None:
            raise GuestErrno(E.ENOEXEC, "dynamic program without a file system to find its interpreter")
        interp_file = read_interpreter(image.interp)       # ENOENT etc. are execve's answer
    recycled = None
    if pool is not None:
        recycled = pool.take(image.arch, code_areas_of(load_plan(tuple(image.segments))))
    space = Space(image.arch, memory_limit=memory_limit, recycled=recycled)
    try:
        return _build_in(space, image, exe_path, argv, envp, seed, exec_count, interp_file,
                         brk_start, execfn or exe_path, clock)
    except BaseException:
        space.release()             # the new image is dropped whole: a failed exec changes nothing
        raise


def code_areas_of(areas) -> tuple:
    return tuple(area[:3] for area in areas if area[2] & PROT_EXEC)


def _build_in(space, image, exe_path, argv, envp, seed, exec_count, interp_file,
              brk_start, execfn, clock) -> ProgramImage:
    end = map_segments(space, image, exe_path)
    space.vm.set_brk_start(end if brk_start is None else brk_start)
    interp = None
    if interp_file is not None:
        interp = place_interpreter(space, image, *interp_file)
        map_segments(space, interp.image, interp.path)
    lay = space.layout
    space.vm.map_area(lay.stack_top - lay.stack_size, lay.stack_size, PROT_READ | PROT_WRITE,
                      name=b"[stack]")
    vdso = map_vdso(space, clock)            # after the interpreter, as load_elf_binary does
    random16 = sha256_digest(b"AT_RANDOM|%d|%d" % (seed, exec_count))[:16]
    stack = build_initial_stack(image, argv, envp, stack_top=lay.stack_top, random16=random16,
                                execfn=execfn, platform=PLATFORM[image.arch],
                                interp_base=interp.base if interp else 0,
                                sysinfo_ehdr=vdso.base, sysinfo=vdso.sysinfo)
    space.machine.mem.write(stack.base, stack.data)
    entry = interp.image.entry if interp else image.entry
    space.images.add(MappedImage(exe_path, *span_of(image), image=image))
    if interp is not None:
        space.images.add(MappedImage(interp.path, *span_of(interp.image), image=interp.image))
    return ProgramImage(space, image, entry, stack.sp, exe_path, interp)


# ---- the point of no return (fs/exec.c begin_new_exec) ----------------------------------------
def commit_program(kernel, proc, program, argv) -> Thread:
    """Replace proc's image by `program`: the new space goes live, the other threads die, the
    old space is released, and the calling thread starts at the new entry with the new stack."""
    space = program.space
    kernel.install_space(space)
    for other in [t for t in proc.threads if t is not kernel.current]:
        exit_thread(kernel, other)
    old_space = proc.space
    proc.space, proc.image, proc.exe, proc.argv = space, program.image, program.exe_path, list(argv)
    apply_exec_personality(proc, program)
    thread_flags = kernel.current.task_flags if kernel.current in proc.threads else None
    euid, egid = set_ids(program.file_stat, bool(thread_flags and thread_flags.no_new_privs)) \
        if getattr(program, "file_stat", None) is not None else (None, None)
    proc.creds = proc.creds.after_exec(euid=euid, egid=egid)
    if proc.time_ns is not INITIAL_TIME_NS:
        serve_vdso(proc)                        # the new vDSO's clocks in its time namespace
    (proc.ipc_ns or kernel.ipc).detach_all(proc)      # the old space's SysV attachments (exec_mmap)
    kernel.release_space(old_space)
    thread = kernel.current if kernel.current in proc.threads else None
    if thread is None:
        thread = Thread(tid=proc.pid, process=proc, kstack_top=space.kstack_top(0))
    thread.kstack_top, thread.tls, thread.context = space.kstack_top(0), {}, None
    thread.clear_child_tid = 0
    thread.task_flags = thread.task_flags.after_exec()
    proc.threads = [thread]
    space.current_kstack_top = thread.kstack_top
    space.enter_user_mode(program.entry, program.sp, kstack_top=thread.kstack_top)
    thread.context = space.machine.save_context()
    release_vfork_parent(kernel, proc)
    return thread


def execve(kernel, proc, path: bytes, argv: list[bytes], envp: list[bytes]) -> None:
    """The whole call once its arguments are read: build (may fail, the caller intact), then
    what execve(2) resets — an fd table shared by CLONE_FILES is unshared and close-on-exec
    fds closed, caught signals revert to SIG_DFL while ignored ones stay ignored — commit, and
    tell the tools (the debug interface's exec event)."""
    if not argv:
        # do_execveat_common (Linux 5.18+): an empty argv gets "" as argv[0], so argc is 1 and a
        # program reading from argv[1] does not walk into envp
        argv = [b""]
    program = kernel.load_program(proc, path, argv, envp)
    if proc.fds is not None and any(p is not proc and p.fds is proc.fds
                                    for p in kernel.processes.values()):
        proc.fds = proc.fds.copy()
    proc.fds.close_on_exec()
    proc.sigactions = {sig: act for sig, act in proc.sigactions.items() if act[0] == 1}
    proc.posix_timers = {}            # exit_itimers (fs/exec.c begin_new_exec); ITIMER_REAL stays
    proc.did_exec = True              # (PF_FORKNOEXEC cleared: setpgid of it is EACCES)
    thread = commit_program(kernel, proc, program, program.argv)
    # begin_new_exec (fs/exec.c): __set_task_comm(me, kbasename(bprm->filename)), the name as
    # the caller gave it (exec of /proc/self/exe is "exe", not the target's name).
    thread.comm = path.rsplit(b"/", 1)[-1][:TASK_COMM_LEN - 1]
    kernel.debug.exec(proc, path, program.argv)
