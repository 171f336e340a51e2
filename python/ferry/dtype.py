"""``DataType``: a data type such as ``int64`` or ``float32x4``, as a ``str`` subclass."""

from . import _core

__all__ = ["DataType"]


class DataType(str):
    """A data type (type code, bits, lanes) in its text form: ``DataType("float32x4")``.

    It is a ``str``, so it compares with plain strings; passed to C++ it becomes a
    ``ferry::DataType`` (while a plain ``str`` stays a string). Invalid text is a ValueError.
    """

    __slots__ = ()
    CODES = {0: "int", 1: "uint", 2: "float", 3: "handle", 4: "bfloat", 5: "complex", 6: "bool"}

    def __new__(cls, text):
        text = str(text)
        _core._dtype_parse(text)  # validates: ValueError naming the text
        return super().__new__(cls, text)

    @property
    def type_code(self):
        return _core._dtype_parse(self)[0]

    @property
    def bits(self):
        return _core._dtype_parse(self)[1]

    @property
    def lanes(self):
        return _core._dtype_parse(self)[2]

    def __repr__(self):
        return f"DataType({str.__repr__(self)})"

    def __reduce__(self):
        return (DataType, (str(self),))


_core._set_dtype_class(DataType)
