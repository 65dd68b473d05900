"""Landlock's domains only narrow (security/landlock/ruleset.c landlock_merge_ruleset: a new
layer is added, none is relaxed): whatever the layers, stacking one more never allows an
access the domain denied; and a layer allows an access to a path exactly when the rules on
the path and the folders above it together grant every right it handles."""
from hypothesis import given, settings, strategies as st

from kernel_model.landlock.domain import NO_DOMAIN, Layer
from kernel_model.landlock.ruleset import Ruleset

FOLDERS = [b"/", b"/a", b"/a/b", b"/a/b/c", b"/ab", b"/d"]
RIGHTS = st.integers(1, 0b1111)


@st.composite
def rulesets(draw):
    ruleset = Ruleset(draw(RIGHTS), 0, 0)
    for folder in draw(st.lists(st.sampled_from(FOLDERS), max_size=3)):
        ruleset.allow_beneath(folder, draw(RIGHTS) & ruleset.handled_fs or ruleset.handled_fs)
    return ruleset


def _above(path: bytes) -> list[bytes]:
    """The path and every folder above it, by its components (not by string prefix)."""
    parts = [p for p in path.split(b"/") if p]
    return [b"/"] + [b"/" + b"/".join(parts[:n]) for n in range(1, len(parts) + 1)]


def test_stacking_never_allows_what_was_denied():
    outcomes = set()

    @settings(max_examples=300)
    @given(st.lists(rulesets(), max_size=4), rulesets(), st.sampled_from(FOLDERS + [b"/a/b/c/f"]),
           RIGHTS)
    def check(layers, extra, path, access):
        domain = NO_DOMAIN
        for ruleset in layers:
            domain = domain.restricted_by(ruleset)
        denied = domain.denies_path(path, access)
        outcomes.add(denied)
        if denied:
            assert domain.restricted_by(extra).denies_path(path, access)

    check()
    assert outcomes == {True, False}        # both cases were reached


def test_a_layer_grants_the_union_of_the_rules_above():
    outcomes = set()

    @settings(max_examples=300)
    @given(rulesets(), st.sampled_from(FOLDERS + [b"/a/b/c/f", b"/abc"]), RIGHTS)
    def check(ruleset, path, access):
        granted = 0
        for folder in _above(path):
            granted |= ruleset.path_rules.get(folder, 0)
        expected = bool(access & ruleset.handled_fs & ~granted)
        outcomes.add(expected)
        assert Layer.of(ruleset).denies_path(path, access) == expected

    check()
    assert outcomes == {True, False}
