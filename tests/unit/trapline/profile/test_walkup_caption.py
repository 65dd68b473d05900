"""trapline/profile/walkup_report.py: the perturbation comparison's caption gives the walk-up /
full ratio only when both runs hooked functions of the same objects."""
from trapline.profile.walkup_report import _comparison_table


def _comparison(full_objects, walkup_objects, full_functions=10):
    def run(hooks, objects, functions):
        return {"instructions": 1000 + hooks, "hooks_executed": hooks, "instructions_added": hooks,
                "functions_hooked": functions, "strategies": {}, "objects": objects}
    return {"baseline": {"instructions": 1000}, "full": run(400, full_objects, full_functions),
            "walkup": run(4, walkup_objects, 2), "hooks_ratio": 0.01,
            "instructions_added_ratio": 0.01, "same_output": True}


def test_the_ratio_when_the_walk_up_stayed_in_the_objects_the_full_run_hooked():
    caption = _comparison_table(_comparison(["prog"], ["prog"])).caption
    assert caption == "walk-up / full: hooks 1.00%, instructions added 1.00%; same output: True"


def test_no_ratio_when_the_walk_up_hooked_a_library_the_full_run_did_not():
    """Before the full run hooked libraries, Debian's sqlite3 (whose work is in libsqlite3)
    read 'hooks 2118.97%': 58 hooks of the program against the walk-up's 1 229 in libraries."""
    caption = _comparison_table(_comparison(["sqlite3"], ["libsqlite3.so.0", "sqlite3"])).caption
    assert caption.startswith("walk-up / full: no like-for-like ratio, the walk-up hooked "
                              "functions in libsqlite3.so.0, which the full run")


def test_no_ratio_when_the_full_run_found_nothing_to_hook():
    caption = _comparison_table(_comparison([], ["prog"], full_functions=0)).caption
    assert caption.startswith("walk-up / full: no ratio, full instrumentation found no function")


def test_a_report_written_before_objects_were_recorded_keeps_its_ratio():
    old = _comparison(["prog"], ["prog"])
    for run in (old["full"], old["walkup"]):
        del run["objects"]
    assert "hooks 1.00%" in _comparison_table(old).caption
