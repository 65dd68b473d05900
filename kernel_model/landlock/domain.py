"""A task's Landlock domain: the layers landlock_restrict_self stacked on it
(security/landlock/ruleset.c landlock_merge_ruleset), oldest first.

A domain is immutable: restricting makes a new one, fork shares it (the child's credentials
are the parent's, prepare_creds), exec keeps it. Each layer is a snapshot of the ruleset it was
made from; a layer's identity is what the scopes compare (domain_is_scoped: the target must be
inside every scoped layer of the sender, i.e. its domain descends from that layer).
"""
from dataclasses import dataclass

from .. import errno as E
from ..errno import GuestErrno
from .abi import ACCESS_FS_REFER, MAX_NUM_LAYERS
from .ruleset import Ruleset


@dataclass(frozen=True, eq=False)
class Layer:
    handled_fs: int
    handled_net: int
    scoped: int
    path_rules: tuple           # (path, access) pairs
    port_rules: tuple           # (port, access) pairs

    @classmethod
    def of(cls, ruleset: Ruleset) -> "Layer":
        # a layer handling any file-system right handles REFER too: reparenting is denied
        # unless a rule grants it (ruleset.c landlock_add_fs_access_mask's INITIALLY_DENIED)
        handled_fs = ruleset.handled_fs | ACCESS_FS_REFER if ruleset.handled_fs else 0
        return cls(handled_fs, ruleset.handled_net, ruleset.scoped,
                   tuple(sorted(ruleset.path_rules.items())),
                   tuple(sorted(ruleset.port_rules.items())))

    def denies_path(self, path: bytes, access: int) -> bool:
        """landlock_unmask_layers over the path's ancestors: the handled part of `access` must
        be granted by rules on the path or a folder above it."""
        needed = access & self.handled_fs
        for where, allowed in self.path_rules:
            if needed and _beneath(path, where):
                needed &= ~allowed
        return bool(needed)

    def denies_port(self, port: int, access: int) -> bool:
        needed = access & self.handled_net
        for rule_port, allowed in self.port_rules:
            if rule_port == port:
                needed &= ~allowed
        return bool(needed)


def _beneath(path: bytes, folder: bytes) -> bool:
    return path == folder or path.startswith(folder.rstrip(b"/") + b"/")


@dataclass(frozen=True)
class Domain:
    layers: tuple = ()

    def restricted_by(self, ruleset: Ruleset) -> "Domain":
        # landlock_merge_ruleset -> merge_ruleset: E2BIG once 16 layers are stacked
        if len(self.layers) >= MAX_NUM_LAYERS:
            raise GuestErrno(E.E2BIG)
        return Domain(self.layers + (Layer.of(ruleset),))

    def denies_path(self, path: bytes, access: int) -> bool:
        return any(layer.denies_path(path, access) for layer in self.layers)

    def denies_port(self, port: int, access: int) -> bool:
        return any(layer.denies_port(port, access) for layer in self.layers)

    def scoped_from(self, target: "Domain", scope: int) -> bool:
        """task.c domain_is_scoped: True when a layer of this domain that sets `scope` is not
        one of the target's, i.e. the target is outside that sandbox."""
        return any(layer.scoped & scope and not any(layer is t for t in target.layers)
                   for layer in self.layers)


NO_DOMAIN = Domain()
