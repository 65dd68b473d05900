"""Structures in guest memory, summarised the way strace 6.x prints them by default (no -v).

Layouts are the kernel's x86 ones (arch/x86/include/uapi/asm/stat.h, signal.h; uapi/linux/time.h,
resource.h, utsname.h); `word` is the ABI's long size (4 on i386, 8 on x86-64). Every decoder
returns the bare address when the memory cannot be read, as strace does.
"""
from kernel_model.debug.abi import NSIG, flags, signal_name

from . import xlat_style
from .strings import (MemReader, format_address, format_buffer, max_elements, quote, read_word,
                      read_words)
from .unabbreviated import (format_dirents_full, format_stat_full, format_statx_full,
                            format_utsname_full, makedev, time_comment)

RLIM64_INFINITY = (1 << 64) - 1
RLIM32_INFINITY = (1 << 32) - 1
UTS_FIELD = 65               # __NEW_UTS_LEN + 1


def _signed(value: int, bits: int) -> int:
    return value - (1 << bits) if value >> (bits - 1) & 1 else value


def format_int_array(mem: MemReader, addr: int, count: int) -> str:
    """`[6, 7]` (pipe's descriptors) or `[4096]` (an int result)."""
    values = read_words(mem, addr, 4, count)
    if values is None:
        return format_address(addr)
    return "[" + ", ".join(str(_signed(v, 32)) for v in values) + "]"


def format_loff(mem: MemReader, addr: int) -> str:
    value = read_word(mem, addr, 8, signed=True)
    return format_address(addr) if value is None else f"[{value}]"


def format_sigset(mem: MemReader, addr: int, size: int) -> str:
    """`[INT CHLD]`; more than half the signals set prints the complement: `~[RTMIN RT_1]`."""
    if not addr:
        return "NULL"
    if not 0 < size <= NSIG // 8:
        return format_address(addr)
    mask = read_word(mem, addr, size)
    return format_address(addr) if mask is None else sigset_text(mask, size * 8)


def sigset_text(mask: int, nsig: int) -> str:
    members = [number for number in range(1, nsig + 1) if mask >> (number - 1) & 1]
    prefix = ""
    if len(members) * 2 > nsig:
        prefix = "~"
        members = [number for number in range(1, nsig + 1) if not mask >> (number - 1) & 1]
    return prefix + "[" + " ".join(xlat_style.short_signal(number) for number in members) + "]"


def format_sigaction(mem: MemReader, addr: int, word: int) -> str:
    """The kernel's struct sigaction: handler, flags, restorer (words), then the 8-byte mask."""
    if not addr:
        return "NULL"
    fields = read_words(mem, addr, word, 3)
    mask = read_word(mem, addr + 3 * word, 8)
    if fields is None or mask is None:
        return format_address(addr)
    handler, sa_flags, restorer = fields
    handler_text = (xlat_style.named(handler, flags.SIGNAL_HANDLERS[handler])
                    if handler in flags.SIGNAL_HANDLERS else f"{handler:#x}")
    text = (f"{{sa_handler={handler_text}, sa_mask={sigset_text(mask, NSIG)}, "
            f"sa_flags={xlat_style.flag_set(sa_flags, flags.SA_FLAGS)}")
    if sa_flags & flags.SA_RESTORER:
        text += f", sa_restorer={restorer:#x}"
    return text + "}"


def format_timespec(mem: MemReader, addr: int, field: int) -> str:
    """`{tv_sec=1, tv_nsec=500}` with `field`-byte members (4 for i386's old timespec)."""
    if not addr:
        return "NULL"
    values = read_words(mem, addr, field, 2)
    if values is None:
        return format_address(addr)
    seconds, nanos = (_signed(v, field * 8) for v in values)
    return f"{{tv_sec={seconds}, tv_nsec={nanos}}}"


def format_timeval(mem: MemReader, addr: int, word: int) -> str:
    if not addr:
        return "NULL"
    values = read_words(mem, addr, word, 2)
    if values is None:
        return format_address(addr)
    seconds, micros = (_signed(v, word * 8) for v in values)
    return f"{{tv_sec={seconds}, tv_usec={micros}}}"


def _rlim_value(value: int, infinity: int, infinity_name: str) -> str:
    if value == infinity:
        return infinity_name
    if value > 1024 and value % 1024 == 0:
        return f"{value // 1024}*1024"
    return str(value)


def format_rlimit(mem: MemReader, addr: int, field: int) -> str:
    """`{rlim_cur=8192*1024, rlim_max=RLIM64_INFINITY}`; `field` is 8 for rlimit64."""
    if not addr:
        return "NULL"
    values = read_words(mem, addr, field, 2)
    if values is None:
        return format_address(addr)
    infinity, name = ((RLIM64_INFINITY, "RLIM64_INFINITY") if field == 8
                      else (RLIM32_INFINITY, "RLIM_INFINITY"))
    current, maximum = (_rlim_value(v, infinity, name) for v in values)
    return f"{{rlim_cur={current}, rlim_max={maximum}}}"


def _unabbreviated(mem) -> bool:
    """strace -v: structures in full (unabbreviated.py)."""
    return getattr(mem, "verbose", False)


def format_utsname(mem: MemReader, addr: int) -> str:
    """strace abbreviates struct utsname to its first two fields."""
    if _unabbreviated(mem):
        return format_utsname_full(mem, addr)
    data = mem.read(addr, 2 * UTS_FIELD) if addr else None
    if data is None or len(data) < 2 * UTS_FIELD:
        return format_address(addr)
    sysname, nodename = (data[i:i + UTS_FIELD].split(b"\0", 1)[0] for i in (0, UTS_FIELD))
    return f"{{sysname={quote(sysname)}, nodename={quote(nodename)}, ...}}"


def wait_status_text(status: int) -> str:
    """The <sys/wait.h> macros that describe `status`, as strace writes them."""
    low = status & 0x7f
    if status & 0xffff == 0xffff:
        return "{WIFCONTINUED(s)}"
    if status & 0xff == 0x7f:
        return f"{{WIFSTOPPED(s) && WSTOPSIG(s) == {signal_name((status >> 8) & 0xff)}}}"
    if low:
        core = " && WCOREDUMP(s)" if status & 0x80 else ""
        return f"{{WIFSIGNALED(s) && WTERMSIG(s) == {signal_name(low)}{core}}}"
    return f"{{WIFEXITED(s) && WEXITSTATUS(s) == {(status >> 8) & 0xff}}}"


def format_wait_status(mem: MemReader, addr: int) -> str:
    status = read_word(mem, addr, 4) if addr else None
    return format_address(addr) if status is None else f"[{wait_status_text(status)}]"


def _stat_summary(mode: int, size: int, rdev: int) -> str:
    """`{st_mode=S_IFREG|0644, st_size=1221, ...}`; devices show st_rdev instead of st_size."""
    kind = mode & flags.S_IFMT
    detail = (f"st_rdev={makedev(rdev)}" if kind in (0o020000, 0o060000)
              else f"st_size={size}")
    return f"{{st_mode={xlat_style.file_mode(mode)}, {detail}, ...}}"


# (mode offset, mode size, rdev offset, rdev size, size offset, size size) per layout.
_STAT_LAYOUTS = {
    "stat64": (24, 4, 40, 8, 48, 8),     # x86-64 struct stat
    "stat32": (8, 2, 16, 4, 20, 4),      # i386 old struct stat (16-bit st_mode)
    "stat64_i386": (16, 4, 32, 8, 44, 8),  # i386 struct stat64 (packed: st_size at 44)
}


def format_stat(mem: MemReader, addr: int, layout: str) -> str:
    if _unabbreviated(mem):
        return format_stat_full(mem, addr, layout)
    mode_at, mode_len, rdev_at, rdev_len, size_at, size_len = _STAT_LAYOUTS[layout]
    data = mem.read(addr, size_at + size_len) if addr else None
    if data is None or len(data) < size_at + size_len:
        return format_address(addr)

    def field(offset: int, length: int) -> int:
        return int.from_bytes(data[offset:offset + length], "little")

    size = _signed(field(size_at, size_len), size_len * 8)
    return _stat_summary(field(mode_at, mode_len), size, field(rdev_at, rdev_len))


def format_winsize(mem: MemReader, addr: int) -> str:
    values = read_words(mem, addr, 2, 4) if addr else None
    if values is None:
        return format_address(addr)
    row, col, xpixel, ypixel = values
    return f"{{ws_row={row}, ws_col={col}, ws_xpixel={xpixel}, ws_ypixel={ypixel}}}"


def format_iovec(mem: MemReader, addr: int, count: int, word: int,
                 data_size: int | None) -> str:
    """`[{iov_base="hi", iov_len=2}, ...]`; for readv `data_size` (the return value) limits
    how much of each buffer holds data; for writev it is None: each buffer is shown whole."""
    if count <= 0:
        return "[]" if count == 0 else format_address(addr)
    shown_count = min(count, max_elements(mem))       # -s N elements, then "..."
    entries = read_words(mem, addr, word, 2 * shown_count) if addr else None
    if entries is None:
        return format_address(addr)
    items, remaining = [], data_size
    for base, length in zip(entries[0::2], entries[1::2]):
        shown = length if remaining is None else min(length, remaining)
        if remaining is not None:
            remaining -= shown
        items.append(f"{{iov_base={format_buffer(mem, base, shown)}, iov_len={length}}}")
    return "[" + ", ".join(items + (["..."] if count > shown_count else [])) + "]"


# struct user_desc (arch/x86/include/uapi/asm/ldt.h): three u32, then seven bit fields.
_USER_DESC_BITS = (("seg_32bit", 0, 1), ("contents", 1, 2), ("read_exec_only", 3, 1),
                   ("limit_in_pages", 4, 1), ("seg_not_present", 5, 1), ("useable", 6, 1))


def format_user_desc(mem: MemReader, addr: int) -> str:
    """set_thread_area's descriptor as the caller passed it: `{entry_number=-1, base_addr=...,
    limit=0xfffff, seg_32bit=1, contents=0, ...}`."""
    values = read_words(mem, addr, 4, 4) if addr else None
    if values is None:
        return format_address(addr)
    entry, base, limit, bits = values
    fields = [f"entry_number={_signed(entry, 32)}", f"base_addr={base:#x}", f"limit={limit:#x}"]
    fields += [f"{name}={bits >> shift & ((1 << width) - 1)}" for name, shift, width in _USER_DESC_BITS]
    return "{" + ", ".join(fields) + "}"


def user_desc_entry(mem: MemReader, addr: int) -> int | None:
    """The entry number the kernel wrote back (set_thread_area's `= 0 (entry_number=12)`)."""
    value = read_word(mem, addr, 4) if addr else None
    return None if value is None else _signed(value, 32)


# Where the blocked-signal mask the sigreturn restores lies, from the stack pointer at the call
# (the restorer's `ret` popped pretcode): x86-64 rt_sigframe's uc.uc_sigmask after uc_flags,
# uc_link, stack_t (24) and sigcontext (256); i386's rt_sigframe_ia32 puts sig, pinfo, puc and
# a 128-byte siginfo before its ucontext (20 + sigcontext 88); i386 sigreturn's sigframe has
# sigcontext.oldmask 80 bytes in (the restorer popped sig too).
SIGRETURN_MASK_OFFSET = {("rt_sigreturn", 64): 8 + 8 + 24 + 256,
                         ("rt_sigreturn", 32): 12 + 128 + 20 + 88,
                         ("sigreturn", 32): 80}


def format_sigreturn_mask(mem: MemReader, addr: int, size: int) -> str:
    """`{mask=[INT]}`: the mask the frame restores (strace's sigreturn decoder)."""
    mask = read_word(mem, addr, size)
    return f"{{mask={format_address(addr) if mask is None else sigset_text(mask, size * 8)}}}"


def format_statx(mem: MemReader, addr: int) -> str:
    """struct statx (uapi/linux/stat.h) abbreviated as strace prints it without -v."""
    if _unabbreviated(mem):
        return format_statx_full(mem, addr)
    data = mem.read(addr, 48)
    if data is None or len(data) < 48:
        return format_address(addr)
    mask = int.from_bytes(data[0:4], "little")
    attributes = int.from_bytes(data[8:16], "little")
    mode = int.from_bytes(data[28:30], "little")
    size = int.from_bytes(data[40:48], "little")
    return (f"{{stx_mask={xlat_style.flag_set(mask, flags.STATX_MASK)}, "
            f"stx_attributes={xlat_style.flag_set(attributes, flags.STATX_ATTRIBUTES)}, "
            f"stx_mode={xlat_style.file_mode(mode)}, stx_size={size}, ...}}")


def format_itimerval(mem: MemReader, addr: int, word: int) -> str:
    """`{it_interval={tv_sec=0, tv_usec=0}, it_value={tv_sec=0, tv_usec=10000}}`."""
    if not addr:
        return "NULL"
    values = read_words(mem, addr, word, 4)
    if values is None:
        return format_address(addr)
    s1, u1, s2, u2 = (_signed(v, word * 8) for v in values)
    return (f"{{it_interval={{tv_sec={s1}, tv_usec={u1}}}, "
            f"it_value={{tv_sec={s2}, tv_usec={u2}}}}}")


def format_dirents(mem: MemReader, addr: int, size: int, reclen_at: int,
                   word: int | None = None) -> str:
    """`0x... /* 8 entries */`: strace counts the records by their d_reclen without -v; `word`
    is getdents' long size (None: getdents64's records)."""
    if _unabbreviated(mem):
        return format_dirents_full(mem, addr, size, word)
    data = mem.read(addr, size) if size > 0 else b""
    if data is None:
        return format_address(addr)
    count, offset = 0, 0
    while offset + reclen_at + 2 <= len(data):
        reclen = int.from_bytes(data[offset + reclen_at:offset + reclen_at + 2], "little")
        if reclen == 0:
            break
        count, offset = count + 1, offset + reclen
    return f"{addr:#x} /* {count} entries */"


def format_cpu_set(mem: MemReader, addr: int, size: int) -> str:
    """`[0 1]`: the CPUs set in the first `size` bytes of a cpu_set_t."""
    data = mem.read(addr, size) if size > 0 else b""
    if data is None:
        return format_address(addr)
    mask = int.from_bytes(data, "little")
    return "[" + " ".join(str(cpu) for cpu in range(len(data) * 8) if mask >> cpu & 1) + "]"


def format_id_list(mem: MemReader, addr: int, count: int, size: int) -> str:
    """getgroups' and setgroups' `[0, 4]`: `count` ids of `size` bytes (2 for i386's old
    16-bit calls); the address when there is nothing to read (a size of 0, or failure)."""
    if count <= 0 or not addr:
        return "[]" if count == 0 and addr else format_address(addr) if addr else "NULL"
    most = max_elements(mem)
    values = read_words(mem, addr, size, min(count, most))
    if values is None:
        return format_address(addr)
    more = ["..."] if count > most else []
    return "[" + ", ".join([str(v) for v in values] + more) + "]"


UTIME_NOW, UTIME_OMIT = (1 << 30) - 1, (1 << 30) - 2


def format_utimens(mem: MemReader, addr: int, field: int) -> str:
    """utimensat's two times (print_timespec_t_utime): `[UTIME_NOW, UTIME_OMIT]`, or each
    `{tv_sec=1, tv_nsec=0} /* 1970-01-01T00:00:01+0000 */`; `field` 4 for i386's old timespec."""
    if not addr:
        return "NULL"
    values = read_words(mem, addr, field, 4)
    if values is None:
        return format_address(addr)
    times = []
    for seconds, nanos in ((values[0], values[1]), (values[2], values[3])):
        seconds, nanos = _signed(seconds, field * 8), _signed(nanos, field * 8)
        if nanos in (UTIME_NOW, UTIME_OMIT):
            times.append("UTIME_NOW" if nanos == UTIME_NOW else "UTIME_OMIT")
        else:
            times.append(f"{{tv_sec={seconds}, tv_nsec={nanos}}}{time_comment(seconds, nanos)}")
    return "[" + ", ".join(times) + "]"
