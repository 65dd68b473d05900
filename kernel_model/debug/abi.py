"""The plain data a tool decodes the kernel's ABI with, re-exported by the debug interface
(kernel_model/debug/) so that a tool such as strace imports it from the door and nothing else
of the kernel: flag and constant names (flags.py), errno names and messages (errno.py), signal
names (signals/), and each syscall's declared argument and return kinds (syscalls/). One table
per fact: the kernel itself uses the same tables.
"""
from .. import flags  # noqa: F401
from ..errno import ERRNOS, KERNEL_RESTART_ERRNOS  # noqa: F401
from ..signals import NSIG, SIGNAL_NAMES, short_signal_name, signal_name  # noqa: F401
from ..syscalls.kinds import Kind, Ret  # noqa: F401
from ..syscalls.registry import return_kind, signature  # noqa: F401  (each imports its call's module)
from ..syscalls.numbers_i386 import NUMBERS as I386_NUMBERS  # noqa: F401  (strace -e trace=)
from ..syscalls.numbers_x86_64 import NUMBERS as X86_64_NUMBERS  # noqa: F401
from ..time.clock import EPOCH_NS  # noqa: F401  (strace -t: the virtual clock's wall time)
