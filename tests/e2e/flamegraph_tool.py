"""Brendan Gregg's flamegraph.pl for the profiler's SVG test (issue 18: the flame graph is drawn
by a well-kept tool, not by hand). Debian ships it with Devel::NYTProf
(libdevel-nytprof-perl: /usr/share/perl5/Devel/NYTProf/flamegraph.pl); the test setup fetches
that package with `apt-get download`, as it fetches the other Debian packages, and extracts the
script into tests/e2e/.cache/flamegraph/ (perl runs it: Debian and CI hosts have perl)."""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from tests.e2e.debian_bins import DebianBinsError, refresh_lists_unless_available, run

PACKAGE = "libdevel-nytprof-perl"
SCRIPT = "usr/share/perl5/Devel/NYTProf/flamegraph.pl"
CACHE = Path(__file__).resolve().parent / ".cache" / "flamegraph"


def ensure_flamegraph() -> Path:
    script = CACHE / "root" / SCRIPT
    if script.is_file():
        return script
    if shutil.which("apt-get") is None or shutil.which("dpkg-deb") is None:
        raise DebianBinsError(f"cannot fetch {PACKAGE}: apt-get and dpkg-deb are needed")
    refresh_lists_unless_available([PACKAGE])
    with tempfile.TemporaryDirectory(prefix="trapline-flamegraph-") as tmp:
        os.chmod(tmp, 0o777)                  # apt-get download runs as _apt
        run(["apt-get", "download", "-q", PACKAGE], cwd=tmp)
        debs = sorted(Path(tmp).glob(f"{PACKAGE}_*.deb"))
        if len(debs) != 1:
            raise DebianBinsError(f"expected one {PACKAGE} package, found {debs}")
        if CACHE.exists():
            shutil.rmtree(CACHE)
        (CACHE / "root").mkdir(parents=True)
        run(["dpkg-deb", "-x", str(debs[0]), str(CACHE / "root")])
    if not script.is_file():
        raise DebianBinsError(f"{PACKAGE} did not contain /{SCRIPT}")
    return script
