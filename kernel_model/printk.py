"""The console's log levels (kernel/printk/printk.c console_printk[], /proc/sys/kernel/printk).

Four ints: the console's level (messages more urgent than it reach the console), the default
level of a message without one, the lowest the console's may be set to, and its default at
boot; Linux's defaults without `quiet` (CONSOLE_LOGLEVEL_DEFAULT 7, MESSAGE_LOGLEVEL_DEFAULT 4,
CONSOLE_LOGLEVEL_MIN 1). The sandbox has no console to print to, so they only change as
syslog(2) and the sysctl say: SYSLOG_ACTION_CONSOLE_LEVEL sets the console's (raised to the
minimum), CONSOLE_OFF keeps it aside and lowers it to the minimum, CONSOLE_ON brings it back.
The sysctl (kernel/printk/sysctl.c: proc_dointvec over the four) shows them tab-separated and
takes up to four integers, the first ones changed in order; any other text is EINVAL.
"""
from . import errno as E
from .errno import GuestErrno

LOGLEVEL_DEFAULT = -1           # saved_console_loglevel when nothing is kept aside


class ConsoleLevels:
    def __init__(self):
        self.levels = [7, 4, 1, 7]      # console, default message, minimum console, default console
        self.saved = LOGLEVEL_DEFAULT

    def text(self) -> bytes:
        return b"\t".join(b"%d" % level for level in self.levels)

    def write(self, position: int, data: bytes) -> int:
        """proc_dointvec: blank-separated decimal integers, at most four."""
        words = data.split()
        if not words or len(words) > len(self.levels):
            raise GuestErrno(E.EINVAL)
        try:
            values = [int(word, 10) for word in words]
        except ValueError:
            raise GuestErrno(E.EINVAL) from None
        self.levels[:len(values)] = values
        return len(data)

    def set_console(self, level: int) -> None:
        """SYSLOG_ACTION_CONSOLE_LEVEL (1 to 8, checked by the caller)."""
        self.levels[0] = max(level, self.levels[2])
        self.saved = LOGLEVEL_DEFAULT

    def console_off(self) -> None:
        if self.saved == LOGLEVEL_DEFAULT:
            self.saved, self.levels[0] = self.levels[0], self.levels[2]

    def console_on(self) -> None:
        if self.saved != LOGLEVEL_DEFAULT:
            self.levels[0], self.saved = self.saved, LOGLEVEL_DEFAULT
