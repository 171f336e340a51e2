package dev.ferry;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.MemorySegment;
import java.lang.ref.Reference;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The entry points of Ferry for Java: load libraries, find and register global functions, make
 * nodes, convert values, JSON and structural equality. libferry itself is found at first use
 * (see {@link #libraryPath()}); every method here is safe to call from any thread.
 *
 * <pre>{@code
 * Ferry.loadLibrary("libdemo.so");
 * long three = (Long) Ferry.getGlobalFunc("demo.add").call(1L, 2L);
 * }</pre>
 */
public final class Ferry {
  private Ferry() {}

  /**
   * Finds and opens libferry if not done yet: {@code -Dferry.library.path}, {@code
   * FERRY_LIBRARY_PATH} (the file or its directory), {@code java.library.path}, then {@code
   * python3 -m ferry --lib-dir}. A FerryException ("ImportError") names every place it looked.
   */
  public static void ensureLoaded() {
    Loader.lookup();
  }

  /** The libferry this process uses (loading it if needed). */
  public static Path libraryPath() {
    return Loader.path();
  }

  /**
   * Loads a shared library and runs its registrations ({@code FERRY_REGISTER_GLOBAL}, node
   * types). A relative path is relative to the working directory. RuntimeError naming the path
   * when it is missing or fails to load.
   */
  public static void loadLibrary(String path) {
    ensureLoaded();
    Scratch scratch = Scratch.get();
    long mark = scratch.mark();
    try {
      int rc = (int) C.LIBRARY_LOAD.invokeExact(MemorySegment.ofAddress(scratch.cString(path)));
      Values.check(rc);
    } catch (Throwable t) {
      throw C.rethrow(t);
    } finally {
      scratch.release(mark);
    }
  }

  /** The global function {@code name}; a FerryException ("KeyError") naming it when missing. */
  public static Function getGlobalFunc(String name) {
    Function f = getGlobalFunc(name, true);
    if (f == null) {
      throw new FerryException("KeyError", "no global function named '" + name + "'");
    }
    return f;
  }

  /** The global function {@code name}, or null when missing and {@code allowMissing}. */
  public static Function getGlobalFunc(String name, boolean allowMissing) {
    ensureLoaded();
    long handle = Values.getGlobal(name);
    if (handle == 0) {
      if (allowMissing) {
        return null;
      }
      throw new FerryException("KeyError", "no global function named '" + name + "'");
    }
    return new Function(handle);
  }

  /**
   * Registers {@code f} as the global {@code name}, callable from C++ and Python; a taken name
   * is an error naming it unless {@code override}.
   */
  public static void registerFunc(String name, Function f, boolean override) {
    ensureLoaded();
    Scratch scratch = Scratch.get();
    long mark = scratch.mark();
    try {
      int rc = (int) C.FUNCTION_SET_GLOBAL.invokeExact(
          MemorySegment.ofAddress(scratch.cString(name)), MemorySegment.ofAddress(Values.addr(f)),
          override ? 1 : 0);
      Values.check(rc);
    } catch (Throwable t) {
      throw C.rethrow(t);
    } finally {
      scratch.release(mark);
      Reference.reachabilityFence(f);
    }
  }

  /** Registers a Java lambda as the global {@code name} ({@link Function#of} of it). */
  public static void registerFunc(String name, Function.Body body, boolean override) {
    try (Function f = Function.of(body)) {
      registerFunc(name, f, override);
    }
  }

  /** Removes the global {@code name}; whether it existed. */
  public static boolean removeGlobalFunc(String name) {
    ensureLoaded();
    Scratch scratch = Scratch.get();
    long mark = scratch.mark();
    try {
      long out = scratch.alloc(8);
      C.ALL.set(JAVA_INT, out, 0);
      int rc = (int) C.FUNCTION_REMOVE_GLOBAL.invokeExact(
          MemorySegment.ofAddress(scratch.cString(name)), MemorySegment.ofAddress(out));
      Values.check(rc);
      return C.ALL.get(JAVA_INT, out) != 0;
    } catch (Throwable t) {
      throw C.rethrow(t);
    } finally {
      scratch.release(mark);
    }
  }

  /** The names of every global function, sorted. */
  public static List<String> listGlobalFuncNames() {
    ensureLoaded();
    Scratch scratch = Scratch.get();
    long mark = scratch.mark();
    try {
      long out = scratch.alloc(16);
      int rc = (int) C.FUNCTION_LIST_GLOBAL_NAMES.invokeExact(
          MemorySegment.ofAddress(out), MemorySegment.ofAddress(out + 8));
      Values.check(rc);
      int n = C.ALL.get(JAVA_INT, out);
      long names = C.ALL.get(JAVA_LONG, out + 8);
      List<String> list = new ArrayList<>(n);
      for (int i = 0; i < n; i++) {
        list.add(C.cString(MemorySegment.ofAddress(C.ALL.get(JAVA_LONG, names + 8L * i))));
      }
      return List.copyOf(list);
    } catch (Throwable t) {
      throw C.rethrow(t);
    } finally {
      scratch.release(mark);
    }
  }

  /**
   * Makes an object of the reflected node type {@code typeKey} from field values by name (the
   * other fields take their defaults). KeyError for an unknown type, TypeError naming a field
   * whose value does not convert, ValueError naming a required field left out.
   */
  public static FerryObject makeNode(String typeKey, Map<String, ?> fields) {
    ensureLoaded();
    Object[] args = new Object[1 + 2 * fields.size()];
    args[0] = typeKey;
    int i = 1;
    for (Map.Entry<String, ?> e : fields.entrySet()) {
      args[i++] = e.getKey();
      args[i++] = e.getValue();
    }
    Object node = Values.callBuiltin("ferry.MakeNode", args);
    if (node instanceof FerryObject o) {
      return o;
    }
    throw new FerryException("TypeError", "ferry.MakeNode of " + typeKey + " made no object");
  }

  /**
   * {@code value} converted to Ferry and back: Java lists become a {@link FerryArray}, maps a
   * {@link FerryMap}, a {@link Function.Body} a {@link Function}; numbers, strings, booleans and
   * null come back as themselves. A TypeError names a Java type Ferry cannot hold.
   */
  public static Object convert(Object value) {
    ensureLoaded();
    return Values.convert(value);
  }

  /** A new empty ferry.List (mutable, shared with C++ and Python). */
  public static FerryList newList() {
    ensureLoaded();
    return (FerryList) Values.callBuiltin("ferry.List");
  }

  /** A new empty ferry.Dict (mutable, shared with C++ and Python). */
  public static FerryDict newDict() {
    ensureLoaded();
    return (FerryDict) Values.callBuiltin("ferry.Dict");
  }

  /** The JSON text of a value and everything it reaches (sharing kept). */
  public static String saveJson(Object value) {
    ensureLoaded();
    return (String) Values.callBuiltin("ferry.SaveJSON", value);
  }

  /** The value a JSON text of {@link #saveJson} describes; ValueError naming the place else. */
  public static Object loadJson(String text) {
    ensureLoaded();
    return Values.callBuiltin("ferry.LoadJSON", text);
  }

  /** Whether two values are structurally equal (free variables not mapped). */
  public static boolean structuralEqual(Object a, Object b) {
    return structuralEqual(a, b, false);
  }

  /** Whether two values are structurally equal, free variables mapped when asked. */
  public static boolean structuralEqual(Object a, Object b, boolean mapFreeVars) {
    ensureLoaded();
    return (Boolean) Values.callBuiltin("ferry.StructuralEqual", a, b, mapFreeVars);
  }

  /** The structural hash of a value: equal for structurally equal values. */
  public static long structuralHash(Object value) {
    ensureLoaded();
    return (Long) Values.callBuiltin("ferry.StructuralHash", value, false);
  }

  /** The text form of a value, as Python's repr shows it. */
  public static String repr(Object value) {
    ensureLoaded();
    return Values.repr(value);
  }
}
