"""Finding and reading the program an execve names (Linux fs/exec.c and fs/binfmt_script.c).

The file must be a regular, executable file of the caller's view of the file system. A `#!`
script runs its interpreter with the script's path as an argument; the program returned
carries the argv it was built with. Nothing of the caller changes here: the image is built
in a new space (process/exec.py) and committed by the kernel only once it is complete.
"""
from .. import errno as E
from ..errno import GuestErrno
from .exec import build_program
from .exec_cache import read_through
from ..fsview import fs_view
from ..landlock.hooks import check_exec

MAX_INTERPRETER_DEPTH = 4     # Linux BINPRM_MAX_RECURSION: #! scripts running #! scripts
BINPRM_BUF_SIZE = 256         # the #! line must fit in the first 256 bytes
O_RDONLY = 0
S_IFMT, S_IFREG = 0o170000, 0o100000
X_OK = 1



def parse_shebang(data: bytes) -> tuple[bytes, bytes]:
    """`#!interpreter [one argument]` as Linux reads it: the rest of the line is one argument."""
    line = data[2:BINPRM_BUF_SIZE].split(b"\n", 1)[0].strip(b" \t")
    if not line:
        raise GuestErrno(E.ENOEXEC)
    interpreter, _, arg = line.replace(b"\t", b" ").partition(b" ")
    return interpreter, arg.strip(b" ")


def read_executable(kernel, proc, path: bytes) -> bytes:
    """The bytes of the regular, executable file at guest `path` (EACCES otherwise)."""
    return read_executable_and_stat(kernel, proc, path)[0]


def read_executable_and_stat(kernel, proc, path: bytes):
    """read_executable's bytes, and the file's StatResult (its set-id bits and owner)."""
    view = fs_view(proc)
    f = kernel.fs.open(path, O_RDONLY, 0, proc.cwd, view)
    try:
        st = f.stat()
        if (st.mode & S_IFMT) != S_IFREG:
            raise GuestErrno(E.EACCES)
        kernel.fs.access(path, proc.cwd, view, X_OK)
        check_exec(kernel.current if kernel.current in proc.threads else None, f.path)
        # A file exec read before and that has not changed since is not read again (exec_cache.py)
        return read_through(f.node, lambda: _read_whole(f, st.size)), st
    finally:
        f.close()


def _read_whole(f, size: int) -> bytes:
    """One read of the whole file (2 MB of busybox in 1 MB chunks joined cost a copy more
    every exec), then chunks only if the file grew meanwhile."""
    chunks = [f.read(size + 1)]
    while chunks[-1] and (chunk := f.read(1 << 20)):
        chunks.append(chunk)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def read_interpreter(kernel, proc, path: bytes) -> tuple[bytes, bytes]:
    """The bytes and resolved path of a dynamic program's interpreter (PT_INTERP), looked up in
    the caller's root as Linux's open_exec does: it must be an executable regular file too."""
    return read_executable(kernel, proc, path), kernel.fs.realpath(path, proc.cwd, fs_view(proc))


def load_program(kernel, proc, path: bytes, argv, envp, *, depth: int = 0,
                 execfn: bytes | None = None):
    """Read and build the program at guest `path` for `proc`. `execfn` is the path execve was
    given (a #! script's own path when its interpreter is loaded: fs/exec.c copies the filename
    once, before binfmt_script swaps the file)."""
    data, st = read_executable_and_stat(kernel, proc, path)
    if data.startswith(b"#!"):
        if depth >= MAX_INTERPRETER_DEPTH:
            raise GuestErrno(E.ELOOP)
        interpreter, arg = parse_shebang(data)
        new_argv = [interpreter] + ([arg] if arg else []) + [path] + list(argv[1:])
        return load_program(kernel, proc, interpreter, new_argv, envp, depth=depth + 1,
                            execfn=execfn or path)
    kernel.exec_count += 1
    config = kernel.config
    program = build_program(data, kernel.fs.realpath(path, proc.cwd, fs_view(proc)), argv, envp,
                            seed=config.seed, exec_count=kernel.exec_count,
                            memory_limit=config.memory_limit, pool=kernel.space_pool,
                            read_interpreter=lambda name: read_interpreter(kernel, proc, name),
                            execfn=execfn or path, clock=kernel.clock)
    program.argv = list(argv)
    program.file_stat = st          # a script's interpreter's: Linux ignores a script's set-id bits
    return program
