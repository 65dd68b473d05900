"""C helpers of the Machine, compiled at first use (one shared object per source, cached).

Some of Unicorn's hooks run for every translated block; a Python callback there costs several
times a guest's own time on call-heavy code (docs/unicorn.md). The few such hooks
the Machine needs are written in C here and registered with uclib by address. The build uses the
host's C compiler (`$CC`, `cc`, `gcc`) or the Zig toolchain trapline already depends on (`python
-m ziglang cc`), and keeps the result under the user's cache directory, named by the source's
sha256, so a source change rebuilds and concurrent builds cannot see a half-written file.
Where nothing can build it, `load` returns None with the reason in `unavailable[name]`, and the
caller takes its slower pure-Unicorn path: results are the same, only the cost differs.
"""
from __future__ import annotations

import ctypes
import os
import platform
import sys
from pathlib import Path

SOURCES = Path(__file__).resolve().parent
_loaded: dict[str, ctypes.CDLL] = {}
unavailable: dict[str, str] = {}


def load(name: str) -> ctypes.CDLL | None:
    """The compiled `name`.c of this folder, built on first use; None when it cannot be."""
    if name in _loaded:
        return _loaded[name]
    if name in unavailable:
        return None
    source = SOURCES / f"{name}.c"
    digest = _sha256(source.read_bytes()).hexdigest()[:16]
    try:                    # (a cache folder that cannot be made is a reason like any other)
        target = _cache_dir() / f"{name}-{digest}-{platform.machine()}.so"
        if not target.exists():
            _build(source, target)
        _loaded[name] = ctypes.CDLL(str(target))
    except OSError as error:            # _build's failures, every compiler's reason in one
        unavailable[name] = f"cannot build {source.name}: {error}".splitlines()[0]
        return None
    return _loaded[name]


def _sha256(data: bytes):
    """CPython's own SHA-256 (the digest hashlib gives, without loading OpenSSL's libcrypto:
    a part of every trace's start-up, bench/startup.py; kernel_model/digest.py does the same)."""
    try:
        from _sha256 import sha256
    except ImportError:         # another Python, or 3.12's _sha2: hashlib's is the same digest
        from hashlib import sha256
    return sha256(data)


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    path = Path(base) / "trapline" / "native"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _compilers() -> list[list[str]]:
    import shutil
    found = [[c] for c in (os.environ.get("CC"), "cc", "gcc") if c and shutil.which(c)]
    return found + [[sys.executable, "-m", "ziglang", "cc"]]


def _build(source: Path, target: Path) -> None:
    """Compile into a temporary file next to `target`, then rename it into place (atomic).
    Only a first run builds: subprocess and tempfile are imported here, not by every start."""
    import subprocess
    import tempfile
    errors = []
    for compiler in _compilers():
        fd, partial = tempfile.mkstemp(dir=target.parent, suffix=".so.part")
        os.close(fd)
        try:
            done = subprocess.run([*compiler, "-O2", "-shared", "-fPIC", "-o", partial, str(source)],
                                  capture_output=True, timeout=300)
            if done.returncode == 0:
                os.replace(partial, target)
                return
            errors.append(f"{compiler[-1]}: {done.stderr.decode(errors='replace').strip()[:200]}")
        except (OSError, subprocess.SubprocessError) as error:
            errors.append(f"{compiler[-1]}: {error}")
        finally:
            if os.path.exists(partial):
                os.unlink(partial)
    raise OSError("; ".join(errors) or "no C compiler")
