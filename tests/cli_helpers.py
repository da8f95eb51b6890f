"""What the command line's tests assert about its output."""

from __future__ import annotations


def one_line_error(res, *needles: str) -> str:
    """The single ``rfbench: error:`` line of a user error (exit status 2) holding ``needles``."""
    assert res.exit_code == 2, res.output
    lines = res.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("rfbench: error:"), res.output
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]
