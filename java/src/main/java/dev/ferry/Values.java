package dev.ferry;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_DOUBLE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import java.lang.foreign.MemorySegment;
import java.lang.ref.Reference;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The one conversion between Java values and FerryAny cells, both ways (DESIGN "Wave 3 /
 * Java"): Long/Integer/Short/Byte to int, Double/Float to float, Boolean, String, null to None,
 * FerryObject (borrowed, or a new reference for a result), Function.Body (a new Function),
 * java.util.List/Collection and Object[] to Array, java.util.Map to Map, byte[] to Bytes,
 * DataType, MemorySegment to an opaque pointer. Cells are addressed by raw address ({@link
 * C#ALL}); every object reference a conversion makes for a call is recorded in the {@link
 * Scratch} frame and released when the call ends.
 */
final class Values {
  private Values() {}

  private static final ConcurrentHashMap<Integer, String> TYPE_KEYS = new ConcurrentHashMap<>();
  private static final ConcurrentHashMap<String, Long> BUILTINS = new ConcurrentHashMap<>();

  /** The address of a wrapper's object; a FerryException when it was closed. */
  static long addr(FerryObject o) {
    return Owned.of(o).get(o);
  }

  static void setNone(long cell) {
    C.ALL.set(JAVA_LONG, cell, 0L);
    C.ALL.set(JAVA_LONG, cell + C.CELL_VALUE, 0L);
  }

  private static void setHeader(long cell, int type, int len) {
    C.ALL.set(JAVA_INT, cell + C.CELL_TYPE, type);
    C.ALL.set(JAVA_INT, cell + C.CELL_LEN, len);
  }

  private static void setObject(long cell, long handle) {
    setHeader(cell, C.typeIndexOf(handle), 0);
    C.ALL.set(JAVA_LONG, cell + C.CELL_VALUE, handle);
  }

  /**
   * Writes `value` into the cell at `cell`. With `owned` the cell owns what it holds (a call's
   * result, given to C++); otherwise it borrows, and references made here are released with the
   * frame of `scratch`.
   */
  static void store(Object value, long cell, Scratch scratch, boolean owned) {
    if (value == null) {
      setNone(cell);
    } else if (value instanceof Long l) {
      setInt(cell, l);
    } else if (value instanceof Integer i) {
      setInt(cell, i);
    } else if (value instanceof Double d) {
      setHeader(cell, C.FLOAT, 0);
      C.ALL.set(JAVA_DOUBLE, cell + C.CELL_VALUE, d);
    } else if (value instanceof Boolean b) {
      setHeader(cell, C.BOOL, 0);
      C.ALL.set(JAVA_LONG, cell + C.CELL_VALUE, b ? 1L : 0L);
    } else if (value instanceof String s) {
      storeString(s, cell, scratch, owned);
    } else if (value instanceof FerryObject o) {
      long handle = addr(o);
      if (owned) {
        C.incRef(handle);
      }
      setObject(cell, handle);
    } else if (value instanceof Short s) {
      setInt(cell, s);
    } else if (value instanceof Byte b) {
      setInt(cell, b);
    } else if (value instanceof Float f) {
      setHeader(cell, C.FLOAT, 0);
      C.ALL.set(JAVA_DOUBLE, cell + C.CELL_VALUE, f.doubleValue());
    } else if (value instanceof Function.Body body) {
      storeNew(Function.newHandle(body), cell, scratch, owned);
    } else if (value instanceof DataType dt) {
      setHeader(cell, C.DATA_TYPE, 0);
      C.ALL.set(JAVA_LONG, cell + C.CELL_VALUE, 0L);
      C.ALL.set(JAVA_BYTE, cell + C.CELL_VALUE, (byte) dt.code());
      C.ALL.set(JAVA_BYTE, cell + C.CELL_VALUE + 1, (byte) dt.bits());
      C.ALL.set(JAVA_SHORT, cell + C.CELL_VALUE + 2, (short) dt.lanes());
    } else if (value instanceof MemorySegment segment) {
      setHeader(cell, C.OPAQUE_PTR, 0);
      C.ALL.set(JAVA_LONG, cell + C.CELL_VALUE, segment.address());
    } else if (value instanceof byte[] bytes) {
      storeNew(newStringOrBytes(bytes, false, scratch), cell, scratch, owned);
    } else if (value instanceof Collection<?> items) {
      storeNew(callBuiltinForObject("ferry.Array", items.toArray(), scratch), cell, scratch, owned);
    } else if (value instanceof Object[] items) {
      storeNew(callBuiltinForObject("ferry.Array", items, scratch), cell, scratch, owned);
    } else if (value instanceof Map<?, ?> map) {
      Object[] pairs = new Object[2 * map.size()];
      int i = 0;
      for (Map.Entry<?, ?> e : map.entrySet()) {
        pairs[i++] = e.getKey();
        pairs[i++] = e.getValue();
      }
      storeNew(callBuiltinForObject("ferry.Map", pairs, scratch), cell, scratch, owned);
    } else {
      throw new FerryException(
          "TypeError",
          "cannot convert a "
              + value.getClass().getName()
              + " to a Ferry value (expected Long, Integer, Double, Boolean, String, null,"
              + " List, Map, byte[], FerryObject, Function or Function.Body)");
    }
  }

  private static void setInt(long cell, long v) {
    setHeader(cell, C.INT, 0);
    C.ALL.set(JAVA_LONG, cell + C.CELL_VALUE, v);
  }

  /** Puts a new reference into the cell: given away when owned, released with the frame else. */
  private static void storeNew(long handle, long cell, Scratch scratch, boolean owned) {
    if (!owned) {
      scratch.temp(handle);
    }
    setObject(cell, handle);
  }

  private static void storeString(String s, long cell, Scratch scratch, boolean owned) {
    byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
    if (!owned && utf8.length <= 7) {
      setHeader(cell, C.SMALL_STR, utf8.length);
      C.ALL.set(JAVA_LONG, cell + C.CELL_VALUE, 0L);
      MemorySegment.copy(utf8, 0, C.ALL, JAVA_BYTE, cell + C.CELL_VALUE, utf8.length);
      return;
    }
    storeNew(newString(utf8, scratch), cell, scratch, owned);
  }

  /** A new ferry.String holding `utf8`. */
  static long newString(byte[] utf8, Scratch scratch) {
    return newStringOrBytes(utf8, true, scratch);
  }

  /** A new ferry.String (`text`) or ferry.Bytes holding a copy of `data`. */
  private static long newStringOrBytes(byte[] data, boolean text, Scratch scratch) {
    long mark = scratch.mark();
    try {
      MemorySegment copy = MemorySegment.ofAddress(scratch.cString(data));
      MemorySegment out = MemorySegment.ofAddress(scratch.alloc(8));
      int rc = text
          ? (int) C.STRING_CREATE.invokeExact(copy, (long) data.length, out)
          : (int) C.BYTES_CREATE.invokeExact(copy, (long) data.length, out);
      check(rc);
      return C.ALL.get(JAVA_LONG, out.address());
    } catch (Throwable t) {
      throw C.rethrow(t);
    } finally {
      scratch.release(mark);
    }
  }

  /** The Java value of the cell at `cell`; `owned`: the cell's reference is taken over. */
  static Object load(long cell, boolean owned) {
    int type = C.ALL.get(JAVA_INT, cell + C.CELL_TYPE);
    switch (type) {
      case C.NONE:
        return null;
      case C.INT:
        return C.ALL.get(JAVA_LONG, cell + C.CELL_VALUE);
      case C.BOOL:
        return C.ALL.get(JAVA_LONG, cell + C.CELL_VALUE) != 0;
      case C.FLOAT:
        return C.ALL.get(JAVA_DOUBLE, cell + C.CELL_VALUE);
      case C.SMALL_STR: {
        int len = C.ALL.get(JAVA_INT, cell + C.CELL_LEN);
        byte[] bytes = new byte[len];
        MemorySegment.copy(C.ALL, JAVA_BYTE, cell + C.CELL_VALUE, bytes, 0, len);
        return new String(bytes, StandardCharsets.UTF_8);
      }
      case C.RAW_STR: {
        long p = C.ALL.get(JAVA_LONG, cell + C.CELL_VALUE);
        int len = C.ALL.get(JAVA_INT, cell + C.CELL_LEN);
        if (len == 0) {
          return C.cString(MemorySegment.ofAddress(p));
        }
        byte[] bytes = new byte[len];
        MemorySegment.copy(C.ALL, JAVA_BYTE, p, bytes, 0, len);
        return new String(bytes, StandardCharsets.UTF_8);
      }
      case C.DATA_TYPE:
        return new DataType(
            Byte.toUnsignedInt(C.ALL.get(JAVA_BYTE, cell + C.CELL_VALUE)),
            Byte.toUnsignedInt(C.ALL.get(JAVA_BYTE, cell + C.CELL_VALUE + 1)),
            Short.toUnsignedInt(C.ALL.get(JAVA_SHORT, cell + C.CELL_VALUE + 2)));
      case C.OPAQUE_PTR:
      case C.DL_TENSOR_PTR:
        return MemorySegment.ofAddress(C.ALL.get(JAVA_LONG, cell + C.CELL_VALUE));
      default:
        if (type < C.STATIC_OBJECT_BEGIN) {
          throw new FerryException("TypeError", "a value of unknown type index " + type);
        }
        long handle = C.ALL.get(JAVA_LONG, cell + C.CELL_VALUE);
        if (!owned) {
          C.incRef(handle);
        }
        return wrap(handle);
    }
  }

  /** The Java value of an object, taking over one reference to it. */
  static Object wrap(long handle) {
    switch (C.typeIndexOf(handle)) {
      case C.STRING: {
        String s = C.stringOf(handle);
        C.decRef(handle);
        return s;
      }
      case C.BYTES: {
        byte[] b = C.bytesOf(handle);
        C.decRef(handle);
        return b;
      }
      case C.FUNCTION:
        return new Function(handle);
      case C.ARRAY:
        return new FerryArray(handle);
      case C.MAP:
        return new FerryMap(handle);
      case C.LIST:
        return new FerryList(handle);
      case C.DICT:
        return new FerryDict(handle);
      case C.TENSOR:
        return new Tensor(handle);
      default:
        return new Node(handle);
    }
  }

  /** Throws the thread's raised error when `rc` says a C call failed. */
  static void check(int rc) {
    if (rc != 0) {
      throw Errors.take();
    }
  }

  /**
   * Calls the function at `fn` with Java arguments; the result converted (owned). Endless
   * recursion through C++ stops at the stack reserve of Java functions (Callbacks), whatever the
   * frames between a lambda and this call.
   */
  static Object call(long fn, Object[] args) {
    Scratch scratch = Scratch.get();
    long mark = scratch.mark();
    try {
      long cells = argumentCells(args, scratch);
      long result = cells + C.CELL * args.length;
      int rc = (int) C.FUNCTION_CALL.invokeExact(
          MemorySegment.ofAddress(fn), MemorySegment.ofAddress(cells), args.length,
          MemorySegment.ofAddress(result));
      check(rc);
      return load(result, true);
    } catch (Throwable t) {
      throw C.rethrow(t);
    } finally {
      scratch.release(mark);
      Reference.reachabilityFence(args);
    }
  }

  /**
   * `args` converted into new cells of the current frame of `scratch`, followed by one more
   * cell set to None for the result; the address of the first.
   */
  private static long argumentCells(Object[] args, Scratch scratch) {
    int n = args.length;
    long cells = scratch.alloc(C.CELL * (n + 1L));
    for (int i = 0; i < n; i++) {
      store(args[i], cells + C.CELL * i, scratch, false);
    }
    setNone(cells + C.CELL * n);
    return cells;
  }

  /** A global function of libferry itself, looked up once and kept. */
  static long builtin(String name) {
    Long found = BUILTINS.get(name);
    if (found != null) {
      return found;
    }
    long handle = getGlobal(name);
    if (handle == 0) {
      throw new FerryException("ImportError", "libferry has no global " + name);
    }
    Long raced = BUILTINS.putIfAbsent(name, handle);
    if (raced != null) {
      C.decRef(handle);
      return raced;
    }
    return handle;
  }

  /** FerryFunctionGetGlobal: a new reference, or 0 when the name is not taken. */
  static long getGlobal(String name) {
    Scratch scratch = Scratch.get();
    long mark = scratch.mark();
    try {
      long cname = scratch.cString(name);
      long out = scratch.alloc(8);
      int rc = (int) C.FUNCTION_GET_GLOBAL.invokeExact(
          MemorySegment.ofAddress(cname), MemorySegment.ofAddress(out));
      check(rc);
      return C.ALL.get(JAVA_LONG, out);
    } catch (Throwable t) {
      throw C.rethrow(t);
    } finally {
      scratch.release(mark);
    }
  }

  /** Calls a builtin with Java arguments. */
  static Object callBuiltin(String name, Object... args) {
    return call(builtin(name), args);
  }

  /** Calls a builtin that returns an object; a new reference to it. */
  private static long callBuiltinForObject(String name, Object[] args, Scratch scratch) {
    long mark = scratch.mark();
    try {
      long cells = argumentCells(args, scratch);
      long result = cells + C.CELL * args.length;
      int rc = (int) C.FUNCTION_CALL.invokeExact(
          MemorySegment.ofAddress(builtin(name)), MemorySegment.ofAddress(cells), args.length,
          MemorySegment.ofAddress(result));
      check(rc);
      if (C.ALL.get(JAVA_INT, result + C.CELL_TYPE) < C.STATIC_OBJECT_BEGIN) {
        throw new FerryException("InternalError", name + " returned no object");
      }
      return C.ALL.get(JAVA_LONG, result + C.CELL_VALUE);
    } catch (Throwable t) {
      throw C.rethrow(t);
    } finally {
      scratch.release(mark);
      Reference.reachabilityFence(args);
    }
  }

  /** The type key of a type index, cached. */
  static String typeKeyOf(int index) {
    String key = TYPE_KEYS.get(index);
    if (key != null) {
      return key;
    }
    Scratch scratch = Scratch.get();
    long mark = scratch.mark();
    try {
      long out = scratch.alloc(8);
      int rc = (int) C.TYPE_INDEX_TO_KEY.invokeExact(index, MemorySegment.ofAddress(out));
      check(rc);
      key = C.cString(MemorySegment.ofAddress(C.ALL.get(JAVA_LONG, out)));
      TYPE_KEYS.put(index, key);
      return key;
    } catch (Throwable t) {
      throw C.rethrow(t);
    } finally {
      scratch.release(mark);
    }
  }

  /** Where a field of a type lives and the C function that reads it (per type, for life). */
  private record Field(long offset, MemorySegment getter) {}

  private record FieldKey(int typeIndex, String name) {}

  private static final ConcurrentHashMap<FieldKey, Field> FIELDS = new ConcurrentHashMap<>();

  /**
   * Reads a field: the first read of (type, name) asks FerryObjectGetFieldGetter where the field
   * lives and which getter reads it, later reads call that getter directly (one downcall, no
   * lookup by name in C++).
   */
  static Object getAttr(FerryObject o, String name) {
    Scratch scratch = Scratch.get();
    long mark = scratch.mark();
    try {
      long handle = addr(o);
      FieldKey key = new FieldKey(C.typeIndexOf(handle), name);
      Field field = FIELDS.get(key);
      if (field == null) {
        long cname = scratch.cString(name);
        long out = scratch.alloc(16);
        int rc = (int) C.GET_FIELD_GETTER.invokeExact(
            MemorySegment.ofAddress(handle), MemorySegment.ofAddress(cname),
            MemorySegment.ofAddress(out), MemorySegment.ofAddress(out + 8));
        check(rc);
        field = new Field(C.ALL.get(JAVA_LONG, out),
            MemorySegment.ofAddress(C.ALL.get(JAVA_LONG, out + 8)));
        FIELDS.putIfAbsent(key, field);
      }
      long cell = scratch.alloc(C.CELL);
      setNone(cell);
      int rc = (int) C.CALL_FIELD_GETTER.invokeExact(
          field.getter(), MemorySegment.ofAddress(handle + field.offset()),
          MemorySegment.ofAddress(cell));
      check(rc);
      return load(cell, true);
    } catch (Throwable t) {
      throw C.rethrow(t);
    } finally {
      scratch.release(mark);
      Reference.reachabilityFence(o);
    }
  }

  static void setAttr(FerryObject o, String name, Object value) {
    Scratch scratch = Scratch.get();
    long mark = scratch.mark();
    try {
      long cname = scratch.cString(name);
      long cell = scratch.alloc(C.CELL);
      store(value, cell, scratch, false);
      int rc = (int) C.SET_ATTR.invokeExact(
          MemorySegment.ofAddress(addr(o)), MemorySegment.ofAddress(cname),
          MemorySegment.ofAddress(cell));
      check(rc);
    } catch (Throwable t) {
      throw C.rethrow(t);
    } finally {
      scratch.release(mark);
      Reference.reachabilityFence(o);
      Reference.reachabilityFence(value);
    }
  }

  /** The text form of a value (ferry.Repr). */
  static String repr(Object value) {
    return String.valueOf(callBuiltin("ferry.Repr", value));
  }

  /** The value converted to Ferry and back (Ferry.convert). */
  static Object convert(Object value) {
    Scratch scratch = Scratch.get();
    long mark = scratch.mark();
    try {
      long cell = scratch.alloc(C.CELL);
      store(value, cell, scratch, true);
      return load(cell, true);
    } finally {
      scratch.release(mark);
    }
  }
}
