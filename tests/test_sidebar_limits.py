"""The sidebar's width and depth (tog_core/app/session.py within_limits): whatever the field or a remembered file
holds, a number within the limits comes back, with what was refused in plain words."""
from __future__ import annotations

import pytest

from tog_core.app.session import K, within_limits


@pytest.mark.parametrize(("value", "expected"), [
    (3, (3, "")),
    (3.0, (3, "")),
    ("3", (3, "")),  # a number written as text (an old session or file) raised ValueError on {value:g}
    (0, (1, "Width 0 is not taken (it goes from 1 to 10): set to 1.")),
    (123456789, (10, "Width 123456789 is not taken (it goes from 1 to 10): set to 10.")),  # read 1.23457e+08
    (1e8, (10, "Width 100000000 is not taken (it goes from 1 to 10): set to 10.")),
    (float("inf"), (10, "Width inf is not taken (it goes from 1 to 10): set to 10.")),  # an uncaught OverflowError
    (float("-inf"), (1, "Width -inf is not taken (it goes from 1 to 10): set to 1.")),
    (2.5, (2, "Width 2.5 is not taken (it goes from 1 to 10): set to 2.")),
    (" 12 ", (10, "Width 12 is not taken (it goes from 1 to 10): set to 10.")),
    ("three", (1, "Width must be a whole number from 1 to 10: set to 1.")),
    (float("nan"), (1, "Width must be a whole number from 1 to 10: set to 1.")),
    (None, (1, "Width must be a whole number from 1 to 10: set to 1.")),
    (True, (1, "Width must be a whole number from 1 to 10: set to 1.")),
])
def test_any_width_gives_a_number_within_the_limits_and_says_what_was_refused(value, expected):
    assert within_limits(K.WIDTH, value) == expected


def test_depth_has_its_own_limits():
    assert within_limits(K.DEPTH, 9) == (6, "Depth 9 is not taken (it goes from 1 to 6): set to 6.")
