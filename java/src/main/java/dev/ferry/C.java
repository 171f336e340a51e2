package dev.ferry;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.lang.foreign.AddressLayout;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;

/**
 * The C ABI of include/ferry/c_api.h as the FFM API sees it: the layouts of its structs and one
 * downcall handle per function, made once. The only class that names a C symbol; it is
 * initialized after {@link Loader#lookup()} succeeded (callers check with {@link
 * Ferry#ensureLoaded()}), so a missing library is a {@link FerryException}, never an {@code
 * ExceptionInInitializerError}.
 */
@SuppressWarnings("restricted") // binding native code is what this class is for
final class C {
  private C() {}

  static final Linker LINKER = Linker.nativeLinker();
  private static final SymbolLookup LIB = Loader.lookup();

  /** Every address, for reading object headers and cells by raw address without a segment. */
  static final MemorySegment ALL = MemorySegment.NULL.reinterpret(Long.MAX_VALUE);

  /** A pointer to a pointer-sized cell of unknown content, for out-parameters. */
  static final AddressLayout PTR = ADDRESS;

  // FerryAny: int32 type_index, uint32 small_len, 8-byte union.
  static final long CELL = 16;
  static final long CELL_TYPE = 0;
  static final long CELL_LEN = 4;
  static final long CELL_VALUE = 8;

  // FerryObject: uint32 ref_counter, int32 type_index, deleter.
  static final long OBJ_REFS = 0;
  static final long OBJ_TYPE = 4;
  // FerryStringObject: header, const char* data, uint64 size.
  static final long STR_DATA = 16;
  static final long STR_SIZE = 24;
  // FerryTensorObject: header, DLTensor, uint64 flags.
  static final long T_DATA = 16;
  static final long T_DEVICE_TYPE = 24;
  static final long T_DEVICE_ID = 28;
  static final long T_NDIM = 32;
  static final long T_DTYPE = 36;
  static final long T_SHAPE = 40;
  static final long T_STRIDES = 48;
  static final long T_OFFSET = 56;
  static final long T_FLAGS = 64;
  static final long DL_TENSOR_SIZE = 48;
  static final long READ_ONLY_FLAG = 1L; // DLPACK_FLAG_BITMASK_READ_ONLY

  // FerryErrorFrame: function, file, int32 line, library, address.
  static final long FRAME_SIZE = 40;

  // Type indices.
  static final int NONE = 0;
  static final int INT = 1;
  static final int BOOL = 2;
  static final int FLOAT = 3;
  static final int OPAQUE_PTR = 4;
  static final int DATA_TYPE = 5;
  static final int RAW_STR = 6;
  static final int SMALL_STR = 7;
  static final int DL_TENSOR_PTR = 8;
  static final int STATIC_OBJECT_BEGIN = 64;
  static final int STRING = 65;
  static final int ERROR = 66;
  static final int FUNCTION = 67;
  static final int ARRAY = 68;
  static final int MAP = 69;
  static final int BYTES = 71;
  static final int TENSOR = 72;
  static final int LIST = 73;
  static final int DICT = 74;

  /** FerryDataType passed by value: code, bits, lanes. */
  static final StructLayout DTYPE =
      MemoryLayout.structLayout(
          JAVA_BYTE.withName("code"), JAVA_BYTE.withName("bits"), JAVA_SHORT.withName("lanes"));

  /** DLDevice passed by value: device_type, device_id. */
  static final StructLayout DEVICE =
      MemoryLayout.structLayout(JAVA_INT.withName("device_type"), JAVA_INT.withName("device_id"));

  private static MethodHandle fn(String name, FunctionDescriptor descriptor, Linker.Option... o) {
    MemorySegment symbol =
        LIB.find(name)
            .orElseThrow(
                () ->
                    new FerryException(
                        "ImportError",
                        Loader.path() + " has no symbol " + name + ": a libferry of another ABI"));
    return LINKER.downcallHandle(symbol, descriptor, o);
  }

  private static FunctionDescriptor ints(java.lang.foreign.MemoryLayout... args) {
    return FunctionDescriptor.of(JAVA_INT, args);
  }

  static final MethodHandle INC_REF = fn("FerryObjectIncRef", ints(PTR), Linker.Option.critical(false));
  static final MethodHandle DEC_REF = fn("FerryObjectDecRef", ints(PTR));
  static final MethodHandle TYPE_INDEX_TO_KEY = fn("FerryTypeIndexToKey", ints(JAVA_INT, PTR));
  static final MethodHandle TYPE_KEY_TO_INDEX = fn("FerryTypeKeyToIndex", ints(PTR, PTR));
  static final MethodHandle STRING_CREATE = fn("FerryStringCreate", ints(PTR, JAVA_LONG, PTR));
  static final MethodHandle BYTES_CREATE = fn("FerryBytesCreate", ints(PTR, JAVA_LONG, PTR));
  static final MethodHandle ANY_RELEASE = fn("FerryAnyRelease", ints(PTR));
  static final MethodHandle GET_ATTR = fn("FerryObjectGetAttr", ints(PTR, PTR, PTR));
  static final MethodHandle GET_FIELD_GETTER =
      fn("FerryObjectGetFieldGetter", ints(PTR, PTR, PTR, PTR));
  /** Calls a FerryFieldGetter: (getter, field address, out cell). */
  static final MethodHandle CALL_FIELD_GETTER = LINKER.downcallHandle(ints(PTR, PTR));
  static final MethodHandle SET_ATTR = fn("FerryObjectSetAttr", ints(PTR, PTR, PTR));
  static final MethodHandle ARRAY_GET_DATA = fn("FerryArrayGetData", ints(PTR, PTR, PTR));
  static final MethodHandle LIST_GET_DATA = fn("FerryListGetData", ints(PTR, PTR, PTR));
  static final MethodHandle LIST_APPEND = fn("FerryListAppend", ints(PTR, PTR));
  static final MethodHandle LIST_SET_ITEM = fn("FerryListSetItem", ints(PTR, JAVA_LONG, PTR));
  static final MethodHandle FUNCTION_CREATE = fn("FerryFunctionCreate", ints(PTR, PTR, PTR, PTR));
  static final MethodHandle FUNCTION_SET_STACK_RESERVE =
      fn("FerryFunctionSetStackReserve", ints(PTR, JAVA_LONG));
  static final MethodHandle DELETER_SET_STACK_RESERVE =
      fn("FerryDeleterSetStackReserve", ints(PTR, JAVA_LONG));
  static final MethodHandle FUNCTION_CALL = fn("FerryFunctionCall", ints(PTR, PTR, JAVA_INT, PTR));
  static final MethodHandle FUNCTION_GET_GLOBAL = fn("FerryFunctionGetGlobal", ints(PTR, PTR));
  static final MethodHandle FUNCTION_SET_GLOBAL =
      fn("FerryFunctionSetGlobal", ints(PTR, PTR, JAVA_INT));
  static final MethodHandle FUNCTION_REMOVE_GLOBAL =
      fn("FerryFunctionRemoveGlobal", ints(PTR, PTR));
  static final MethodHandle FUNCTION_LIST_GLOBAL_NAMES =
      fn("FerryFunctionListGlobalNames", ints(PTR, PTR));
  static final MethodHandle TENSOR_EMPTY =
      fn("FerryTensorEmpty", ints(PTR, JAVA_INT, DTYPE, DEVICE, PTR));
  static final MethodHandle TENSOR_FROM_DL_TENSOR =
      fn("FerryTensorFromDLTensor", ints(PTR, JAVA_LONG, PTR, PTR, PTR));
  static final MethodHandle DATA_TYPE_FROM_STRING =
      fn("FerryDataTypeFromString", ints(PTR, PTR));
  static final MethodHandle DATA_TYPE_TO_STRING = fn("FerryDataTypeToString", ints(DTYPE, PTR));
  static final MethodHandle LIBRARY_LOAD = fn("FerryLibraryLoad", ints(PTR));
  static final MethodHandle ERROR_CREATE = fn("FerryErrorCreate", ints(PTR, PTR, PTR, PTR));
  static final MethodHandle ERROR_GET_INFO = fn("FerryErrorGetInfo", ints(PTR, PTR, PTR, PTR));
  static final MethodHandle ERROR_SET_RAISED =
      fn("FerryErrorSetRaised", FunctionDescriptor.ofVoid(PTR));
  static final MethodHandle ERROR_SET_RAISED_FROM_C_STR =
      fn("FerryErrorSetRaisedFromCStr", FunctionDescriptor.ofVoid(PTR, PTR));
  static final MethodHandle ERROR_MOVE_FROM_RAISED =
      fn("FerryErrorMoveFromRaised", FunctionDescriptor.ofVoid(PTR));
  static final MethodHandle ERROR_SET_PAYLOAD = fn("FerryErrorSetPayload", ints(PTR, PTR, PTR));
  static final MethodHandle ERROR_GET_PAYLOAD = fn("FerryErrorGetPayload", ints(PTR, PTR, PTR));
  static final MethodHandle ERROR_GET_FRAMES = fn("FerryErrorGetFrames", ints(PTR, PTR, PTR));

  /** Turns a Throwable out of invokeExact into one this frontend throws. */
  static RuntimeException rethrow(Throwable t) {
    if (t instanceof RuntimeException r) {
      throw r;
    }
    if (t instanceof Error e) {
      throw e;
    }
    throw new FerryException("InternalError", "a downcall threw " + t);
  }

  /** FerryObjectIncRef. */
  static void incRef(long handle) {
    try {
      int rc = (int) INC_REF.invokeExact(MemorySegment.ofAddress(handle));
      assert rc == 0;
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  /** FerryObjectDecRef. */
  static void decRef(long handle) {
    try {
      int rc = (int) DEC_REF.invokeExact(MemorySegment.ofAddress(handle));
      assert rc == 0;
    } catch (Throwable t) {
      throw rethrow(t);
    }
  }

  /** The type index in an object's header. */
  static int typeIndexOf(long handle) {
    return ALL.get(JAVA_INT, handle + OBJ_TYPE);
  }

  /** The strong reference count in an object's header (for tests and diagnostics). */
  static int refCountOf(long handle) {
    return ALL.get(JAVA_INT, handle + OBJ_REFS);
  }

  /** A NUL-terminated UTF-8 C string at `address` (null for NULL). */
  static String cString(MemorySegment address) {
    if (address.equals(MemorySegment.NULL)) {
      return null;
    }
    return address.reinterpret(Long.MAX_VALUE).getString(0);
  }

  /** The text of a ferry.String / ferry.Bytes object. */
  static String stringOf(long handle) {
    long data = ALL.get(JAVA_LONG, handle + STR_DATA);
    long size = ALL.get(JAVA_LONG, handle + STR_SIZE);
    byte[] bytes = new byte[Math.toIntExact(size)];
    MemorySegment.copy(ALL, JAVA_BYTE, data, bytes, 0, bytes.length);
    return new String(bytes, java.nio.charset.StandardCharsets.UTF_8);
  }

  /** The bytes of a ferry.Bytes object. */
  static byte[] bytesOf(long handle) {
    long data = ALL.get(JAVA_LONG, handle + STR_DATA);
    long size = ALL.get(JAVA_LONG, handle + STR_SIZE);
    byte[] bytes = new byte[Math.toIntExact(size)];
    MemorySegment.copy(ALL, JAVA_BYTE, data, bytes, 0, bytes.length);
    return bytes;
  }
}
