"""A strategy's bookkeeping per address space, forked and forgotten in one place (issue 15:
each strategy had its own loops over `(space, address)` maps for fork and forget).

A SpaceTable is a dict whose keys start with an address space's serial: `space.serial` itself
for per-space entries (a space's XOL areas), or `(space.serial, address)` for per-site ones
(a probed site). It stays a plain dict for lookups — a probe hit's handler indexes it directly
— and adds what every strategy needs when the kernel's process events arrive:
  * `fork(parent_space, child_space, copy)`: the child's memory is a copy of the parent's,
    so each of the parent's entries is entered for the child too, as is or through `copy`;
  * `forget(space)`: the space is released, or a detached child's copy is cleaned: its
    entries go.
Serials are never reused (kernel_model/memory/space.py), so a forgotten entry can never be found
under a new space.
"""


def _serial_of(key) -> int:
    return key[0] if isinstance(key, tuple) else key


class SpaceTable(dict):
    def of(self, space) -> list[tuple[object, object]]:
        """The (key, value) entries of `space`, in insertion order."""
        serial = space.serial
        return [(key, value) for key, value in self.items() if _serial_of(key) == serial]

    def fork(self, parent_space, child_space, copy=None) -> list[tuple[object, object]]:
        """Enter every entry of the parent's space for the child's (`copy(value)` when given,
        else the same object); returns the child's new (key, value) entries. A child sharing
        the parent's space (vfork, CLONE_VM) already has them: nothing to do."""
        if parent_space is child_space:
            return []
        child = child_space.serial
        entries = []
        for key, value in self.of(parent_space):
            new_key = (child,) + key[1:] if isinstance(key, tuple) else child
            new_value = copy(value) if copy is not None else value
            self[new_key] = new_value
            entries.append((new_key, new_value))
        return entries

    def forget(self, space) -> list[object]:
        """Drop every entry of `space`; returns their values."""
        gone = self.of(space)
        for key, _ in gone:
            del self[key]
        return [value for _, value in gone]
