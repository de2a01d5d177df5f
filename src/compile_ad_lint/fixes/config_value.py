"""CAL003's fix: a ``backward_pass_autocast`` value torch accepts, written where the bad one was.

The value is found in the statement or call the finding points at: ``X.backward_pass_autocast =
<value>``, ``config.patch(backward_pass_autocast=<value>)``, ``config.patch({"backward_pass_autocast":
<value>})`` and ``config.patch("backward_pass_autocast", <value>)``. A dict becomes ``[<dict>]`` and a
tuple of dicts a list of them (their own text unchanged); a string becomes the valid one, in the
same quotes.
"""

from __future__ import annotations

import libcst as cst

from ..core.plans import ReplaceConfigValue
from .parsed import ParsedModule
from .source import Sources
from .transform import Op, PlanError, Replace

KEY = "backward_pass_autocast"


def _string_value(node: cst.BaseExpression) -> object:
    return node.evaluated_value if isinstance(node, cst.SimpleString) else None


def value_node(parsed: ParsedModule, plan: ReplaceConfigValue) -> cst.BaseExpression:
    site = plan.site
    for node in parsed.nodes_starting_at(site, cst.Assign, cst.AnnAssign, cst.Call):
        if isinstance(node, cst.Assign) and any(
            isinstance(t.target, cst.Attribute) and t.target.attr.value == KEY for t in node.targets
        ):
            return node.value
        if (
            isinstance(node, cst.AnnAssign)
            and isinstance(node.target, cst.Attribute)
            and node.target.attr.value == KEY
            and node.value is not None
        ):
            return node.value
        if isinstance(node, cst.Call):
            args = list(node.args)
            for arg in args:
                if arg.keyword is not None and arg.keyword.value == KEY:
                    return arg.value
            positional = [arg.value for arg in args if arg.keyword is None and not arg.star]
            if len(positional) >= 2 and _string_value(positional[0]) == KEY:
                return positional[1]
            if positional and isinstance(positional[0], cst.Dict):
                for element in positional[0].elements:
                    if isinstance(element, cst.DictElement) and _string_value(element.key) == KEY:
                        return element.value
    raise PlanError("the value is not where the analysis saw it")


def _as_list(node: cst.CSTNode) -> cst.CSTNode:
    if isinstance(node, cst.Dict):
        return (
            cst.List([cst.Element(node.with_changes(lpar=(), rpar=()))], lpar=node.lpar, rpar=node.rpar)
            if node.lpar
            else cst.List([cst.Element(node)])
        )
    if isinstance(node, cst.Tuple) and node.lpar:
        elements = list(node.elements)
        if len(elements) == 1:
            elements[0] = elements[0].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        opening, closing = node.lpar[0], node.rpar[-1]
        return cst.List(
            elements,
            lbracket=cst.LeftSquareBracket(whitespace_after=opening.whitespace_after),
            rbracket=cst.RightSquareBracket(whitespace_before=closing.whitespace_before),
            lpar=node.lpar[1:],
            rpar=node.rpar[:-1],
        )
    raise PlanError("not a dict or a parenthesized tuple of dicts")


def value_ops(plan: ReplaceConfigValue, sources: Sources) -> list[Op]:
    parsed = sources.parsed(plan.site.path)
    if parsed is None:
        raise PlanError(f"{plan.site.path} cannot be edited")
    node = value_node(parsed, plan)
    if plan.replacement is None:
        if not isinstance(node, (cst.Dict, cst.Tuple)) or (
            isinstance(node, cst.Tuple) and not all(isinstance(e.value, cst.Dict) for e in node.elements)
        ):
            raise PlanError("not a dict or a tuple of dicts")
        return [Replace(plan.site.path, node, _as_list, ("list",))]
    if not isinstance(node, cst.SimpleString) or "f" in node.prefix.lower() or "b" in node.prefix.lower():
        raise PlanError("not a plain string literal")
    quote = node.quote
    if "\\" in plan.replacement or quote[0] in plan.replacement:
        raise PlanError("the replacement needs escaping")
    replacement = plan.replacement

    def build(updated: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(updated, cst.SimpleString)
        return updated.with_changes(value=f"{updated.prefix}{quote}{replacement}{quote}")

    return [Replace(plan.site.path, node, build, ("string", replacement))]
