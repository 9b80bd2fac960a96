"""build-exercises: solution regions become stubs with the hint, everything else is kept."""

from __future__ import annotations

import pytest

from minisgl_edu.course.exercises import strip_solutions


def test_region_becomes_stub_with_hint_and_indent():
    src = "def f(x):\n    ### BEGIN SOLUTION\n    ### HINT: add one\n    return x + 1\n    ### END SOLUTION\n"
    out = strip_solutions(src)
    assert out == "def f(x):\n    # YOUR CODE HERE\n    raise NotImplementedError('add one')\n"
    ns = {}
    exec(out, ns)
    with pytest.raises(NotImplementedError, match="add one"):
        ns["f"](1)


def test_unbalanced_markers_are_refused():
    with pytest.raises(ValueError):
        strip_solutions("### BEGIN SOLUTION\nx = 1\n")
    with pytest.raises(ValueError):
        strip_solutions("x = 1\n### END SOLUTION\n")
