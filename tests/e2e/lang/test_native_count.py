"""A site whose every block only counts (`@x = count();`) counts in the guest (native.py: the
jump strategy's native count, no trap and no Python per hit), with the same result as the
Python path; a site that one block does more on stays on the Python path for all."""
import io

import pytest

from trapline.lang.runner import make_consumers, run
from tests.e2e.lang.lang_run import ARCHES, maps, native_breakpoint_hits, sample

pytestmark = pytest.mark.e2e


def _run(programs: list[str], argv: list[str], strategy: str):
    out = io.StringIO()
    consumers = make_consumers([(p, "-e") for p in programs], out, lambda line: None)
    outcome = run(consumers, argv, {"capture": True}, strategy=strategy)
    return maps(out.getvalue()), outcome.native_sites


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("strategy", ["jump", "auto", "trampoline"])
def test_count_only_sites_count_in_the_guest(arch, strategy):
    argv = [sample(arch, "fib"), "10"]
    spec = f"uprobe:{argv[0]}:fib"
    found, natives = _run([f"{spec} {{ @a = count(); }}", f"{spec} {{ @b = count(); }}"], argv, strategy)
    assert natives == [f"uprobe:{argv[0]}:fib"]
    assert found == {"@a": {"": "177"}, "@b": {"": "177"}}
    assert native_breakpoint_hits(argv, "fib") == 177


@pytest.mark.parametrize("arch", ARCHES)
def test_a_site_with_more_to_do_stays_on_the_python_path(arch):
    argv = [sample(arch, "fib"), "10"]
    spec = f"uprobe:{argv[0]}:fib"
    found, natives = _run([f"{spec} {{ @a = count(); }}", f"{spec} /arg0 == 1/ {{ @ones = count(); }}"],
                          argv, "jump")
    assert natives == []
    assert found == {"@a": {"": "177"}, "@ones": {"": "55"}}
