"""A function looked up with allow_missing=True may be None: calling it unchecked is an error."""

import ferry

f = ferry.get_global_func("demo.add", allow_missing=True)
f(1, 2)  # E: "None" not callable
