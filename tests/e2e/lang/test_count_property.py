"""count() of a probe equals the hits `trapline trace -p PROBE -c` reports for it, whatever the
program, the function, the strategy and the predicate (the language adds no hit and loses
none); a predicate's map counts exactly the hits whose arguments satisfy it."""
import io

import pytest
from hypothesis import given, settings, strategies as st

from instrumenter.probes.definitions import Probe
from trapline.lang.runner import make_consumers, run
from trapline.probespec import parse_probe_spec
from trapline.sandbox import Sandbox
from tests.e2e.lang.lang_run import ARCHES, maps, sample

pytestmark = pytest.mark.e2e

# functions the samples call (fib recursively; callchain's chain; alloc's helpers; compute's mix)
SITES = [("fib", ["12"], "fib"), ("callchain", [], "leaf"), ("callchain", [], "middle"),
         ("callchain", [], "spiral"), ("alloc", [], "fnv1a"), ("alloc", [], "small_size"),
         ("compute", [], "mix"), ("compute", [], "main")]
STRATEGIES = ["auto", "jump", "trampoline", "emulate", "singlestep"]


def _hits_of_c(spec: str, argv: list[str], strategy: str) -> int:
    """What trace -c counts: the Sandbox's per-probe hits."""
    result = Sandbox(probes=[Probe(parse_probe_spec(spec))], strategy=strategy,
                     capture=True, sink=lambda records: None).run(argv)
    return result.hits[spec]


def _lang_maps(program: str, argv: list[str], strategy: str) -> dict:
    out = io.StringIO()
    consumers = make_consumers([(program, "-e")], out, lambda line: None)
    run(consumers, argv, {"capture": True}, strategy=strategy)
    return maps(out.getvalue())


@settings(max_examples=10, deadline=None)
@given(st.sampled_from(ARCHES), st.sampled_from(SITES), st.sampled_from(STRATEGIES),
       st.integers(min_value=0, max_value=12))
def test_count_equals_the_hits_of_trace_c(arch, site, strategy, bound):
    name, args, function = site
    argv = [sample(arch, name), *args]
    spec = f"uprobe:{argv[0]}:{function}"
    hits = _hits_of_c(spec, argv, strategy)
    assert hits > 0                                     # every site is called: never vacuous
    found = _lang_maps(f"{spec} {{ @all = count(); @by[arg0 & 15] = count(); }} "
                       f"{spec} /(arg0 & 15) < {bound}/ {{ @below = count(); }}", argv, strategy)
    assert int(found["@all"][""]) == hits
    by = {int(k): int(v) for k, v in found["@by"].items()}
    assert sum(by.values()) == hits
    below = sum(v for k, v in by.items() if k < bound)
    assert int(found.get("@below", {}).get("", "0")) == below
