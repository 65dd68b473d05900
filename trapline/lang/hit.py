"""One probe hit as the language sees it: who hit, where, the arguments, the return value;
the built-in variables (pid, tid, comm, arg0..., retval, func, probe, nsecs...) read from it.

It reaches the guest only through the door (kernel_model/debug/), as bpftrace reaches Linux
through its helpers: the thread's name (bpf_get_current_comm: DebugInterface.thread_name),
registers and memory (cpu views and peeks), the virtual clock (virtual_time_ns). One Hit is
made per hit and shared by every consumer the probe belongs to; what it reads it reads on
first use, so a consumer that reads nothing of the guest pays nothing for it.
"""
from instrumenter.probes.context import argument_words

# bpftrace reads at most BPFTRACE_MAX_STRLEN (64) bytes a string, its NUL included.
STRING_LIMIT = 63
READER_WORDS = 6                # the x86-64 argument registers; i386 reads as many stack words


class Hit:
    __slots__ = ("debug", "thread", "process", "address", "retval", "probe", "func",
                 "syscall", "syscall_args", "_args", "_comm", "context", "_reader")

    def __init__(self, debug, thread, address: int, probe: str, func: str, *,
                 retval: int | None = None, syscall: str = "", syscall_args: tuple | None = None,
                 context=None, reader=None):
        self.debug, self.thread = debug, thread
        self.process = thread.process if thread is not None else None
        self.address, self.retval, self.probe, self.func = address, retval, probe, func
        self.syscall, self.syscall_args = syscall, syscall_args
        self._args = syscall_args
        self._comm = None
        self.context = context          # a uprobe's ProbeContext: its CPU view is at hand
        # a uprobe's reader of its first READER_WORDS argument words, made once per space
        # (instrumenter/probes/context.py argument_fetcher): building the register batch on
        # every hit was a good part of a printf's cost (bench/lang_rate.py)
        self._reader = reader

    # ---- built-in variables (BEGIN, END and timed probes may have no thread: 0 and "") ------
    @property
    def pid(self) -> int:
        return self.process.pid if self.process is not None else 0

    @property
    def tid(self) -> int:
        return self.thread.tid if self.thread is not None else 0

    @property
    def comm(self) -> str:
        if self._comm is None:
            self._comm = "" if self.thread is None else \
                self.debug.thread_name(self.thread).decode(errors="replace")
        return self._comm

    @property
    def nsecs(self) -> int:
        """The run's virtual time (kernel_model/debug/timer.py): instructions are charged one
        nanosecond each, sleeps their virtual length; never the host's clock."""
        return self.debug.virtual_time_ns()

    def arg(self, index: int) -> int:
        args = self._args
        if args is None or len(args) <= index:
            if self._reader is not None and index < READER_WORDS:
                args = self._args = self._reader()
                return args[index]
            count = max(index + 1, 6)
            args = self._args = self.context.args(count) if self.context is not None else \
                argument_words(self.debug.cpu(self.process), count)
        return args[index]

    def named_arg(self, field: str) -> int | None:
        """args.FIELD of a sys_enter_ hit (None: the call has no such argument); args.ret of a
        sys_exit_ hit."""
        if field == "id" and self.probe.startswith("tracepoint:raw_syscalls:"):
            from .syscall_args import number_of
            return number_of(self.syscall, self.debug.syscall_abi(self.thread))
        if self.retval is not None:
            return self.retval if field == "ret" else None
        from .syscall_args import index_of
        index = index_of(self.syscall, self.debug.syscall_abi(self.thread), field)
        return None if index is None else self.syscall_args[index]

    # ---- the guest's memory -----------------------------------------------------------------
    def string(self, address: int, limit: int = STRING_LIMIT) -> str:
        data = self.debug.peek_string(self.process, address, limit)
        return "" if data is None else data.decode(errors="replace")

    def bytes_at(self, address: int, size: int) -> bytes:
        data = self.debug.peek(self.process, address, size)
        return b"" if data is None else data

    def word(self, address: int) -> int:
        size = self.debug.arch(self.process).bits // 8
        return int.from_bytes(self.bytes_at(address, size) or bytes(size), "little")

    def symbol(self, address: int) -> str:
        return self.debug.symbolize(self.process, address)
