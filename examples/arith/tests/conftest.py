"""The arith example's tests run against the library built by Ferry's own build
(build/examples/arith/libarith.so) unless ARITH_LIBRARY names another one."""

import os
import pathlib
import sys

EXAMPLE = pathlib.Path(__file__).resolve().parents[1]
ROOT = EXAMPLE.parents[1]
# With the leak check on, as the rest of Ferry's suite (tests/python/conftest.py): set before
# anything loads libferry.
os.environ.setdefault("FERRY_LEAK_CHECK", "1")
os.environ.setdefault("ARITH_LIBRARY", str(ROOT / "build" / "examples" / "arith" / "libarith.so"))
sys.path.insert(0, str(EXAMPLE / "python"))
