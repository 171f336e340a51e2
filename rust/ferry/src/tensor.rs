//! `Tensor`: n-dimensional data shared with C++ (`ferry::Tensor`), NumPy and DLPack, with its
//! shape, dtype and device, and slices of CPU data that honour read-only.
use std::ffi::c_void;
use std::fmt;

use crate::any::{Any, AnyView, FromAny, IntoAny};
use crate::error::{c_string, Error, Result};
use crate::object::{ObjectRef, ObjectType};
use ferry_sys as sys;

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
        let text = c_string(text);
        let mut raw = sys::FerryDataType {
            code: 0,
            bits: 0,
            lanes: 0,
        };
        // SAFETY: a valid C string and out pointer.
        Error::check(unsafe { sys::FerryDataTypeFromString(text.as_ptr(), &mut raw) })?;
        Ok(raw.into())
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
        let cell = sys::FerryAny {
            type_index: sys::kFerryDataType,
            small_len: 0,
            value: sys::FerryAnyValue {
                v_dtype: self.raw(),
            },
        };
        // SAFETY: a POD cell, which owns no reference.
        unsafe { Any::from_raw(cell) }
    }
}
/// A DataType cell, or the text form of one (`"float32"`), as C++ converts.
impl FromAny for DataType {
    fn type_str() -> std::string::String {
        "DataType".into()
    }
    fn from_view(view: &AnyView<'_>) -> Option<DataType> {
        if view.type_index() == sys::kFerryDataType {
            // SAFETY: a DataType cell holds v_dtype.
            return Some(DataType::from(unsafe { view.raw().value.v_dtype }));
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
        let mut handle: sys::FerryObjectHandle = std::ptr::null_mut();
        // SAFETY: a new String reference on success.
        if unsafe { sys::FerryDataTypeToString(self.raw(), &mut handle) } != 0 {
            drop(Error::take_raised());
            return write!(f, "DataType({}, {}, {})", self.code, self.bits, self.lanes);
        }
        // SAFETY: a new reference to a String.
        let s: crate::String = unsafe { ObjectRef::from_owned_handle(handle) }
            .downcast()
            .map_err(|_| fmt::Error)?;
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

/// A Rust number type a tensor's elements may have, with its DLPack data type.
///
/// # Safety
/// `DTYPE` describes exactly the layout of `Self` (size, signedness, representation), and every
/// bit pattern of that size is a valid `Self`.
pub unsafe trait Element: Copy + 'static {
    /// The data type of the elements.
    const DTYPE: DataType;
}

macro_rules! elements {
    ($($t:ty => $code:expr, $bits:expr);* $(;)?) => {$(
        // SAFETY: the code and bits are this primitive's; every bit pattern is valid.
        unsafe impl Element for $t {
            const DTYPE: DataType = DataType { code: $code, bits: $bits, lanes: 1 };
        }
    )*};
}
elements! {
    i8 => sys::kFerryDTypeInt, 8; i16 => sys::kFerryDTypeInt, 16;
    i32 => sys::kFerryDTypeInt, 32; i64 => sys::kFerryDTypeInt, 64;
    u8 => sys::kFerryDTypeUInt, 8; u16 => sys::kFerryDTypeUInt, 16;
    u32 => sys::kFerryDTypeUInt, 32; u64 => sys::kFerryDTypeUInt, 64;
    f32 => sys::kFerryDTypeFloat, 32; f64 => sys::kFerryDTypeFloat, 64;
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
/// let frozen = Tensor::from_vec_read_only(&[2], vec![1i32, 2])?;
/// // SAFETY: no other view of the data is in use.
/// let err = unsafe { frozen.as_mut_slice::<i32>() }.unwrap_err();
/// assert_eq!(err.kind(), "ValueError");
/// # Ok::<(), ferry::Error>(())
/// ```
#[repr(transparent)]
#[derive(Clone, Debug)]
pub struct Tensor {
    obj: ObjectRef,
}

// SAFETY: repr(transparent) over ObjectRef; accepts only ferry.Tensor objects.
unsafe impl ObjectType for Tensor {
    const TYPE_KEY: &'static str = "ferry.Tensor";
    fn accepts(obj: &ObjectRef) -> bool {
        obj.type_index() == sys::kFerryTensor
    }
}

/// What a tensor made by `from_vec` owns: the Vec, freed when the tensor dies.
unsafe extern "C" fn drop_owner<T>(owner: *mut c_void) {
    // SAFETY: the Box<Vec<T>> given to FerryTensorFromDLTensor, released once; dropping a Vec of
    // Copy elements cannot panic.
    drop(unsafe { Box::from_raw(owner as *mut Vec<T>) });
}

impl Tensor {
    /// A new compact tensor of `shape` (uninitialized data: zeroed on the CPU is not promised).
    pub fn empty(shape: &[i64], dtype: DataType, device: Device) -> Result<Tensor> {
        let ndim = i32::try_from(shape.len())
            .map_err(|_| Error::new("ValueError", "too many dimensions"))?;
        let mut handle: sys::FerryObjectHandle = std::ptr::null_mut();
        let device = sys::DLDevice {
            device_type: device.device_type,
            device_id: device.device_id,
        };
        // SAFETY: `ndim` readable dims; a new reference on success.
        Error::check(unsafe {
            sys::FerryTensorEmpty(shape.as_ptr(), ndim, dtype.raw(), device, &mut handle)
        })?;
        Ok(Tensor {
            // SAFETY: a new reference.
            obj: unsafe { ObjectRef::from_owned_handle(handle) },
        })
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
        let numel = shape
            .iter()
            .try_fold(1i64, |n, &d| if d < 0 { None } else { n.checked_mul(d) });
        if numel != i64::try_from(data.len()).ok() {
            return Err(Error::new(
                "ValueError",
                &format!(
                    "a tensor of shape {shape:?} does not hold {} elements",
                    data.len()
                ),
            ));
        }
        let ndim = i32::try_from(shape.len())
            .map_err(|_| Error::new("ValueError", "too many dimensions"))?;
        let mut owner = Box::new(data);
        let dtype = T::DTYPE;
        let view = sys::DLTensor {
            data: owner.as_mut_ptr().cast(),
            device: sys::DLDevice {
                device_type: sys::kDLCPU,
                device_id: 0,
            },
            ndim,
            dtype: sys::DLDataType {
                code: dtype.code,
                bits: dtype.bits,
                lanes: dtype.lanes,
            },
            shape: shape.as_ptr() as *mut i64,
            strides: std::ptr::null_mut(),
            byte_offset: 0,
        };
        let owner = Box::into_raw(owner) as *mut c_void;
        let mut handle: sys::FerryObjectHandle = std::ptr::null_mut();
        // SAFETY: the view describes the Vec's buffer (shape and strides are copied); the tensor
        // owns `owner` on success and frees it with drop_owner::<T>; on failure we still do.
        let rc = unsafe {
            sys::FerryTensorFromDLTensor(&view, flags, owner, Some(drop_owner::<T>), &mut handle)
        };
        if rc != 0 {
            // SAFETY: not taken by the failed call.
            unsafe { drop_owner::<T>(owner) };
            return Err(Error::take_raised());
        }
        Ok(Tensor {
            // SAFETY: a new reference.
            obj: unsafe { ObjectRef::from_owned_handle(handle) },
        })
    }

    fn raw(&self) -> &sys::FerryTensorObject {
        // SAFETY: a live ferry.Tensor has this layout; its fields never change.
        unsafe { &*(self.obj.handle() as *const sys::FerryTensorObject) }
    }

    /// The untyped reference.
    pub fn as_object(&self) -> &ObjectRef {
        &self.obj
    }

    /// The number of dimensions.
    pub fn ndim(&self) -> usize {
        self.raw().dl_tensor.ndim.max(0) as usize
    }

    /// The extent of each dimension.
    pub fn shape(&self) -> &[i64] {
        let dl = &self.raw().dl_tensor;
        if self.ndim() == 0 {
            return &[];
        }
        // SAFETY: shape is always set, ndim entries, alive as long as the tensor.
        unsafe { std::slice::from_raw_parts(dl.shape, self.ndim()) }
    }

    /// The stride of each dimension, in elements (always set).
    pub fn strides(&self) -> &[i64] {
        let dl = &self.raw().dl_tensor;
        if self.ndim() == 0 {
            return &[];
        }
        // SAFETY: strides are always set (computed when the producer gave none), ndim entries.
        unsafe { std::slice::from_raw_parts(dl.strides, self.ndim()) }
    }

    /// The number of elements.
    pub fn numel(&self) -> usize {
        self.shape().iter().map(|&d| d.max(0) as usize).product()
    }

    /// The data type.
    pub fn dtype(&self) -> DataType {
        let t = self.raw().dl_tensor.dtype;
        DataType {
            code: t.code,
            bits: t.bits,
            lanes: t.lanes,
        }
    }

    /// The device.
    pub fn device(&self) -> Device {
        let d = self.raw().dl_tensor.device;
        Device {
            device_type: d.device_type,
            device_id: d.device_id,
        }
    }

    /// Whether the producer marked the data read-only.
    pub fn is_read_only(&self) -> bool {
        self.raw().flags & sys::DLPACK_FLAG_BITMASK_READ_ONLY != 0
    }

    /// Whether the elements are compact, in row-major order.
    pub fn is_contiguous(&self) -> bool {
        let mut expected = 1i64;
        for (&dim, &stride) in self.shape().iter().zip(self.strides()).rev() {
            if dim != 1 && stride != expected {
                return false;
            }
            expected = expected.saturating_mul(dim);
        }
        true
    }

    /// Checks that the data can be viewed as a slice of `T`; its first element.
    fn check_slice<T: Element>(&self) -> Result<*mut T> {
        if self.dtype() != T::DTYPE {
            return Err(Error::new(
                "TypeError",
                &format!(
                    "a tensor of {} viewed as a slice of {}",
                    self.dtype(),
                    T::DTYPE
                ),
            ));
        }
        if self.device().device_type != sys::kDLCPU {
            return Err(Error::new(
                "ValueError",
                &format!(
                    "the tensor's data is on device type {}, not the CPU",
                    self.device().device_type
                ),
            ));
        }
        if !self.is_contiguous() {
            return Err(Error::new(
                "ValueError",
                "the tensor is not contiguous: a slice needs compact row-major data",
            ));
        }
        let dl = &self.raw().dl_tensor;
        // SAFETY: byte_offset stays within the allocation the tensor describes.
        let first = unsafe { (dl.data as *mut u8).add(dl.byte_offset as usize) } as *mut T;
        if self.numel() > 0
            && (first.is_null() || first.align_offset(std::mem::align_of::<T>()) != 0)
        {
            return Err(Error::new(
                "ValueError",
                "the tensor's data is not aligned for its type",
            ));
        }
        Ok(first)
    }

    /// The elements, borrowed: TypeError for another dtype, ValueError for data not on the
    /// CPU or not contiguous.
    pub fn as_slice<T: Element>(&self) -> Result<&[T]> {
        let first = self.check_slice::<T>()?;
        if self.numel() == 0 {
            return Ok(&[]);
        }
        // SAFETY: checked: CPU memory of numel compact, aligned T that lives as long as the
        // tensor; writers through other holders are excluded by as_mut_slice's contract.
        Ok(unsafe { std::slice::from_raw_parts(first, self.numel()) })
    }

    /// The elements, writable: as [`as_slice`](Tensor::as_slice), and a ValueError for a
    /// read-only tensor.
    ///
    /// # Safety
    /// The data may be shared (other holders of the tensor, other tensors or NumPy arrays over
    /// the same memory): the caller ensures nothing else reads or writes it while the slice
    /// lives.
    #[allow(clippy::mut_from_ref)]
    pub unsafe fn as_mut_slice<T: Element>(&self) -> Result<&mut [T]> {
        if self.is_read_only() {
            return Err(Error::new(
                "ValueError",
                "the tensor is read-only: its producer did not allow writes",
            ));
        }
        let first = self.check_slice::<T>()?;
        if self.numel() == 0 {
            return Ok(&mut []);
        }
        // SAFETY: as in as_slice; exclusivity is the caller's contract.
        Ok(unsafe { std::slice::from_raw_parts_mut(first, self.numel()) })
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
