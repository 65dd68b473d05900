"""Property: whatever sequence of tmpfs mounts, umounts (plain and MNT_DETACH) and mkdirs a
process makes on a few folders, each call answers what Linux's mount tree gives, and each
path is on the file system a walk through that tree reaches (fs/namespace.c: a mount is
attached to the mount the walk reached at its point, lookup_mnt crosses it; a mount on a
mount point is stacked on it and hides the mounts beneath the hidden one until it goes;
umount of no mount's root is EINVAL, of one with mounts on it EBUSY without MNT_DETACH, which
takes the mount and those beneath it).

The reference below is that tree, small and separate from the model's (fs/mount_table.py):
every st_dev statx reports must be the one of the file system the reference reaches (the
same file system, the same device; two file systems, two devices). Stacked mounts, a mount
hidden beneath one and an EBUSY umount must each be reached across the examples."""
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from kernel_model import errno as E
from tests.unit.kernel_model.call_script import run_script

AT_FDCWD, STATX_BASIC_STATS, MNT_DETACH = -100, 0x7FF, 2
STATX_SIZE, DEV_MAJOR, DEV_MINOR = 256, 0x88, 0x8C
POINTS = ("/d", "/tmp", "/tmp/new")
ARGUMENT = {"/d": "/d", "/tmp": "BUF+8", "/tmp/new": "/tmp/new"}   # "/tmp" is written at BUF+8
DATA = b"tmpfs\0\0\0/tmp\0"
REACHED = Counter()

ops = st.one_of(
    st.tuples(st.just("mount"), st.sampled_from(POINTS)),
    st.tuples(st.just("umount"), st.sampled_from(POINTS), st.sampled_from((0, MNT_DETACH))),
    st.tuples(st.just("mkdir")),
    st.tuples(st.just("statx"), st.sampled_from(POINTS)))


class Tree:
    """The reference: mounts as (id, parent, point, label); file systems by label; which of
    them hold the folder "new" under /tmp's directory."""

    def __init__(self):
        self.mounts = [(0, 0, "/", "rootfs")]
        self.with_new = set()
        self.made = 0

    def _children(self, mount_id, point):
        found = [m for m in self.mounts[1:] if m[1] == mount_id and m[2] == point]
        return found[-1] if found else None

    def walk(self, path):
        """The mount a walk to `path` ends in, or None if the path does not exist."""
        current = self.mounts[0]
        prefixes = ["/d"] if path == "/d" else ["/tmp", "/tmp/new"][:path.count("/")]
        for prefix in prefixes:
            if prefix == "/tmp/new" and current[3] not in self.with_new:
                return None
            child = self._children(current[0], prefix)
            while child is not None:
                current = child
                child = self._children(current[0], prefix)
                if child is not None:
                    REACHED["stacked"] += 1
                    if any(m[1] == current[0] and m[2] != prefix for m in self.mounts):
                        REACHED["hidden"] += 1       # the one left has a mount beneath
        return current

    def label_at(self, path):
        mount = self.walk(path)
        return None if mount is None else mount[3]

    def mount(self, path):
        parent = self.walk(path)
        if parent is None:
            return -E.ENOENT
        self.made += 1
        self.mounts.append((self.made, parent[0], path, "tmpfs%d" % self.made))
        return 0

    def umount(self, path, flags):
        top = self.walk(path)
        if top is None:
            return -E.ENOENT
        if top[2] != path:
            return -E.EINVAL
        beneath = self._subtree(top)
        if len(beneath) > 1 and not flags & MNT_DETACH:
            REACHED["busy"] += 1
            return -E.EBUSY
        self.mounts = [m for m in self.mounts if m not in beneath]
        return 0

    def _subtree(self, top):
        found = [top]
        for m in self.mounts:
            if m[1] in {f[0] for f in found} and m not in found:
                found.append(m)
        return found

    def mkdir(self):
        where = self.label_at("/tmp")
        if where in self.with_new:
            return -E.EEXIST
        self.with_new.add(where)
        return 0


def _script(steps):
    """The calls, and for each statx its slot in BUF (after DATA's strings)."""
    calls, slots = [], []
    for step in steps:
        if step[0] == "mount":
            calls.append(("mount", "BUF", ARGUMENT[step[1]], "BUF", 0, 0))
        elif step[0] == "umount":
            calls.append(("umount2", ARGUMENT[step[1]], step[2]))
        elif step[0] == "mkdir":
            calls.append(("mkdir", "/tmp/new", 0o755))
        else:
            slot = STATX_SIZE * (len(slots) + 1)
            slots.append(slot)
            calls.append(("statx", AT_FDCWD, ARGUMENT[step[1]], 0, STATX_BASIC_STATS,
                          "BUF+%d" % slot))
    return calls, slots


# a start that nests a mount in a tmpfs (so that umount may find one beneath), and stacks
# another on the tmpfs (hiding the nested one), or none
NESTED = [("mount", "/tmp"), ("mkdir",), ("mount", "/tmp/new")]
scripts = st.tuples(st.sampled_from(([], NESTED, NESTED + [("mount", "/tmp")])),
                    st.lists(ops, min_size=1, max_size=20)).map(
    lambda parts: parts[0] + parts[1]).filter(
    lambda steps: sum(s[0] == "statx" for s in steps) <= 10)


@settings(max_examples=100, deadline=None)
@given(scripts)
def _mount_tree_matches_the_reference(steps):
    calls, slots = _script(steps)
    results, buf, _ = run_script("x86_64", calls, data=DATA)
    tree, devices, labels = Tree(), {}, []
    for step, got in zip(steps, results):
        if step[0] == "mount":
            assert got == tree.mount(step[1]), (steps, step)
        elif step[0] == "umount":
            assert got == tree.umount(step[1], step[2]), (steps, step)
        elif step[0] == "mkdir":
            assert got == tree.mkdir(), (steps, step)
        else:
            label = tree.label_at(step[1])
            assert got == (-E.ENOENT if label is None else 0), (steps, step)
            labels.append(label)
    for slot, label in zip(slots, labels):
        if label is None:
            continue
        dev = (int.from_bytes(buf[slot + DEV_MAJOR:slot + DEV_MAJOR + 4], "little"),
               int.from_bytes(buf[slot + DEV_MINOR:slot + DEV_MINOR + 4], "little"))
        assert devices.setdefault(label, dev) == dev, (steps, label)
    assert len(set(devices.values())) == len(devices), (steps, devices)


def test_mount_tree_matches_the_reference():
    REACHED.clear()
    _mount_tree_matches_the_reference()
    assert REACHED["stacked"] and REACHED["busy"] and REACHED["hidden"], REACHED
