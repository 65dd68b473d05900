"""strace as a client of the debug interface (kernel_model/debug/), the one door between a
tool and the kernel: it sees what ptrace shows a real strace — syscall entry and exit with the
call's name, ABI and arguments, signal deliveries, forks and exits — and reads the caller's
memory through the door, never the kernel's internals.

Formatting lives in trapline/strace/syscall_line.py; this module decides *when* a line is
printed: at the syscall's exit, or — for calls that do not return to their caller (exit,
exit_group: no exit event; a successful execve: the caller's memory is gone at its exit) — from
what was read at its entry.
"""
from . import syscall_line
from .options import StraceOptions
from .siginfo import format_siginfo
from .sockets import LENGTH_ARGUMENTS, demultiplexed
from . import sysv_ipc
from .output import StraceOutput, aligned
from .restart_codes import restart_errno
from .strings import format_execve_call
from .structs import SIGRETURN_MASK_OFFSET
from .summary import NUMBERS, Summary
from .unfinished import UNFINISHED, InProgress, entry_part, resumed_part
from .xlat_style import styled

NO_RETURN_CALLS = frozenset({"exit", "exit_group"})
# Calls whose arguments strace prints as they were at the entry (the kernel rewrites them, or
# the stack they lie on is gone by the exit); their result is added at the exit.
ENTRY_TIME_CALLS = frozenset({"execve", "set_thread_area", "rt_sigreturn", "sigreturn"})

ABI_BITS = {"i386": 32, "x86_64": 64}
PERSONALITY_NAMES = {"x86_64": "64 bit", "i386": "32 bit"}     # strace's personality_names
_styled = styled(lambda client: client.options.xlat)     # -X for every line a handler prints


class _Memory:
    """One traced process's memory as the formatter reads it (strings.MemReader): through the
    door's peeks, None where it is not readable; with -s and -x's settings."""
    __slots__ = ("_debug", "_process", "max_strlen", "hex_strings", "verbose", "decode_fds", "raw",
                 "entry_length")

    def __init__(self, debug, process, options: StraceOptions, name: str = ""):
        self._debug, self._process = debug, process
        self.max_strlen, self.hex_strings = options.max_strlen, options.hex_strings
        self.verbose = options.unabbreviated(name)     # -v, -e abbrev=
        self.raw = name in options.raw                  # -e raw=
        self.decode_fds = options.decode_fds
        self.entry_length = None        # a value-result length as it was at the entry

    def fd_path(self, fd: int):
        return self._debug.fd_path(self._process, fd)

    def fd_socket(self, fd: int):
        return self._debug.fd_socket(self._process, fd)

    def fd_device(self, fd: int):
        return self._debug.fd_device(self._process, fd)

    def cwd_path(self):
        return self._debug.cwd_path(self._process)

    def read(self, addr: int, n: int):
        return self._debug.peek(self._process, addr, n)

    def read_cstr(self, addr: int, limit: int):
        return self._debug.peek_string(self._process, addr, limit)


class StraceClient:
    """Like strace: only the first process unless `follow_forks` (-f); then lines carry a
    pid prefix (output.py) while more than one traced process is alive."""

    def __init__(self, debug, out, *, follow_forks: bool = False,
                 options: StraceOptions | None = None):
        self.debug = debug
        self.options = options if options is not None else StraceOptions(
            follow_forks=int(follow_forks))
        self.follow_forks = bool(self.options.follow_forks)
        self.output = StraceOutput(out, self.options)
        self.summary = Summary(self.options.sort_by) if self.options.summary else None
        self._stack_lines = self.options.stacks(debug) if self.options.stacks else None
        self.root_pid: int | None = None
        self.live: set[int] = set()
        self._entry_heads: dict[int, str] = {}                 # tid -> the call as entered
        self._entered_ns: dict[int, int] = {}                  # tid -> virtual time at entry
        self._in_progress: dict[int, InProgress] = {}          # tid -> the call it is in
        self._last_args: dict[int, object] = {}                # tid -> its last call's arguments
        self._last_names: dict[int, str] = {}                  # tid -> its last call, as strace names it
        self._resuming: dict[int, str] = {}                    # tid -> what restart_syscall resumes
        self._entry_lengths: dict[int, int | None] = {}        # tid -> its socklen at the entry
        self._personalities: dict[int, str] = {}               # tid -> its last call's ABI
        self._numbers: dict[int, int] = {}                     # tid -> its last call's number (-n)
        self._in_call: set[int] = set()                        # tids between entry and exit
        self._after_call: dict[int, list[tuple]] = {}          # tid -> signals held back
        # Several tasks' lines in one stream: a call in progress is split (unfinished.py).
        self._interleaves = bool(self.options.follow_forks) and not (
            self.options.output is not None and self.options.follow_forks > 1)

    def attach(self) -> "StraceClient":
        """Follow the kernel's processes from now on: its events and every syscall stop."""
        self.debug.subscribe(self)
        self.debug.syscall_watchers.append(self)
        return self

    def stops_tracee(self, thread) -> bool:
        """strace stops every task it traces at each syscall's entry and exit (PTRACE_SYSCALL);
        on the sandbox's one CPU the others run meanwhile (kernel_model/process/sched.py)."""
        return self._traced(thread.process, thread.tid)

    def _traced(self, proc, tid: int | None) -> bool:
        """Without -f strace follows only the first task (not its threads or children)."""
        if self.root_pid is None:
            self.root_pid = proc.pid
            self.live.add(proc.pid)
        return self.follow_forks or (proc.pid == self.root_pid and tid in (None, self.root_pid))

    def _prefix(self, proc, tid: int | None) -> str:
        several = len(self.live) > 1 or len(self.debug.threads(proc)) > 1
        prefix = self.output.pid_prefix(tid or proc.pid, several)
        prefix += self.output.time_prefix(self._now())
        if self.options.syscall_numbers:        # -n: after the time (strace.c printleader)
            number = self._numbers.get(tid or proc.pid)
            prefix += "[????] " if number is None else f"[{number:4}] "
        return prefix

    def _now(self) -> int | None:
        if not (self.options.timestamps or self.options.relative or self.options.durations):
            return None
        return self.debug.virtual_time_ns()

    def _emit(self, proc, line: str, tid: int | None = None) -> None:
        """A line that is not a syscall's (signals, exits)."""
        if not self._traced(proc, tid) or self.options.summary == 1:
            return
        self._leave_unfinished(tid or proc.pid)
        self.output.write(tid or proc.pid, self._prefix(proc, tid), line)

    def _leave_unfinished(self, tid: int) -> None:
        """Before a line of `tid`, the other tasks' calls in progress show what they had at
        their entry, `<unfinished ...>` (strace prints that part at the entry itself)."""
        if not self._interleaves or len(self._in_progress) < 2 and tid in self._in_progress:
            return
        for other, call in self._in_progress.items():
            if other == tid or call.shown or not self._shows_call(call.thread, call.name):
                continue
            call.shown = True
            texts, entered = self._texts(call.thread, call.name, call.args)
            proc = call.thread.process
            self.output.write(other, self._prefix(proc, other),
                              entry_part(call.name, texts, entered) + UNFINISHED)

    def _shows_call(self, thread, name: str) -> bool:
        return (self._traced(thread.process, thread.tid) and self.options.traces(name)
                and self.options.summary != 1)

    def _texts(self, thread, name: str, args, result: int = 0) -> tuple[list[str], int]:
        if name == "restart_syscall":
            return [self._resumed_call(thread.tid)], 1
        bits = ABI_BITS[self.debug.syscall_abi(thread)]
        texts, _, _ = syscall_line.format_parts(
            name, args, result, _Memory(self.debug, thread.process, self.options, name), bits)
        return texts, syscall_line.entry_arguments(name, bits, len(texts), args)

    def _emit_call(self, proc, tid: int, name: str, head: str, result: str,
                   failed: bool | None, resumed: str | None = None, thread=None,
                   in_call: bool = True, dump=None) -> None:
        """A syscall's line: `= ` at column 40; failed None: no result to speak of (`= ?`);
        `resumed`: the line's `<... NAME resumed>...)` form, if its start was printed."""
        call = self._in_progress.pop(tid, None)
        if not self._traced(proc, tid) or not self.options.traces(name):
            return
        timed = self.summary is not None or self.options.durations
        duration = self._duration(tid) if timed else 0
        if self.summary is not None:
            if failed is not None:                  # (strace counts at the exit stop)
                self.summary.add(name, failed, duration, self._personalities.get(tid, "x86_64"))
            if self.options.summary == 1:
                return
        # a call with no return (exit_group's `= ?`, a call its process's death ended) is
        # strace's "unfinished" (strace(1) -e status=); "unavailable" is a return strace could
        # not fetch, which the door always can
        status = "unfinished" if failed is None else ("failed" if failed else "successful")
        if status not in self.options.statuses:
            return
        self._leave_unfinished(tid)
        if call is not None and call.shown and resumed is not None:
            head = resumed
        prefix = self._prefix(proc, tid)
        line = aligned(head, result, len(prefix), self.options.column)
        if self.options.durations and failed is not None:
            line += f" <{_seconds(duration)}>"
        self.output.write(tid, prefix, line)
        for row in dump() if dump is not None else ():
            self.output.write(tid, "", row)
        if self._stack_lines is not None and thread is not None:
            for frame in self._stack_lines(thread, in_call):      # -k
                self.output.write(tid, "", frame)

    def _duration(self, tid: int) -> int:
        entered = self._entered_ns.pop(tid, None)
        if entered is None:
            return 0
        return max(self.debug.virtual_time_ns() - entered, 0)

    def _call(self, thread, name: str, args, result: int) -> tuple[str, str, bool]:
        bits = ABI_BITS[self.debug.syscall_abi(thread)]
        mem = _Memory(self.debug, thread.process, self.options, name)
        if self._entry_lengths:
            mem.entry_length = self._entry_lengths.get(thread.tid)
        head, text, failed = syscall_line.format_call(name, args, result, mem, bits)
        if name == "restart_syscall":
            head = f"restart_syscall({self._resumed_call(thread.tid)})"
        return head, text, failed

    def _resumed_call(self, tid: int) -> str:
        """restart_syscall's argument as strace shows it: the call it resumes."""
        return f"<... resuming interrupted {self._resuming.get(tid, '?')} ...>"

    # ---- the program the tool starts (strace's own execve of it) -----------------------------
    @_styled
    def started(self, proc, path: bytes, argv: list[bytes], env: list[bytes]) -> None:
        """strace prints the execve it makes itself to start the program; the sandbox starts it
        the same way (kernel_model/process/spawn.py), and tells the tool what it ran. The
        environment's address is the new image's envp array on its initial stack (the psABI's
        argc, argv[], NULL, envp[]). Its program runs ptraced, by strace's child's PTRACE_TRACEME
        (-f: with TRACECLONE, TRACEFORK and TRACEVFORK): kernel_model/debug/ptrace_links.py."""
        self.debug.ptrace_attach(proc, follow_threads=self.follow_forks, follow_forks=self.follow_forks)
        threads = self.debug.threads(proc)
        envp = 0
        if threads:
            arch = self.debug.arch(proc)
            envp = self.debug.read_register(threads[0], arch.sp) + arch.word * (len(argv) + 2)
        head = format_execve_call(path, argv, envp, env, self.options.max_strlen,
                                  self.options.unabbreviated("execve"), self.options.hex_strings)
        self._entered_ns.pop(proc.pid, None)
        self._personalities[proc.pid] = "x86_64"     # (made by strace's 64-bit child)
        self._numbers[proc.pid] = NUMBERS["x86_64"]["execve"]
        self._emit_call(proc, proc.pid, "execve", head, "0", False,
                        thread=threads[0] if threads else None, in_call=False)

    @_styled
    def finish(self) -> None:
        """The end of the run: -c's table, then the files closed."""
        if self.summary is not None:
            self.output.write_raw(self.summary.table())
        self.output.close()

    # ---- process events ---------------------------------------------------------------------
    @_styled
    def fork(self, parent, child) -> None:
        if self.follow_forks:
            self.live.add(child.pid)

    @_styled
    def vfork(self, parent, child) -> None:
        self.fork(parent, child)

    @_styled
    def exit(self, proc, status: int) -> None:
        """The wait status word: `exited with N` or `killed by SIG` (wait(2)'s WIFSIGNALED)."""
        signal = status & 0x7F
        for thread in self.debug.threads(proc):
            self._in_progress.pop(thread.tid, None)      # a call it died in ends with it
            self._signals_after_call(thread.tid)
        if signal:
            self._emit(proc, syscall_line.format_killed(signal, bool(status & 0x80)))
        elif not self.options.quiets("exit"):        # -qq: a death by signal is still shown
            self._emit(proc, syscall_line.format_exit((status >> 8) & 0xFF))
        self.live.discard(proc.pid)

    @_styled
    def signal(self, proc, thread, sig: int, info: dict | None = None) -> None:
        """A signal-delivery line, as strace prints it for a handled, an ignored or a fatal
        signal (`thread` None: it kills; a death with no delivered siginfo has no line)."""
        if info is None or (self.options.signals is not None and sig not in self.options.signals):
            return
        bits = self._bits(proc, thread) if "raw" in info else 64       # a sender's own bytes
        line = f"--- {syscall_line.signal_name(sig)} {format_siginfo(sig, info, bits)} ---"
        self._emit(proc, line, thread.tid if thread else None)

    def _bits(self, proc, thread) -> int:
        """The tracee's ABI's width (of any of its threads when the signal kills it)."""
        anyone = thread or next(iter(self.debug.threads(proc)), None)
        return ABI_BITS[self.debug.syscall_abi(anyone)] if anyone is not None else 64

    @_styled
    def signal_ignored(self, proc, thread, sig: int, info: dict | None = None) -> None:
        """An ignored signal taken while its thread is inside a call (the kernel re-runs a
        sleeping call the signal woke): Linux's tracee completes the call first and meets the
        signal on its way out, so strace prints the call's line, then the signal's (ptrace's
        syscall-exit-stop comes before the signal-delivery-stop)."""
        if thread is not None and thread.tid in self._in_call:
            self._after_call.setdefault(thread.tid, []).append((proc, thread, sig, info))
            return
        self.signal(proc, thread, sig, info)

    @_styled
    def signal_stopped(self, proc, thread, sig: int, info: dict | None = None) -> None:
        """The signal-delivery-stop's line, then the group-stop's (strace.c print_stopped)."""
        self.signal(proc, thread, sig, info)
        if self.options.signals is None or sig in self.options.signals:
            self._emit(proc, f"--- stopped by {syscall_line.signal_name(sig)} ---", thread.tid)

    def _signals_after_call(self, tid: int) -> None:
        self._in_call.discard(tid)
        if self._after_call:
            for held in self._after_call.pop(tid, ()):
                self.signal(*held)

    # ---- syscall stops ----------------------------------------------------------------------
    def _as_called(self, thread, name: str, args):
        """i386's socketcall(call, args) and ipc(call, ...) as the call they stand for, with
        that call's own arguments (strace's decode_socket_subcall, decode_ipc_subcall): -e
        trace= names, <unfinished ...> and <... NAME resumed> lines, value-result lengths and
        -c count it by that name."""
        if name == "ipc":
            return sysv_ipc.demultiplexed(name, args, ABI_BITS[self.debug.syscall_abi(thread)])
        if name != "socketcall":
            return name, args
        bits = ABI_BITS[self.debug.syscall_abi(thread)]
        return demultiplexed(name, args, _Memory(self.debug, thread.process, self.options), bits)

    @_styled
    def syscall_entry(self, thread, name: str, args) -> None:
        """What must be read from the caller's memory before the call runs."""
        original = name                         # (-n shows socketcall's and ipc's own number)
        name, args = self._as_called(thread, name, args)
        abi = self.debug.syscall_abi(thread)
        if self.options.syscall_numbers:
            self._numbers[thread.tid] = NUMBERS[abi].get(original)
        if self._personalities.get(thread.tid, abi) != abi:
            self._personality_changed(thread, abi)
        self._personalities[thread.tid] = abi
        if name == "restart_syscall":        # (strace remembers the call it interrupted)
            self._resuming[thread.tid] = self._last_names.get(thread.tid, "?")
        else:
            self._last_args[thread.tid] = args
        self._last_names[thread.tid] = name
        if name not in NO_RETURN_CALLS:
            self._in_call.add(thread.tid)
        length_at = LENGTH_ARGUMENTS.get(name)
        if length_at is not None and length_at < len(args) and args[length_at]:
            raw = self.debug.peek(thread.process, args[length_at], 4)
            self._entry_lengths[thread.tid] = int.from_bytes(raw, "little") if raw else None
        if self._interleaves and name not in NO_RETURN_CALLS:
            known = self._in_progress.get(thread.tid)
            if known is None or known.name != name:     # (a sleeping call entered again: the same)
                self._in_progress[thread.tid] = InProgress(thread, name, args)
        if self.options.durations or self.summary is not None:
            self._entered_ns.setdefault(thread.tid, self.debug.virtual_time_ns())
        if name in NO_RETURN_CALLS:
            head, _, _ = self._call(thread, name, args, 0)
            self._entered_ns.pop(thread.tid, None)
            self._emit_call(thread.process, thread.tid, name, head, "?", None, thread=thread,
                            in_call=False)      # (-k: strace shows its entry stop's IP)
        elif name in ENTRY_TIME_CALLS or (name == "close" and self.options.decode_fds):
            # (close: -y's path is the descriptor's before the call)
            head, _, _ = self._call(thread, name, self._entry_args(thread, name, args), 0)
            self._entry_heads[thread.tid] = head

    def _personality_changed(self, thread, abi: str) -> None:
        """strace's `[ Process PID=N runs in 32 bit mode. ]` when a task's calls change ABI
        (syscall.c get_scno: an i386 program after the 64-bit execve that started it)."""
        if not self.options.quiets("personality") and self.options.summary != 1:
            self._emit(thread.process, f"[ Process PID={thread.tid} runs in "
                       f"{PERSONALITY_NAMES[abi]} mode. ]", thread.tid)

    def _entry_args(self, thread, name: str, args):
        """sigreturn's argument is its frame: strace reads the mask the frame restores at the
        stack pointer (structs.SIGRETURN_MASK_OFFSET)."""
        offset = SIGRETURN_MASK_OFFSET.get((name, ABI_BITS[self.debug.syscall_abi(thread)]))
        if offset is None:
            return args
        return (self.debug.read_register(thread, self.debug.arch(thread.process).sp) + offset,)

    @_styled
    def syscall_exit(self, thread, name: str, args, result: int) -> None:
        name, args = self._as_called(thread, name, args)
        entry_head = self._entry_heads.pop(thread.tid, None) if self._entry_heads else None
        head, text, failed = self._call(thread, name, args, result)
        if self._entry_lengths:
            self._entry_lengths.pop(thread.tid, None)
        if entry_head is not None and not (name == "execve" and failed):
            head = entry_head            # (a failed execve's memory is still the caller's)
        dump = None
        if self.options.dumped_reads is not None:          # -e read=, -e write=
            dump = self._dump(thread, name, args, -1 if failed else result)
        self._emit_call(thread.process, thread.tid, name, head, text, failed,
                        self._resumed(thread, name, args, result), thread, dump=dump)
        self._in_call.discard(thread.tid)
        if self._after_call:                # (the signals that came during it: none, mostly)
            self._signals_after_call(thread.tid)

    def _dump(self, thread, name: str, args, result: int):
        """-e read=/write='s rows, made only if the line is shown (io_dumps.py)."""
        from .io_dumps import dump_lines
        word = ABI_BITS[self.debug.syscall_abi(thread)] // 8
        mem = _Memory(self.debug, thread.process, self.options, name)
        mask = (1 << (8 * word)) - 1
        return lambda: dump_lines(mem, name, [a & mask for a in args], result, word,
                                  self.options.dumped_reads, self.options.dumped_writes)

    def _resumed(self, thread, name: str, args, result: int) -> str | None:
        call = self._in_progress.get(thread.tid)
        if call is None or not call.shown:
            return None
        texts, entered = self._texts(thread, name, args if name not in ENTRY_TIME_CALLS
                                     else self._entry_args(thread, name, args), result)
        return resumed_part(name, texts, entered)


    @_styled
    def syscall_interrupted(self, thread, name: str, errno: int | None = None) -> None:
        """A sleeping call a signal interrupts ends with strace's `= ? ERESTARTSYS` line,
        before the signal's; restarted, it shows again whole."""
        args = self._last_args.get(thread.tid, ())
        if name in ("socketcall", "ipc"):
            name = self._last_names.get(thread.tid, name)
        errno = -(errno or restart_errno(name, args))
        head, text, _ = self._call(thread, name, args, errno)
        self._emit_call(thread.process, thread.tid, name, head, text, True,
                        self._resumed(thread, name, args, errno))
        self._signals_after_call(thread.tid)


def _seconds(ns: int) -> str:
    return f"{ns // 10**9}.{ns % 10**9 // 1000:06}"
