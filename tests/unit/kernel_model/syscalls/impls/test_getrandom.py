"""getrandom copies up to the first byte the guest cannot write (get_random_bytes_user): the
bytes before it are the result, none is EFAULT; flags as Linux checks them."""
from kernel_model import errno as E
from tests.property.syscall_fuzz_guest import DATA_SIZE, DATA_VADDR

from ...call_script import run_script

END = DATA_VADDR + DATA_SIZE          # the data segment's end: unmapped beyond
GRND_NONBLOCK, GRND_RANDOM, GRND_INSECURE = 1, 2, 4


def test_a_buffer_running_into_unmapped_memory_gets_what_fits(arch):
    results, _, kernel = run_script(arch, [
        ("getrandom", END - 10, 100, 0), ("getrandom", END, 4, 0), ("getrandom", "RO", 4, 0),
        ("getrandom", "BUF", 0, 0), ("getrandom", "BUF", 8, GRND_NONBLOCK | GRND_RANDOM),
        ("getrandom", "BUF", 8, GRND_RANDOM | GRND_INSECURE), ("getrandom", "BUF", 8, 8)])
    assert results == [10, -E.EFAULT, -E.EFAULT, 0, 8, -E.EINVAL, -E.EINVAL]
    assert kernel._random_offset == 18        # failed calls draw nothing from the stream
