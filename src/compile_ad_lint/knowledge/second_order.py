"""What differentiating twice through a compiled region does, by torch series (CAL004), where it
is not a ``torch.autograd.functional`` row of ``torch_api``: facts/double_backward_and_unused_outputs.py."""

from __future__ import annotations

from ..core.torch_versions import Series, Versions

#: What a second backward through a compiled backward raises.
DOUBLE_BACKWARD = "raises RuntimeError: torch.compile with aot_autograd does not currently support double backward"

#: A compiled function whose body (or a loss module's ``forward`` it calls) runs ``grad``/``backward``
#: with ``create_graph=True`` and then a backward through the result: what it does, by series (the
#: ``*_inside_compiled_function`` cases).
INSIDE_COMPILED: tuple[tuple[Versions, str], ...] = (
    (Versions(before=Series(2, 15)), DOUBLE_BACKWARD),
    (
        Versions(since=Series(2, 15)),
        f"can raise {DOUBLE_BACKWARD.removeprefix('raises ')} (it did in five of the six recorded shapes; a penalty "
        "over a plain nn.Sequential in the compiled function's own body ran and matched eager)",
    ),
)


def inside_compiled_on(series: Series) -> str:
    """``INSIDE_COMPILED`` on ``series``."""
    return next(text for versions, text in INSIDE_COMPILED if versions.holds_for(series))
