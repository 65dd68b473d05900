"""System-call implementations, grouped by subject. A module registers its calls when it is
imported; the registry imports each one when one of its calls is first needed
(../registry.py `declaration`, ../homes.py), or all of them (`all_declarations`)."""
