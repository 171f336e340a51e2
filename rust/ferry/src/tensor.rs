//! `Tensor`: n-dimensional data shared with C++ (`ferry::Tensor`), NumPy and DLPack, with its
//! shape, dtype and device, and slices of CPU data that honour read-only. The reads of its
//! layout, the checks that make a slice sound and `Element` are the unsafe core's
//! (`raw/tensor.rs`).
use std::fmt;

use crate::any::{Any, AnyView, FromAny, IntoAny};
use crate::error::{c_string, Error, Result};
use crate::object::ObjectRef;
use crate::raw::tensor as core;
use ferry_sys as sys;

pub use crate::raw::tensor::Element;

/// A data type: code (`ferry_sys::kFerryDTypeInt`, ...), bits per lane, lanes.
///
/// ```
/// let t = ferry::DataType::parse("float32")?;
/// assert_eq!((t.code, t.bits, t.lanes), (ferry::sys::kFerryDTypeFloat, 32, 1));
/// assert_eq!(t.to_string(), "float32");
/// assert_eq!(ferry::DataType::parse("nonsense").unwrap_err().kind(), "ValueError");
/// // A value cell of its own, as C++ `DataType` fields hold; its text form converts too.
/// let any = ferry::IntoAny::into_any(t);
/// assert_eq!(any.type_key(), "DataType");
/// assert_eq!(any.cast::<ferry::DataType>()?, t);
/// assert_eq!(ferry::IntoAny::into_any("int8").cast::<ferry::DataType>()?.to_string(), "int8");
/// assert_eq!(ferry::IntoAny::into_any(3i64).cast::<ferry::DataType>().unwrap_err().kind(), "TypeError");
/// # Ok::<(), ferry::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DataType {
    /// The type code (`kFerryDTypeInt`, `kFerryDTypeUInt`, `kFerryDTypeFloat`, ...).
    pub code: u8,
    /// Bits per lane.
    pub bits: u8,
    /// Lanes (1 for a scalar type).
    pub lanes: u16,
}

impl DataType {
    /// Parses the text form (`"int64"`, `"float32x4"`, `"bool"`); ValueError otherwise.
    pub fn parse(text: &str) -> Result<DataType> {
        core::dtype_parse(&c_string(text)).map(DataType::from)
    }

    fn raw(self) -> sys::FerryDataType {
        sys::FerryDataType {
            code: self.code,
            bits: self.bits,
            lanes: self.lanes,
        }
    }
}

/// A DataType is a plain value cell (`kFerryDataType`), as C++ `DataType` fields hold.
impl IntoAny for DataType {
    fn into_any(self) -> Any {
        core::dtype_cell(self.raw())
    }
}
/// A DataType cell, or the text form of one (`"float32"`), as C++ converts.
impl FromAny for DataType {
    fn type_str() -> std::string::String {
        "DataType".into()
    }
    fn from_view(view: &AnyView<'_>) -> Option<DataType> {
        if let Some(raw) = core::dtype_of_view(view) {
            return Some(DataType::from(raw));
        }
        DataType::parse(&view.cast::<std::string::String>().ok()?).ok()
    }
}

impl From<sys::FerryDataType> for DataType {
    fn from(raw: sys::FerryDataType) -> DataType {
        DataType {
            code: raw.code,
            bits: raw.bits,
            lanes: raw.lanes,
        }
    }
}

impl fmt::Display for DataType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(text) = core::dtype_to_string(self.raw()) else {
            return write!(f, "DataType({}, {}, {})", self.code, self.bits, self.lanes);
        };
        let s: crate::String = text.downcast().map_err(|_| fmt::Error)?;
        write!(f, "{s}")
    }
}

/// A device: DLPack's device type (`ferry_sys::kDLCPU`, ...) and index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Device {
    /// DLPack's `DLDeviceType`.
    pub device_type: i32,
    /// The device's index.
    pub device_id: i32,
}

impl Device {
    /// The CPU.
    pub const CPU: Device = Device {
        device_type: sys::kDLCPU,
        device_id: 0,
    };
}

/// A ferry.Tensor: shape, strides, dtype, device and data, shared by reference with C++,
/// Python (NumPy, DLPack) and every holder. Data made read-only by its producer (a read-only
/// NumPy array, [`Tensor::from_vec_read_only`]) stays so: [`Tensor::as_mut_slice`] refuses it.
///
/// ```
/// use ferry::Tensor;
/// let t = Tensor::from_vec(&[2, 3], vec![1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0])?;
/// assert_eq!(t.shape(), [2, 3]);
/// assert_eq!(t.dtype().to_string(), "float64");
/// assert_eq!(t.as_slice::<f64>()?[4], 5.0);
/// assert_eq!(t.as_slice::<f32>().unwrap_err().kind(), "TypeError");
/// let mut frozen = Tensor::from_vec_read_only(&[2], vec![1i32, 2])?;
/// let err = frozen.as_mut_slice::<i32>().unwrap_err();
/// assert_eq!(err.kind(), "ValueError");
/// # Ok::<(), ferry::Error>(())
/// ```
#[repr(transparent)]
#[derive(Clone, Debug)]
pub struct Tensor {
    obj: ObjectRef,
}

impl Tensor {
    /// A new compact tensor of `shape`. On the CPU its data is zeroed and owned by the tensor
    /// alone (so [`as_mut_slice`](Tensor::as_mut_slice) writes it) when its elements are whole
    /// bytes; otherwise it is uninitialized. ValueError for a negative dimension, an invalid
    /// dtype or a size no allocator has; an error naming the device for one without an
    /// allocator.
    pub fn empty(shape: &[i64], dtype: DataType, device: Device) -> Result<Tensor> {
        let device = sys::DLDevice {
            device_type: device.device_type,
            device_id: device.device_id,
        };
        core::empty(shape, dtype, device).map(|obj| Tensor { obj })
    }

    /// A CPU tensor of `shape` over `data` (moved in, freed with the tensor, no copy);
    /// ValueError when the shape does not hold `data.len()` elements.
    pub fn from_vec<T: Element>(shape: &[i64], data: Vec<T>) -> Result<Tensor> {
        Tensor::from_vec_with_flags(shape, data, 0)
    }

    /// As [`from_vec`](Tensor::from_vec), marked read-only (`DLPACK_FLAG_BITMASK_READ_ONLY`):
    /// C++, Python and Rust may read the data but not get it writable.
    pub fn from_vec_read_only<T: Element>(shape: &[i64], data: Vec<T>) -> Result<Tensor> {
        Tensor::from_vec_with_flags(shape, data, sys::DLPACK_FLAG_BITMASK_READ_ONLY)
    }

    fn from_vec_with_flags<T: Element>(shape: &[i64], data: Vec<T>, flags: u64) -> Result<Tensor> {
        core::from_vec(shape, data, flags).map(|obj| Tensor { obj })
    }

    /// The untyped reference.
    pub fn as_object(&self) -> &ObjectRef {
        &self.obj
    }

    /// The number of dimensions.
    pub fn ndim(&self) -> usize {
        self.shape().len()
    }

    /// The extent of each dimension.
    pub fn shape(&self) -> &[i64] {
        core::shape(&self.obj)
    }

    /// The stride of each dimension, in elements (always set).
    pub fn strides(&self) -> &[i64] {
        core::strides(&self.obj)
    }

    /// The number of elements.
    pub fn numel(&self) -> usize {
        core::numel(&self.obj)
    }

    /// The data type.
    pub fn dtype(&self) -> DataType {
        core::dtype(&self.obj)
    }

    /// The device.
    pub fn device(&self) -> Device {
        let d = core::layout(&self.obj).dl_tensor.device;
        Device {
            device_type: d.device_type,
            device_id: d.device_id,
        }
    }

    /// Whether the producer marked the data read-only.
    pub fn is_read_only(&self) -> bool {
        core::is_read_only(&self.obj)
    }

    /// Whether the elements are compact, in row-major order (as C++'s `IsContiguous`: a tensor
    /// of no elements is, whatever its strides).
    pub fn is_contiguous(&self) -> bool {
        core::is_contiguous(&self.obj)
    }

    /// The elements, borrowed: TypeError for another dtype, ValueError for data not on the
    /// CPU or not contiguous.
    pub fn as_slice<T: Element>(&self) -> Result<&[T]> {
        core::as_slice(&self.obj)
    }

    /// A copy of the elements.
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
        self.as_slice().map(<[T]>::to_vec)
    }
}

impl From<Tensor> for ObjectRef {
    fn from(t: Tensor) -> ObjectRef {
        t.obj
    }
}
impl IntoAny for Tensor {
    fn into_any(self) -> Any {
        self.obj.into_any()
    }
}
impl FromAny for Tensor {
    fn type_str() -> std::string::String {
        "ferry.Tensor".into()
    }
    fn from_view(view: &AnyView<'_>) -> Option<Tensor> {
        // Not a borrowed DLTensor*: a Tensor may be kept, and that pointer dies with the call.
        (view.type_index() == sys::kFerryTensor)
            .then(|| view.object().map(|obj| Tensor { obj }))
            .flatten()
    }
}
crate::any::std_conversions!(into: Tensor);
crate::any::std_conversions!(from: Tensor);
