"""The console's log levels (kernel_model/printk.py): syslog's console actions and the
/proc/sys/kernel/printk sysctl."""
import pytest
from hypothesis import given, strategies as st

from kernel_model import errno as E
from kernel_model.errno import GuestErrno
from kernel_model.printk import ConsoleLevels


def test_defaults_and_the_console_actions():
    levels = ConsoleLevels()
    assert levels.text() == b"7\t4\t1\t7"
    levels.console_off()
    levels.console_off()                       # a second OFF keeps the first level aside
    assert levels.text() == b"1\t4\t1\t7"
    levels.console_on()
    assert levels.text() == b"7\t4\t1\t7"
    levels.console_off()
    levels.set_console(3)                      # CONSOLE_LEVEL forgets the level kept aside
    levels.console_on()
    assert levels.text() == b"3\t4\t1\t7"


def test_the_sysctl_takes_up_to_four_integers():
    levels = ConsoleLevels()
    assert levels.write(0, b"2 5\n") == 4
    assert levels.text() == b"2\t5\t1\t7"
    levels.write(0, b"4\t4\t1\t7")
    assert levels.text() == b"4\t4\t1\t7"
    for bad in (b"", b"x", b"1 2 3 4 5", b"1.5"):
        with pytest.raises(GuestErrno) as error:
            levels.write(0, bad)
        assert error.value.errno == E.EINVAL
    assert levels.text() == b"4\t4\t1\t7"


@given(st.lists(st.sampled_from(["off", "on", "set"]), max_size=12), st.integers(1, 8))
def test_the_console_level_never_falls_under_the_minimum(actions, level):
    levels = ConsoleLevels()
    levels.write(0, b"7 4 2 7")
    for action in actions:
        {"off": levels.console_off, "on": levels.console_on,
         "set": lambda: levels.set_console(level)}[action]()
        assert levels.levels[0] >= levels.levels[2]
