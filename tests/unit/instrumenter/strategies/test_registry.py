"""instrumenter/strategies/registry.py: one registry every reader agrees with."""
import click

from instrumenter.strategies import registry as strategies
from instrumenter.insn.policy import STRATEGIES as POLICIES
from trapline.cli.trace import trace
from trapline.experiments.loss import STRATEGY_ORDER, available_strategies


def test_registry_names_are_unique_and_auto_tries_every_strategy_singlestep_last():
    assert len(set(strategies.NAMES)) == len(strategies.NAMES)
    assert sorted(strategies.AUTO_ORDER) == sorted(strategies.NAMES)
    assert strategies.AUTO_ORDER[0] == "jump" and strategies.AUTO_ORDER[-1] == "singlestep"
    assert strategies.CHOICES == ("auto",) + strategies.NAMES
    assert all(s.hit_cost for s in strategies.REGISTRY)


def test_cli_offers_exactly_the_registry():
    option = next(p for p in trace.params if p.name == "strategy")
    assert isinstance(option.type, click.Choice)
    assert tuple(option.type.choices) == strategies.CHOICES


def test_experiment_covers_every_strategy():
    assert sorted(STRATEGY_ORDER) == sorted(strategies.NAMES)
    assert available_strategies() == list(STRATEGY_ORDER)
    assert available_strategies(["jump", "nonesuch"]) == ["jump"]


def test_every_strategy_has_an_instruction_policy_or_is_a_form_of_one():
    for name in strategies.NAMES:
        assert name in POLICIES or name.split("-")[0] in POLICIES, name
