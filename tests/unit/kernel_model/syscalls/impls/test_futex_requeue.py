"""FUTEX_CMP_REQUEUE's counts are ints (kernel/futex/requeue.c futex_requeue): a negative
nr_wake or nr_requeue (val2, in the timeout's slot) is EINVAL before the word is compared
(LTP futex_cmp_requeue02: both succeeded)."""
import pytest

from kernel_model import errno as E

from ...call_script import run_script

FUTEX_CMP_REQUEUE_PRIVATE = 4 | 128


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_negative_counts_are_einval(arch):
    results, _, _ = run_script(arch, [
        ("futex", "BUF", FUTEX_CMP_REQUEUE_PRIVATE, 1, 0xFFFFFFFF, "BUF+8", 0),   # nr_requeue -1
        ("futex", "BUF", FUTEX_CMP_REQUEUE_PRIVATE, -1, 1, "BUF+8", 0),           # nr_wake -1
        ("futex", "BUF", FUTEX_CMP_REQUEUE_PRIVATE, 1, 1, "BUF+8", 1),            # word is 0
        ("futex", "BUF", FUTEX_CMP_REQUEUE_PRIVATE, 1, 1, "BUF+8", 0)])           # nobody waits
    assert results == [-E.EINVAL, -E.EINVAL, -E.EAGAIN, 0]
