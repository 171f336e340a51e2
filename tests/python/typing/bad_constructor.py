"""A py_class constructor called with the wrong type: mypy names the argument."""

import ferry


@ferry.py_class("typing_bad.Point")
class Point(ferry.Object):
    x: int
    y: float = 0.0


Point("one")  # E: Argument 1 to "Point" has incompatible type "str"; expected "int"
Point(1, 2.0, 3)  # E: Too many arguments for "Point"
