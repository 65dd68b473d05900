"""The probe strategies (one registry, registry.py) and the pages they use."""
