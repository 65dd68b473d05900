"""The teaching package (issue 29), samples/toy_relocator: `trapline check` finds step 1's
bug (a naive copy of `call r/m` pushes the copy's return address) and shrinks it to `call
esp`/`call rsp`; with that fixed (step 2), it finds the next one (the operand read after the
push moved the stack pointer), shrunk to a layout of zeros but the stack; as its README says,
on both arches. Installed, its entry points name the steps."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
TOY = ROOT / "samples" / "toy_relocator"
SP = {"i386": "esp", "x86_64": "rsp"}


def check(strategy: str, arch: str, pythonpath=(TOY,)):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([*map(str, pythonpath), str(ROOT)]))
    return subprocess.run([sys.executable, "-m", "trapline", "check", "--strategy", strategy,
                           "--arch", arch, "--no-host"], capture_output=True, text=True,
                          cwd=ROOT, env=env, timeout=900)


def relocation_report(out: str, strategy: str, arch: str) -> list[str]:
    header = f"FAILED: {strategy} relocation {arch}\n"
    assert header in out, out
    return out.split(header, 1)[1].split("\n\n")[0].splitlines()


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_step_one_is_caught_pushing_the_copys_return_address(arch):
    strategy = "toy_relocator.step1_copy:NaiveCopy"
    done = check(strategy, arch)
    assert done.returncode == 1, done.stdout + done.stderr
    report = relocation_report(done.stdout, strategy, arch)
    assert report[0].startswith(f"relocation of `call {SP[arch]}` [ff d4] (call_indirect, near) "
                                f"by {strategy}: memory at ")
    assert report[4] == "  copy (copy):" and report[5].endswith(f"call {SP[arch]}")
    assert f"--strategy {strategy}" in (ROOT / "samples/toy_relocator/README.md").read_text()


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_step_two_fixes_the_call_and_is_caught_reading_the_moved_stack(arch):
    strategy = "toy_relocator.step2_calls:CallsFixed"
    done = check(strategy, arch)
    assert done.returncode == 1, done.stdout + done.stderr
    report = relocation_report(done.stdout, strategy, arch)
    word = 4 if arch == "i386" else 8
    # shrunk: the stack at 0x14000 (4 pages), its pointer at the top, every other register 0
    assert report[0] == (f"relocation of `call {SP[arch]}` [ff d4] (call_indirect, near) by "
                         f"{strategy}: exit: in place fault (fetch 0x16000, protection) at 0x16000 "
                         f"/ relocated fault (fetch {0x16000 - word:#x}, protection) at "
                         f"{0x16000 - word:#x}")
    original = int(report[3].split(":")[0], 16)
    assert report[4] == "  copy (call):" and report[5].endswith(f"push {original + 2:#x}")
    assert report[6].endswith(f"jmp {SP[arch]}")
    assert f"--strategy {strategy}" in (ROOT / "samples/toy_relocator/README.md").read_text()


def test_installed_its_entry_points_name_the_steps(tmp_path):
    source, target = tmp_path / "toy_relocator", tmp_path / "site"
    # built from a copy: a build leaves build/ and an egg-info (whose entry points would then
    # be found on the PYTHONPATH of the tests above) in the folder it builds
    shutil.copytree(TOY, source, ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                    "--no-build-isolation", "--target", str(target), str(source)], check=True,
                   capture_output=True, timeout=600, cwd=tmp_path)
    done = check("toy-copy", "i386", pythonpath=(target,))
    assert done.returncode == 1, done.stdout + done.stderr
    assert relocation_report(done.stdout, "toy-copy", "i386")[0].startswith(
        "relocation of `call esp` [ff d4] (call_indirect, near) by toy-copy: memory at ")
