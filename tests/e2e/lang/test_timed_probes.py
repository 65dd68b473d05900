"""interval: and profile: probes on the virtual clock: the guest's instructions are its time
(one nanosecond each), so a period's ticks divide the run's instructions, whatever the host."""
import pytest

from tests.e2e.lang.lang_run import ARCHES, maps, sample, trace

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("arch", ARCHES)
def test_ticks_divide_the_run(arch):
    argv = [sample(arch, "fib"), "20"]
    done = trace("-e", "interval:us:10 { @fine = count(); } interval:us:100 { @coarse = count(); } "
                 "profile:hz:100000 { @p[comm] = count(); } "
                 "END { @end = nsecs; }", "--", *argv)
    found = {name: int(next(iter(values.values()))) for name, values in maps(done.stdout).items()}
    assert found["@coarse"] >= 3
    # ten ticks of 10 us for every tick of 100 us, and what the last partial period holds
    assert 10 * found["@coarse"] <= found["@fine"] < 10 * (found["@coarse"] + 1)
    assert found["@p"] == found["@fine"]                 # 100 000 Hz: every 10 us
    assert found["@end"] >= found["@fine"] * 10_000
    assert trace("-e", "interval:us:10 { @fine = count(); }", "--", *argv).stdout.endswith(
        f"@fine: {found['@fine']}\n")
