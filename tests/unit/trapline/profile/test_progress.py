"""trapline/profile/progress.py: the status line of a long profile, on a terminal only."""
import io
from types import SimpleNamespace

from trapline.profile.progress import CLEAR, STEP, ProfileProgress


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_pipe_or_a_file_gets_no_status_line():
    assert ProfileProgress.for_terminal(io.StringIO(), "fib") is None


def test_the_line_is_rewritten_every_step_and_erased_at_the_end():
    out = Terminal()
    progress = ProfileProgress.for_terminal(out, "fib")
    for n in range(1, 2 * STEP + 1):
        progress.sample(SimpleNamespace(ts=n * 1000))
    progress.done()
    writes = out.getvalue().split(CLEAR)
    assert writes == ["", f"profiling fib: {STEP} samples, {STEP * 1000:,} guest instructions",
                      f"profiling fib: {2 * STEP} samples, {2 * STEP * 1000:,} guest instructions", ""]


def test_a_short_run_leaves_nothing_on_the_terminal():
    out = Terminal()
    progress = ProfileProgress.for_terminal(out, "fib")
    progress.sample(SimpleNamespace(ts=1000))
    progress.done()
    assert out.getvalue() == ""


def test_the_comparison_runs_are_announced_and_erased():
    """--compare-full's two more runs take no samples (the full one can take minutes on a
    dynamic program: every function of every library hooked): a phase line says what runs."""
    out = Terminal()
    progress = ProfileProgress.for_terminal(out, "sqlite3")
    progress.phase("comparing: the run with no tool, then with every function hooked")
    progress.done()
    assert out.getvalue().split(CLEAR) == [
        "", "sqlite3: comparing: the run with no tool, then with every function hooked", ""]


def test_tallies_move_the_line_when_they_pass_a_step():
    """--mode pc's histogram hands over tallies (n samples at once, their first tick's time):
    the line moves each time the count passes a multiple of STEP."""
    out = Terminal()
    progress = ProfileProgress.for_terminal(out, "fib")
    progress.tally(SimpleNamespace(ts=1000), STEP - 1)
    assert out.getvalue() == ""
    progress.tally(SimpleNamespace(ts=2000), 3)
    progress.tally(SimpleNamespace(ts=3000), 2 * STEP)
    progress.done()
    assert out.getvalue().split(CLEAR) == [
        "", f"profiling fib: {STEP + 2} samples, 2,000 guest instructions",
        f"profiling fib: {3 * STEP + 2} samples, 3,000 guest instructions", ""]
