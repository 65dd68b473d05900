"""The recorded trace's records besides the samples (issue 18, US 7,823,129's trace phases): a
timer interrupt record before every sample, thread-switch records as the CPU goes from thread
to thread (four threads scheduled by quanta), and a module-unload record when an object's first
page is unmapped (dlclose). `trapline report` reads them back into the same report."""
import json
from pathlib import Path
from types import SimpleNamespace

from kernel_model.images import ImageMap, MappedImage, record_unmapping
from trapline import Sandbox
from trapline.profile.record import read_trace
from trapline.profile.report import heading
from trapline.profile.session import run_profiled

SAMPLES = Path(__file__).resolve().parents[3] / "samples" / "bin"


def test_switches_and_interrupts_are_recorded(tmp_path):
    trace = tmp_path / "threads.trace"
    run = run_profiled(Sandbox(quantum=20_000), [str(SAMPLES / "x86_64" / "threads")],
                       interval=5_000, record=str(trace))
    records = [json.loads(line) for line in trace.read_text().splitlines()]
    interrupts = [r for r in records if r["t"] == "interrupt"]
    samples = [r for r in records if r["t"] == "sample"]
    assert len(interrupts) == len(samples) == run.profile.total > 10
    for interrupt, sample in zip(interrupts, samples):
        assert interrupt["vector"] == 0x20 and (interrupt["ts"], interrupt["tid"]) == (sample["ts"], sample["tid"])
    switches = [r for r in records if r["t"] == "switch"]
    real = [s for s in switches if s["prev_tid"]]
    assert len({s["tid"] for s in real}) >= 4 and all(s["tid"] != s["prev_tid"] for s in real)
    assert [s["ts"] for s in switches] == sorted(s["ts"] for s in switches)
    assert run.profile.switches == len(real) and f"{len(real)} thread switches" in heading(run.profile)
    again = read_trace(str(trace))
    assert (again.switches, again.interrupts) == (run.profile.switches, run.profile.interrupts)
    assert heading(again) == heading(run.profile)


class _Door:
    def __init__(self):
        self.gone = []

    def image_unmapped(self, process, mapped):
        self.gone.append(mapped.path)


def test_unmapping_an_objects_first_page_announces_its_unload():
    door = _Door()
    kernel = SimpleNamespace(debug=door)
    images = ImageMap([MappedImage(b"/lib/a.so", 0x10000, 0x20000),
                       MappedImage(b"/lib/b.so", 0x30000, 0x40000)])
    proc = SimpleNamespace(space=SimpleNamespace(images=images))
    record_unmapping(kernel, proc, 0x18000, 0x19000)      # inside a.so, not its first page
    assert door.gone == [] and len(images) == 2
    record_unmapping(kernel, proc, 0x30000, 0x40000)
    assert door.gone == [b"/lib/b.so"] and [m.path for m in images] == [b"/lib/a.so"]
