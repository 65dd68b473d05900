"""Shared fixtures of the file-system tests: a fake process and a small rootfs folder."""
from dataclasses import dataclass, field
from pathlib import Path

from kernel_model.errno import GuestErrno
from kernel_model.fs import FileSystem, O_CREAT, O_DIRECTORY, O_RDONLY, O_TRUNC, O_WRONLY


@dataclass
class FakeProcess:
    """A ProcessView with fixed answers chosen by each test."""
    pid: int = 42
    exe: bytes = b"/bin/prog"
    maps: bytes = b"00400000-00401000 r-xp 00000000 08:01 12 /bin/prog\n"
    fds: dict = field(default_factory=lambda: {0: b"pipe:[1]", 1: b"pipe:[2]", 2: b"pipe:[3]"})
    directory: bytes = b"/"

    def exe_path(self) -> bytes:
        return self.exe

    def maps_text(self) -> bytes:
        return self.maps

    def fd_targets(self) -> dict[int, bytes]:
        return dict(self.fds)

    def cwd(self) -> bytes:
        return self.directory


PROC = FakeProcess()


def make_rootfs(root: Path) -> Path:
    """bin/prog, etc/passwd, a nested dir tree and a few symlinks (absolute, relative, loops)."""
    root.mkdir(exist_ok=True)
    (root / "bin").mkdir()
    (root / "bin" / "prog").write_bytes(b"\x7fELF-prog")
    (root / "bin" / "prog").chmod(0o755)
    (root / "etc").mkdir()
    (root / "etc" / "passwd").write_bytes(b"root:x:0:0:root:/root:/bin/sh\n")
    (root / "etc" / "passwd").chmod(0o644)
    (root / "usr" / "lib").mkdir(parents=True)
    (root / "usr" / "lib" / "libc.so").write_bytes(b"libc" * 1000)
    (root / "lib").symlink_to("usr/lib")                 # relative
    (root / "etc" / "abs").symlink_to("/etc/passwd")     # absolute: from the guest root
    (root / "etc" / "up").symlink_to("../../../..")      # climbs above the root
    (root / "loop1").symlink_to("loop2")
    (root / "loop2").symlink_to("loop1")
    return root


def errno_of(call, *args, **kwargs) -> int | None:
    try:
        call(*args, **kwargs)
    except GuestErrno as exc:
        return exc.errno
    return None


def read_file(fs: FileSystem, path: bytes, cwd: bytes = b"/") -> bytes:
    f = fs.open(path, O_RDONLY, 0, cwd, PROC)
    try:
        return f.read(1 << 20)
    finally:
        f.close()


def write_file(fs: FileSystem, path: bytes, data: bytes, cwd: bytes = b"/") -> None:
    f = fs.open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644, cwd, PROC)
    f.write(data)
    f.close()


def names(fs: FileSystem, path: bytes) -> list[bytes]:
    f = fs.open(path, O_RDONLY | O_DIRECTORY, 0, b"/", PROC)
    return [e.name for e in f.getdents()]

