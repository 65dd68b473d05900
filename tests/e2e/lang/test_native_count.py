"""A site whose every block only counts (`@x = count();`) counts in the guest (native.py: the
jump strategy's native count, no trap and no Python per hit), with the same result as the
Python path; a site that one block does more on stays on the Python path for all."""
import io

import pytest

from trapline.lang.runner import make_consumers, run
from tests.e2e.lang.lang_run import ARCHES, maps, native_breakpoint_hits, sample
from tests.quick_profile import alternates

pytestmark = pytest.mark.e2e


def _run(programs: list[str], argv: list[str], strategy: str):
    out = io.StringIO()
    consumers = make_consumers([(p, "-e") for p in programs], out, lambda line: None)
    outcome = run(consumers, argv, {"capture": True}, strategy=strategy)
    return maps(out.getvalue()), outcome.native_sites


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("strategy", ["jump", "auto", "trampoline"])
@alternates("arch")
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


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("strategy", ["jump", "trampoline"])
@alternates("arch")
def test_blocks_of_arguments_run_from_what_the_guest_stored(arch, strategy):
    """Predicates, keys and aggregations of argN only: the argument words are stored in the
    guest (native args) and the blocks run on them at collection, with the maps the Python
    path gives (forced here by a second consumer's block that reads comm on the same site)."""
    argv = [sample(arch, "fib"), "12"]
    spec = f"uprobe:{argv[0]}:fib"
    program = (f"{spec} /arg0 > 3 && arg0 % 2 == 0/ {{ @[arg0] = count(); @s = sum(arg0 * 2 - 1); "
               f"@h = hist(arg0 << 4); @l = lhist(arg0, 0, 12, 3); @m = max(arg0); @a = avg(arg0); }}")
    stored, sites = _run([program], argv, strategy)
    assert sites == [] and _stored_sites(program, argv, strategy) == [spec]
    python, _ = _run([program, f'{spec} {{ @c[comm] = count(); }}'], argv, strategy)
    del python["@c"]
    assert stored == python and stored["@m"] == {"": "12"}
    # fib(12) calls fib(k) F(13-k) times (F(1) = F(2) = 1): k = 4, 6, 8, 10, 12 pass the predicate
    assert stored["@"] == {"12": "1", "10": "2", "8": "5", "6": "13", "4": "34"}


def _stored_sites(program, argv, strategy):
    out = io.StringIO()
    consumers = make_consumers([(program, "-e")], out, lambda line: None)
    return run(consumers, argv, {"capture": True}, strategy=strategy).argument_sites
