"""The analysis thread: a deep stack, the recursion limit raised only while it runs, room for frames."""

from __future__ import annotations

import sys

import pytest

from compile_ad_lint import deepstack


def _depth(levels: int) -> int:
    return 0 if levels == 0 else _depth(levels - 1) + 1


def test_the_function_runs_on_a_deep_stack_and_the_limit_is_put_back():
    host_limit = sys.getrecursionlimit()
    seen: list[int] = []

    def deep() -> int:
        seen.append(sys.getrecursionlimit())
        return _depth(5_000)  # past CPython's default limit of 1,000 frames

    assert deepstack.call_with_deep_stack(deep) == 5_000
    assert seen == [max(host_limit, deepstack.RECURSION_LIMIT)]
    assert sys.getrecursionlimit() == host_limit


def test_an_exception_comes_back_to_the_caller():
    def failing(message: str) -> None:
        raise ValueError(message)

    with pytest.raises(ValueError, match="from the analysis thread"):
        deepstack.call_with_deep_stack(failing, "from the analysis thread")


@pytest.mark.skipif(
    sys.implementation.name != "cpython" or sys.version_info < (3, 11), reason="frames live in chunks from CPython 3.11"
)
def test_the_analysis_runs_above_a_frame_that_opens_a_roomy_chunk():
    """CPython 3.11 and 3.12 unmap a frame chunk when the frame at its base returns, so a loop calling
    across a boundary maps and unmaps memory per call (2.5 s of kernel time in a cold check of the
    generated framework). The analysis is called from a frame of ``FRAME_ROOM_SLOTS`` locals, which
    opens a chunk whose rest holds the analysis's frames."""

    def caller_locals() -> int:
        return sys._getframe(1).f_code.co_nlocals

    assert deepstack.call_with_deep_stack(caller_locals) >= deepstack.FRAME_ROOM_SLOTS
