"""Where the shipped sample binaries are: found the same way from a source checkout and from an
installed wheel, never by a path only the build machine had.

The wheel carries samples/bin/ARCH/* as data files (setup.cfg [options.data_files]), which pip
installs under the environment's data prefix: PREFIX/share/trapline/samples/ARCH/NAME. A source
checkout has them at samples/bin/ARCH/NAME beside the package. The user handlers `trapline
explain` loads (samples/handlers/ARCH/*) ship the same way, to PREFIX/share/trapline/handlers. TRAPLINE_SAMPLES names another
folder with the same layout (a build of one's own).
"""
import os
import sys
import sysconfig
from pathlib import Path

ARCHES = ("i386", "x86_64")
ENV = "TRAPLINE_SAMPLES"


def candidate_dirs() -> list[Path]:
    """The folders searched, in order: $TRAPLINE_SAMPLES, the checkout's samples/bin, the
    environment's share/trapline/samples (the wheel's data files), and sys.prefix's."""
    dirs = []
    if os.environ.get(ENV):
        dirs.append(Path(os.environ[ENV]))
    dirs.append(Path(__file__).resolve().parents[1] / "samples" / "bin")
    return dirs + _data_dirs("samples")


def _data_dirs(name: str) -> list[Path]:
    return [Path(prefix) / "share" / "trapline" / name
            for prefix in (sysconfig.get_path("data"), sys.prefix, sys.base_prefix)]


def handlers_dir() -> Path:
    """The folder of the shipped user handlers (ARCH/limit_n.s...): the checkout's
    samples/handlers, else the wheel's share/trapline/handlers; a LookupError names both."""
    dirs = [Path(__file__).resolve().parents[1] / "samples" / "handlers", *_data_dirs("handlers")]
    for folder in dirs:
        if (folder / "x86_64" / "limit_n.s").is_file():
            return folder
    raise LookupError("no shipped handlers found (searched " + ", ".join(map(str, dirs)) + ")")


def arch_dir(arch: str) -> Path:
    """The folder of ARCH's samples (a sample run as ./NAME from it); a LookupError as
    sample_path's."""
    return sample_path("hello", arch).parent


def samples_dir() -> Path | None:
    """The first candidate that holds the samples (an x86_64/hello in it)."""
    for folder in candidate_dirs():
        if (folder / "x86_64" / "hello").is_file():
            return folder
    return None


def sample_path(name: str, arch: str) -> Path:
    """The sample NAME for ARCH; a LookupError names what was searched."""
    if arch not in ARCHES:
        raise LookupError(f"arch {arch!r}: expected one of {', '.join(ARCHES)}")
    folder = samples_dir()
    if folder is None:
        raise LookupError("no shipped samples found (searched "
                          + ", ".join(str(d) for d in candidate_dirs()) + f"; set {ENV})")
    path = folder / arch / name
    if not path.is_file():
        have = sorted(p.name for p in (folder / arch).iterdir() if p.is_file())
        raise LookupError(f"no sample {name!r} for {arch} in {folder} (have: {', '.join(have)})")
    return path
