"""Starting the first program by a name without a slash: looked up in PATH as glibc's execvp
does it (posix/execvpe.c, __execvpe), in the guest's view of the file system.

Each PATH element in order, an empty one meaning the current directory (the name itself,
relative to the cwd); the first candidate that execs is the program. A candidate that is not
there (ENOENT, ENOTDIR, ESTALE, ENODEV, ETIMEDOUT) sends the search on; one that cannot be
executed (EACCES: a directory, no x bit) too, but the failure is then EACCES, not ENOENT; any
other error (ENOEXEC, ELOOP...) ends the search with it. No PATH in the environment means
glibc's default search path, confstr(_CS_PATH).
"""
from . import errno as E
from .errno import GuestErrno

DEFAULT_PATH = b"/bin:/usr/bin"        # glibc's _CS_PATH (sysdeps/unix/confstr.h)
KEEP_SEARCHING = frozenset({E.ENOENT, E.ENOTDIR, E.ESTALE, E.ENODEV, E.ETIMEDOUT})


def needs_search(name: bytes) -> bool:
    """A name with a slash is a path and is executed as it is (execvp: no search)."""
    return b"/" not in name and name != b""


def search_path(envp: list[bytes]) -> bytes:
    """The environment's PATH, or the default one when it has none."""
    for entry in envp:
        if entry.startswith(b"PATH="):
            return entry[len(b"PATH="):]
    return DEFAULT_PATH


def candidates(name: bytes, path: bytes) -> list[bytes]:
    return [directory + b"/" + name if directory else name for directory in path.split(b":")]


def load_from_path(load, name: bytes, path: bytes):
    """`load(candidate)` for each candidate in turn until one succeeds: (its path, its result).
    Raises the GuestErrno execvp would return."""
    denied = False
    for candidate in candidates(name, path):
        try:
            return candidate, load(candidate)
        except GuestErrno as error:
            if error.errno == E.EACCES:
                denied = True
            elif error.errno not in KEEP_SEARCHING:
                raise
    shown = path.decode(errors="replace")
    if denied:
        raise GuestErrno(E.EACCES, f"no executable one in PATH {shown}")
    raise GuestErrno(E.ENOENT, f"not found in PATH {shown}")
