"""The documentation's blocks run with the leak check on, as the rest of the suite
(tests/python/conftest.py): set before anything loads libferry, it covers this process and the
interpreters and programs the blocks run in."""

import os

os.environ.setdefault("FERRY_LEAK_CHECK", "1")
