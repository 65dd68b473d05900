"""`trapline explain --technique relocate` (trapline/explain/relocate.py): fib beside its copy,
the table both ways, and original return addresses on the stack, on both arches."""
import re

import pytest
from click.testing import CliRunner

from trapline.cli import main


@pytest.mark.e2e
@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_explain_relocate_shows_the_copy_the_map_and_the_return_pointers(arch):
    result = CliRunner().invoke(main, ["explain", "--technique", "relocate", "--arch", arch])
    assert result.exit_code == 0, result.output
    text = result.output
    assert "retargeted into the copy" in text and "the call is recorded" in text
    assert text.count("; call-out: the probes' Python actions") == 2     # fib and fib+1
    pairs = re.findall(r"relocated_of\((0x[0-9a-f]+)\) = (0x[0-9a-f]+);  original_of\((0x[0-9a-f]+)\)"
                       r" = \((0x[0-9a-f]+), exact\)", text)
    assert len(pairs) == 4 and all(o == back and r == at for o, r, at, back in pairs)
    returns = re.findall(r"\] = (0x[0-9a-f]+) <fib\+0x[0-9a-f]+> \(original\)", text)
    assert len(returns) == 2                                  # two frames of fib below the third
    assert "output 'fib(5) = 5'; hits 15 and 15" in text
