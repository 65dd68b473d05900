"""Where strace's lines go and what stands before them (strace 6.x, strace.c printleader()).

  * stderr (no -o): `[pid  101] ` before the lines while more than one process is traced (-f);
  * -o FILE with -f: `101   ` (the pid, left-aligned in 5 columns, and a space) on every line;
  * -ff -o PREFIX: one file PREFIX.PID per process and no pid on its lines;
then the time stamp of -t/-tt/-ttt or -r, on the sandbox's virtual clock (kernel_model/time/
clock.py: a fixed epoch, one microsecond per system call, and the time a guest sleeps). The
syscall's `= ` is at column 40 counting all of that (strace's default -a 40).
"""
import time

from kernel_model.debug.abi import EPOCH_NS

from ..errors import UsageError
from ..host_output import guarded
from .options import StraceOptions

ALIGN_COLUMN = 40


class StraceOutput:
    def __init__(self, stream, options: StraceOptions):
        self.options = options
        self._stream = stream
        self._files: dict[int, object] = {}
        self._last_ns: int | None = None
        if options.output is not None and options.follow_forks < 2:
            self._stream = _open(options.output)

    def _stream_for(self, pid: int):
        if self.options.output is None or self.options.follow_forks < 2:
            return self._stream
        stream = self._files.get(pid)
        if stream is None:
            stream = self._files[pid] = _open(f"{self.options.output}.{pid}")
        return stream

    def pid_prefix(self, pid: int, several: bool) -> str:
        if not self.options.follow_forks:
            return ""
        if self.options.output is not None:
            return "" if self.options.follow_forks > 1 else f"{pid:<5} "
        return f"[pid {pid:5}] " if several else ""

    def time_prefix(self, now_ns: int | None) -> str:
        """-t: HH:MM:SS, -tt: with microseconds, -ttt: seconds since the epoch; -r: the time
        since the previous line. Wall times are the virtual clock's (EPOCH_NS onwards)."""
        options = self.options
        if now_ns is None or not (options.timestamps or options.relative):
            return ""
        if options.relative:
            since = now_ns - (self._last_ns if self._last_ns is not None else now_ns)
            self._last_ns = now_ns
            return f"{since // 10**9:6}.{since % 10**9 // 1000:06} "
        wall = EPOCH_NS + now_ns
        seconds, micros = divmod(wall // 1000, 10**6)
        if options.timestamps >= 3:
            return f"{seconds}.{micros:06} "
        clock = time.strftime("%H:%M:%S", time.gmtime(seconds))
        return f"{clock}.{micros:06} " if options.timestamps == 2 else f"{clock} "

    def write(self, pid: int, prefix: str, line: str) -> None:
        stream = self._stream_for(pid)
        stream.write(prefix + line + "\n")
        stream.flush()

    def write_raw(self, text: str) -> None:
        self._stream.write(text)
        self._stream.flush()

    def close(self) -> None:
        for stream in self._files.values():
            stream.close()
        if self.options.output is not None and self.options.follow_forks < 2:
            self._stream.close()


def _open(path: str):
    """strace's -o file (closed by close()); one that cannot be made is the user's error, said
    as strace says it. It may be a pipe (-o /dev/stdout | head -1): a write that finds its
    reader gone ends the run as stderr's would (host_output.py: SIGPIPE, no traceback)."""
    try:
        return guarded(open(path, "w"))          # noqa: SIM115
    except OSError as error:
        raise UsageError(f"Can't fopen '{path}': {error.strerror}") from None


def aligned(head: str, result: str, column_used: int, column: int = ALIGN_COLUMN) -> str:
    """`head) ` padded so that `= ` starts at `column` (-a), counting what precedes the line."""
    start = head + " "
    pad = column - column_used - len(start)
    return start + " " * max(pad, 0) + "= " + result
