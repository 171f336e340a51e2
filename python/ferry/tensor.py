"""``Tensor``: an n-dimensional array shared with NumPy, PyTorch and every other library that
speaks DLPack, without copies in either direction."""

from collections import namedtuple

from . import _core
from .registry import register_object

__all__ = ["Device", "Tensor", "from_dlpack"]

_DEVICE_NAMES = {
    1: "cpu",
    2: "cuda",
    3: "cuda_host",
    4: "opencl",
    7: "vulkan",
    8: "metal",
    9: "vpi",
    10: "rocm",
    11: "rocm_host",
    12: "ext_dev",
    13: "cuda_managed",
    14: "oneapi",
    15: "webgpu",
    16: "hexagon",
    17: "maia",
}


class Device(namedtuple("Device", ["device_type", "device_id"])):
    """A DLPack device: ``(device_type, device_id)``, printed as ``cpu:0``."""

    __slots__ = ()

    def __str__(self):
        name = _DEVICE_NAMES.get(self.device_type, f"device{self.device_type}")
        return f"{name}:{self.device_id}"


@register_object("ferry.Tensor")
class Tensor(_core.Object):
    """An n-dimensional array in DLPack layout on any device.

    Any object with ``__dlpack__`` (a NumPy array, a PyTorch tensor) passed to a Ferry function
    arrives in C++ as a ``ferry::Tensor`` sharing its memory; a Tensor coming back goes to NumPy
    with ``.numpy()`` or ``numpy.from_dlpack(t)``, again without a copy. Equality and hashing
    are by identity; ``ferry.structural_equal`` compares dtype, shape and contents.
    """

    __slots__ = ()

    # __dlpack__(stream=None, max_version=None, dl_device=None, copy=None), __dlpack_device__()
    # and numpy() are installed below, written in C++ (python/src/tensor.cc).

    @property
    def shape(self):
        """The dimensions, a tuple of ints."""
        return _core._tensor_shape(self)

    @property
    def strides(self):
        """The strides in elements, a tuple of ints."""
        return _core._tensor_strides(self)

    @property
    def ndim(self):
        return len(_core._tensor_shape(self))

    @property
    def dtype(self):
        """The element type, a ``ferry.DataType`` (``float32``, ``bool8``, ``complex64``...)."""
        return _core._tensor_dtype(self)

    @property
    def device(self):
        """The ``Device`` of the memory."""
        return Device(*_core._tensor_device(self))

    @property
    def is_read_only(self):
        """Whether the producer marked the memory read-only."""
        return _core._tensor_info(self)[2]


_core._install_tensor_methods(Tensor)


def from_dlpack(x):
    """A ``ferry.Tensor`` sharing the memory of ``x``, any object with ``__dlpack__`` (``x``
    itself when it is a ferry.Tensor). TypeError for anything else."""
    return _core._tensor_from_dlpack(x)
