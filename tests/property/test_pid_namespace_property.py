"""PID namespaces' numbers (kernel_model/pid_namespace.py): whatever the order of namespaces
made, tasks born and tasks gone, a task has a number in the namespace it was born in and in
every one above it and none elsewhere; in each namespace numbers name one task each, both
ways; a namespace's first task is its 1 (its init), and numbers are handed out after the last
one while no number is reused before it is freed."""
from hypothesis import example, given, settings, strategies as st

from kernel_model.pid_namespace import (INITIAL, PidNamespace, attach_numbers, forget_task,
                                        plan_numbers)

steps = st.lists(st.one_of(st.tuples(st.just("ns"), st.integers(0, 20)),
                           st.tuples(st.just("born"), st.integers(0, 20)),
                           st.tuples(st.just("gone"), st.integers(0, 20))), max_size=50)


def _check(namespaces, tasks) -> None:
    for ns in namespaces[1:]:
        assert len(ns.nr_of) == len(ns.pid_of)
        assert all(ns.pid_of[nr] == pid for pid, nr in ns.nr_of.items())
    for pid, birth_ns in tasks.items():
        above = list(birth_ns.ancestors())
        for ns in namespaces:
            if ns in above:
                assert ns.nr(pid) > 0 and ns.lookup(ns.nr(pid)) == pid
            else:
                assert ns.nr(pid) == 0


@settings(max_examples=80, deadline=None)
@given(steps)
@example([("ns", 0), ("ns", 1), ("born", 2), ("born", 2), ("born", 1), ("gone", 0), ("born", 2)])
def test_numbers_per_level(script):
    namespaces, tasks, next_pid, inums = [INITIAL], {}, 100, iter(range(1, 1000))
    deepest_numbered = 0
    for action, n in script:
        if action == "ns":
            parent = namespaces[n % len(namespaces)]
            namespaces.append(PidNamespace(next(inums), parent))
        elif action == "born":
            ns = namespaces[n % len(namespaces)]
            first = not ns.initial and ns.reaper is None
            expected = next(nr for nr in range(ns.last_pid + 1, 10**6) if nr not in ns.pid_of)
            plan = plan_numbers(ns, (), lambda _: True, lambda _: False)
            attach_numbers(plan, next_pid)
            tasks[next_pid] = ns
            if first:
                assert ns.nr(next_pid) == 1 and ns.reaper == next_pid
            elif not ns.initial:
                assert ns.nr(next_pid) == expected       # the first free after the last one
            deepest_numbered = max(deepest_numbered, ns.level)
            next_pid += 1
        elif action == "gone" and tasks:
            pid = sorted(tasks)[n % len(tasks)]
            forget_task(tasks.pop(pid), pid)
        _check(namespaces, tasks)
    if script[:3] == [("ns", 0), ("ns", 1), ("born", 2)]:
        assert deepest_numbered == 2, "the example's task two levels down was not numbered"
