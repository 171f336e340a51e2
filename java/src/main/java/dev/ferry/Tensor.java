package dev.ferry;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.ref.Reference;

/**
 * A ferry.Tensor (a DLPack tensor): shape, strides, dtype, device, and for CPU tensors a {@link
 * MemorySegment} over its data ({@link #data()}), read-only when the tensor is.
 *
 * <pre>{@code
 * try (Tensor t = Tensor.empty(new long[] {3}, DataType.FLOAT64)) {
 *   t.data().setAtIndex(java.lang.foreign.ValueLayout.JAVA_DOUBLE, 0, 1.5);
 * }
 * }</pre>
 */
@SuppressWarnings("restricted") // a sized view of memory the tensor owns
public final class Tensor extends Wrapper implements FerryObject {
  /** DLPack's kDLCPU. */
  public static final int CPU = 1;

  Tensor(long address) {
    super(address);
  }

  /** A new compact CPU tensor of {@code shape} and {@code dtype} (contents not initialized). */
  public static Tensor empty(long[] shape, DataType dtype) {
    Ferry.ensureLoaded();
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment dims = arena.allocate(JAVA_LONG, Math.max(1, shape.length));
      MemorySegment.copy(shape, 0, dims, JAVA_LONG, 0, shape.length);
      MemorySegment dt = arena.allocate(C.DTYPE);
      dt.set(JAVA_BYTE, 0, (byte) dtype.code());
      dt.set(JAVA_BYTE, 1, (byte) dtype.bits());
      dt.set(JAVA_SHORT, 2, (short) dtype.lanes());
      MemorySegment device = arena.allocate(C.DEVICE);
      device.set(JAVA_INT, 0, CPU);
      device.set(JAVA_INT, 4, 0);
      MemorySegment out = arena.allocate(8);
      int rc = (int) C.TENSOR_EMPTY.invokeExact(dims, shape.length, dt, device, out);
      Values.check(rc);
      return new Tensor(out.get(JAVA_LONG, 0));
    } catch (Throwable t) {
      throw C.rethrow(t);
    }
  }

  private long at(long offset) {
    return handle.get(this) + offset;
  }

  /** The number of dimensions. */
  public int ndim() {
    try {
      return C.ALL.get(JAVA_INT, at(C.T_NDIM));
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /** The extent of each dimension. */
  public long[] shape() {
    try {
      return longs(C.ALL.get(JAVA_LONG, at(C.T_SHAPE)), ndim());
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /** The stride of each dimension, in elements. */
  public long[] strides() {
    try {
      return longs(C.ALL.get(JAVA_LONG, at(C.T_STRIDES)), ndim());
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  private static long[] longs(long address, int n) {
    long[] out = new long[n];
    MemorySegment.copy(C.ALL, JAVA_LONG, address, out, 0, n);
    return out;
  }

  /** The element type. */
  public DataType dtype() {
    try {
      long a = at(C.T_DTYPE);
      return new DataType(
          Byte.toUnsignedInt(C.ALL.get(JAVA_BYTE, a)),
          Byte.toUnsignedInt(C.ALL.get(JAVA_BYTE, a + 1)),
          Short.toUnsignedInt(C.ALL.get(JAVA_SHORT, a + 2)));
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /** DLPack's device type ({@link #CPU} = 1). */
  public int deviceType() {
    try {
      return C.ALL.get(JAVA_INT, at(C.T_DEVICE_TYPE));
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /** Whether the tensor's memory is read-only (in C++ too). */
  public boolean isReadOnly() {
    try {
      return (C.ALL.get(JAVA_LONG, at(C.T_FLAGS)) & C.READ_ONLY_FLAG) != 0;
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /** The number of elements. */
  public long numel() {
    long n = 1;
    for (long d : shape()) {
      n = Math.multiplyExact(n, d);
    }
    return n;
  }

  /**
   * The tensor's CPU memory: from its first element to the end of its last (strides followed),
   * read-only when the tensor is. The segment holds its own reference to the tensor, so it stays
   * valid after this wrapper is closed, until the segment itself is unreachable. A tensor on
   * another device is a FerryException ("ValueError").
   */
  public MemorySegment data() {
    try {
      long h = handle.get(this);
      if (deviceType() != CPU) {
        throw new FerryException(
            "ValueError", "data() of a tensor on device type " + deviceType() + ": only CPU"
                + " memory can be viewed from Java");
      }
      long[] shape = shape();
      long[] strides = strides();
      long element = dtype().byteSize();
      long bytes = element;
      for (int i = 0; i < shape.length; i++) {
        if (shape[i] == 0) {
          bytes = 0;
          break;
        }
        if (strides[i] < 0) {
          throw new FerryException("ValueError", "data() of a tensor with a negative stride");
        }
        bytes = Math.addExact(bytes, Math.multiplyExact(Math.multiplyExact(shape[i] - 1,
            strides[i]), element));
      }
      long base = C.ALL.get(JAVA_LONG, h + C.T_DATA) + C.ALL.get(JAVA_LONG, h + C.T_OFFSET);
      C.incRef(h);
      MemorySegment view =
          MemorySegment.ofAddress(base).reinterpret(bytes, Arena.ofAuto(), s -> C.decRef(h));
      return isReadOnly() ? view.asReadOnly() : view;
    } finally {
      Reference.reachabilityFence(this);
    }
  }

  /** A read-only tensor over the same memory (C++ then refuses to write through it). */
  public Tensor readOnlyView() {
    try {
      long h = handle.get(this);
      try (Arena arena = Arena.ofConfined()) {
        MemorySegment out = arena.allocate(8);
        C.incRef(h);
        int rc = (int) C.TENSOR_FROM_DL_TENSOR.invokeExact(
            MemorySegment.ofAddress(h + C.T_DATA), C.READ_ONLY_FLAG, MemorySegment.ofAddress(h),
            Callbacks.OWNER_RELEASE, out);
        if (rc != 0) {
          C.decRef(h);
          throw Errors.take();
        }
        return new Tensor(out.get(JAVA_LONG, 0));
      } catch (Throwable t) {
        throw C.rethrow(t);
      }
    } finally {
      Reference.reachabilityFence(this);
    }
  }
}
