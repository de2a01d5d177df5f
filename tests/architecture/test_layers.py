"""The house rules of ``src/compile_ad_lint``, checked on its import graph (``imports.py``).

Layers import downward only (core -> knowledge -> summary -> linking -> facts -> rules -> pipeline
-> fixes and output -> front ends), no import cycles, and no module reaches into another module's
private names; rules read the engine's facts, never its internals. Each allowlist holds an exception left today; it may only shrink:
``test_every_exception_is_still_needed`` fails on an entry that nothing needs any more, so a
fixed exception is crossed off instead of staying around to hide a new one.
"""

from __future__ import annotations

import pytest

from .imports import Import, cycles, direct_imports, graph, loads, modules, private_reaches

CORE, KNOWLEDGE, SUMMARY, LINKING, FACTS, RULES, PIPELINE, OUTPUT, FRONT_END = range(9)

#: Every module of the package, by the longest dotted prefix listed here.
LAYERS: dict[str, int] = {
    # The data model every layer shares; imports nothing else of the package.
    "_version": CORE,
    "core": CORE,
    # What torch and the frameworks do, as table rows.
    "knowledge": KNOWLEDGE,
    # Reading files: parsing, summaries and their store, notebooks, the project and its settings.
    "pyast": SUMMARY,
    "newer_syntax": SUMMARY,
    "suppression": SUMMARY,
    "summary": SUMMARY,
    "cache": SUMMARY,
    "notebook": SUMMARY,
    "project": SUMMARY,
    "gitignore": SUMMARY,
    "target": SUMMARY,
    "config": SUMMARY,
    "inputs": SUMMARY,
    "layout": SUMMARY,
    # The engine: abstract interpretation of the summaries, whose results are the facts rules read.
    "linking": LINKING,
    # What the rules read of the engine's results.
    "facts": FACTS,
    "rules": RULES,
    # Running a check: discovery, workers, caching of results, the facade.
    "api": PIPELINE,
    "pipeline": PIPELINE,
    "deepstack": PIPELINE,
    "baseline": PIPELINE,
    "fixes": OUTPUT,
    "output": OUTPUT,
    "confirm": OUTPUT,
    "docs": OUTPUT,
    "": FRONT_END,
    "__main__": FRONT_END,
    "cli": FRONT_END,
    "cli_confirm": FRONT_END,
    "command": FRONT_END,
    "integrations": FRONT_END,
    "testing": FRONT_END,
}

#: Imports ``(importer, imported)`` that close an import cycle today.
CYCLE_EXCEPTIONS: frozenset[tuple[str, str]] = frozenset()

#: Imports ``(importer, imported)`` that go up the layer table today.
LAYER_EXCEPTIONS: frozenset[tuple[str, str]] = frozenset()

#: Private names ``(module, owner, name)``: ``module`` uses ``name``, which only ``owner`` defines.
PRIVATE_EXCEPTIONS: frozenset[tuple[str, str, str]] = frozenset()


def layer(module: str) -> int:
    """The layer of ``module``: its longest prefix in ``LAYERS``."""
    parts = module.split(".") if module else [""]
    for end in range(len(parts), 0, -1):
        prefix = ".".join(parts[:end])
        if prefix in LAYERS:
            return LAYERS[prefix]
    raise KeyError(module)


def all_imports() -> list[Import]:
    return [item for name in modules() for item in direct_imports(name)]


def upward(item: Import) -> list[str]:
    """What ``item`` loads from a higher layer than its importer's."""
    return [target for target in loads(item) if layer(target) > layer(item.importer)]


def test_every_module_has_a_layer() -> None:
    unassigned = []
    for name in modules():
        try:
            layer(name)
        except KeyError:
            unassigned.append(name or "(the package)")
    assert not unassigned, f"add these modules to LAYERS: {unassigned}"


def test_no_import_cycles() -> None:
    found = cycles(graph(CYCLE_EXCEPTIONS))
    assert not found, "import cycles (break them; an exception only for one that existed before): " + "; ".join(
        " <-> ".join(component) for component in found
    )


def test_imports_go_down_the_layers() -> None:
    wrong = [
        f"{item.importer} (layer {layer(item.importer)}) imports {target} (layer {layer(target)}) at line {item.line}"
        for item in all_imports()
        if (item.importer, item.imported) not in LAYER_EXCEPTIONS
        for target in upward(item)
    ]
    assert not wrong, "\n".join(wrong)


def test_rules_read_facts_not_the_engine() -> None:
    """A rule asks the facts (typed, computed once) what it needs, never the engine's values."""
    allowed = {CORE, KNOWLEDGE, FACTS}
    wrong = [
        f"{item.importer} imports {target} at line {item.line}"
        for item in all_imports()
        if layer(item.importer) == RULES
        for target in loads(item)
        if layer(target) not in allowed and not target.startswith("rules")
    ]
    assert not wrong, "\n".join(wrong)


def test_no_reaching_into_private_names() -> None:
    wrong = [
        f"{reach.module}:{reach.line} uses {reach.name} of {reach.owner}"
        for reach in private_reaches()
        if reach.key not in PRIVATE_EXCEPTIONS
    ]
    assert not wrong, "\n".join(wrong)


def test_every_exception_is_still_needed() -> None:
    imported = {(item.importer, item.imported): item for item in all_imports()}
    in_cycle = {name for component in cycles(graph()) for name in component}
    stale = [
        f"CYCLE_EXCEPTIONS {pair}"
        for pair in sorted(CYCLE_EXCEPTIONS)
        if pair not in imported or not {pair[0], *loads(imported[pair])} <= in_cycle
    ]
    stale += [
        f"LAYER_EXCEPTIONS {pair}"
        for pair in sorted(LAYER_EXCEPTIONS)
        if pair not in imported or not upward(imported[pair])
    ]
    used = {reach.key for reach in private_reaches()}
    stale += [f"PRIVATE_EXCEPTIONS {key}" for key in sorted(PRIVATE_EXCEPTIONS - used)]
    assert not stale, "no longer needed, remove them: " + ", ".join(stale)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import compile_ad_lint.linking.values as v\n", ["linking.values"]),
        ("def f():\n    from ..rules import base\n", ["rules.base"]),
        ("from ..knowledge import torch_api as api\n", ["knowledge.torch_api"]),
        ("from .. import config\n", ["config"]),
        ("from ..core.locations import Location\n", ["core.locations"]),
    ],
)
def test_imports_are_read_inside_functions_and_relative(source: str, expected: list[str], monkeypatch) -> None:
    """The graph sees what a reader sees: imports in functions, relative imports, submodules named
    in ``from package import module`` (a check that misses them would pass on any code)."""
    import ast

    from . import imports

    monkeypatch.setattr(imports, "tree", lambda name: ast.parse(source))
    assert [item.imported for item in direct_imports("linking.reach")] == expected
