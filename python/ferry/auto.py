"""Classes made on first sight: ``ferry.auto.<type key>`` is the class of objects of that type key
(``ferry.auto.test.Let`` for ``test.Let``), made for a type without a registered Python class.

Such a class has ``__module__ == "ferry.auto"`` and the full type key as its ``__qualname__``,
so pickle and cloudpickle store it by reference, as any importable class, and the unpickling
process resolves the key here: its own class for that type (made on first sight there too). The
type must be registered in that process (its library loaded), as for unpickling its objects.

This module holds no other names, so that any first part of a type key resolves.
"""

from .registry import _auto_attribute as __getattr__  # noqa: F401 (module __getattr__)
