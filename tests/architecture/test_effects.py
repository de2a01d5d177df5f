"""What library calls do is registered per behaviour (``linking/effects/``), one handler per effect.

Every effect a knowledge row names (``Effect`` for called names, ``FrameworkEffect`` for framework
methods) has exactly one handler, none is registered for an effect no row names, and the behaviour
modules reach the engine only through ``EngineContext``: they import none of the engine's classes or
of the helpers it builds (those hold it the same way).
"""

from __future__ import annotations

import pytest

from compile_ad_lint.knowledge.calls import CALLS, with_compile_wrappers
from compile_ad_lint.knowledge.effects import Effect
from compile_ad_lint.knowledge.frameworks import FRAMEWORK_METHODS, FrameworkEffect
from compile_ad_lint.linking.effects import registry

from .imports import direct_imports, loads, modules

#: The engine's stack of classes and the helpers it builds around itself.
ENGINE = (
    "linking.state",
    "linking.heap",
    "linking.names",
    "linking.incremental.memo",
    "linking.external_calls",
    "linking.calls",
    "linking.statements",
    "linking.interpreter",
    "linking.reach",
    "linking.analyses.islands",
    "linking.analyses.results",
    "linking.analyses.switches",
    "linking.analyses.dual_params",
)

EFFECT_MODULES = sorted(name for name in modules() if name.startswith("linking.effects"))


def named_by_rows() -> set[Effect]:
    configured = with_compile_wrappers(["project.compile_wrapper"])
    return {meaning.effect for table in (CALLS, configured) for meanings in table.values() for meaning in meanings}


def framework_effects_named_by_rows() -> set[FrameworkEffect]:
    return {method.effect for method in FRAMEWORK_METHODS}


TABLES = [
    pytest.param(registry.EFFECTS, named_by_rows, id="called names"),
    pytest.param(registry.FRAMEWORK_METHODS, framework_effects_named_by_rows, id="framework methods"),
]


@pytest.mark.parametrize(("table", "named"), TABLES)
def test_every_effect_a_row_names_has_a_handler(table: registry.Registry, named) -> None:
    missing = named() - set(table.handlers())
    assert not missing, f"register a handler (linking/effects/) for {sorted(e.name for e in missing)}"


@pytest.mark.parametrize(("table", "named"), TABLES)
def test_no_handler_for_an_effect_no_row_names(table: registry.Registry, named) -> None:
    unused = set(table.handlers()) - named()
    assert not unused, f"no knowledge row names {sorted(e.name for e in unused)}: remove their handlers"


@pytest.mark.parametrize(("table", "named"), TABLES)
def test_an_effect_has_one_handler(table: registry.Registry, named) -> None:
    taken = next(iter(table.handlers()))
    before = table[taken]
    with pytest.raises(ValueError, match="has a handler already"):
        table.register(taken)(lambda *arguments: None)
    assert table[taken] is before


@pytest.mark.parametrize(("table", "named"), TABLES)
def test_handlers_live_in_the_behaviour_modules(table: registry.Registry, named) -> None:
    elsewhere = {
        key.name: handler.__module__
        for key, handler in table.handlers().items()
        if not handler.__module__.startswith("compile_ad_lint.linking.effects.")
    }
    assert not elsewhere, elsewhere


def test_effect_modules_are_found() -> None:
    assert {"linking.effects.registry", "linking.effects.compile", "linking.effects.autograd"} <= set(EFFECT_MODULES)


@pytest.mark.parametrize("name", EFFECT_MODULES)
def test_effect_modules_do_not_import_the_engine(name: str) -> None:
    wrong = [
        f"{name}:{item.line} imports {target}"
        for item in direct_imports(name)
        for target in loads(item)
        if any(target == engine or target.startswith(engine + ".") for engine in ENGINE)
    ]
    assert not wrong, "\n".join(wrong)
