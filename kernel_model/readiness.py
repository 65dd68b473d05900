"""Readiness of open files for poll/select, and what a waiter sleeps on.

Event bits are Linux's (include/uapi/asm-generic/poll.h), identical on i386 and x86-64.
A file that can make a caller wait (a pipe end, a socket, an eventfd) offers `poll_events()`
and a `wait_channel`, the object its state changes are announced on through `Kernel.wakeup(channel)`. Every other
file never blocks: Linux's vfs_poll() gives DEFAULT_POLLMASK to files without a ->poll
operation (regular files, our stdio streams), i.e. always readable and writable.
"""
POLLIN = 0x001
POLLPRI = 0x002
POLLOUT = 0x004
POLLERR = 0x008
POLLHUP = 0x010
POLLNVAL = 0x020
POLLRDNORM = 0x040
POLLRDBAND = 0x080
POLLWRNORM = 0x100
POLLWRBAND = 0x200

DEFAULT_POLLMASK = POLLIN | POLLOUT | POLLRDNORM | POLLWRNORM      # include/linux/poll.h

# fs/select.c: which poll bits make an fd count as ready in each of select()'s three sets.
SELECT_READ = POLLRDNORM | POLLRDBAND | POLLIN | POLLHUP | POLLERR
SELECT_WRITE = POLLWRBAND | POLLWRNORM | POLLOUT | POLLERR
SELECT_EXCEPT = POLLPRI


def file_events(file) -> int:
    """The poll bits that hold for `file` now."""
    poll_events = getattr(file, "poll_events", None)
    return poll_events() if poll_events is not None else DEFAULT_POLLMASK


def wait_channel(file):
    """The channel a waiter for `file` sleeps on, or None when the file never blocks."""
    return getattr(file, "wait_channel", None)


def wait_channels(file) -> list:
    """Every channel a change of `file`'s readiness is announced on: its one wait channel, or
    for a file whose readiness is that of other files (an epoll instance, whose poll reports
    its ready list: fs/eventpoll.c ep_eventpoll_poll) theirs, given by `wait_channels()`."""
    several = getattr(file, "wait_channels", None)
    if several is not None:
        return several()
    channel = wait_channel(file)
    return [] if channel is None else [channel]
