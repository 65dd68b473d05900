"""`--strategy`: ours by name (the registry's choices), or a user's strategy by
`package.module:Class` or by the name its package registers in the entry-point group
trapline.strategies (instrumenter/strategies/registry.py). A user's strategy is imported and
checked when the option is read, so a bad one is one line before anything runs."""
import click

from instrumenter.strategies.registry import CHOICES


class StrategyChoice(click.Choice):
    def __init__(self):
        super().__init__(CHOICES)

    def get_metavar(self, param, *args, **kwargs):
        return "[" + "|".join(CHOICES) + "|package.module:Class|NAME]"

    def convert(self, value, param, ctx):
        if value in CHOICES:
            return value
        from instrumenter.errors import StrategyError
        from instrumenter.strategies import registry
        try:
            registry.load(registry.resolve(value))
        except StrategyError as bad:
            self.fail(str(bad), param, ctx)
        return value
