"""main of Debian's stripped programs as explain finds it at attach (trapline/explain/
stripped_main.py), on both arches: the file address found before ld.so runs is where glibc's
__libc_start_main's first argument points when the program runs (a probe there reads it, a
probe at the found address fires at it), and `explain -p uprobe:ls:main` on the host's /bin/ls
explains that site."""
import json

import pytest
from click.testing import CliRunner

from instrumenter.probes.definitions import Probe
from trapline.explain import explain
from trapline.explain.stripped_main import has_main, main_in_file
from trapline.probespec import parse_probe_spec
from trapline.sandbox import Sandbox
from tests.quick_profile import alternates

pytestmark = pytest.mark.e2e

START = "uprobe:libc.so.6:__libc_start_main"


@pytest.mark.parametrize("arch", ["amd64", "i386"])
@pytest.mark.parametrize("program", ["ls", "grep"])
@alternates("arch")
def test_the_found_main_is_what_libc_start_main_receives(arch, program, debian_rootfs):
    root, found = debian_rootfs[arch], {}

    def at_attach(kernel, process):
        found["stripped"] = not has_main(process)
        found["main"] = main_in_file(kernel.debug, process)
    argv = [f"/usr/bin/{program}", "--version"]
    Sandbox(rootfs=str(root), clear_env=True, tools=[at_attach]).run(argv)
    assert found["stripped"] and found["main"] is not None     # nothing else names it
    at_main = f"uprobe:{program}:{found['main']:#x}"
    start = Probe(parse_probe_spec(START), nargs=1)
    run = Sandbox(rootfs=str(root), clear_env=True, probes=[start, at_main]).run(argv)
    assert run.exit_code == 0 and run.hits[START] == 1 and run.hits[at_main] == 1
    [passed] = [r.args[0] for r in run.records if r.probe == START]
    [entered] = [r.addr for r in run.records if r.probe == at_main]
    assert passed == entered


def test_explain_finds_main_in_the_hosts_stripped_ls():
    result = CliRunner().invoke(explain, ["--format", "json", "-p", "uprobe:ls:main", "--",
                                          "/bin/ls", "/"])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    site, *rest = doc["sections"][0]["items"]
    assert site["note"].startswith("<main> in ") and site["note"].endswith("/ls")
    assert any(i["kind"] == "text" and i["text"].startswith("ls is stripped (no symbol main)")
               for i in rest)
    assert doc["facts"]["hits"] == 1 and doc["facts"]["exit_status"] == 0
    steps = [i for i in doc["sections"][4]["items"] if i["kind"] == "step"]
    assert steps[0]["where"] == "main" and steps[0]["address"] == doc["facts"]["address"]
    assert steps[-1]["last"]
