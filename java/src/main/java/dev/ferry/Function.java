package dev.ferry;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.MemorySegment;
import java.lang.ref.Reference;

/**
 * A Ferry function: a global registered in C++ ({@code FERRY_REGISTER_GLOBAL}), a Python
 * callable, or a Java lambda ({@link #of}). {@link #call} converts the arguments as {@link
 * Ferry#convert} does, runs it on the calling thread and converts the result back; an error
 * arrives as {@link FerryException}.
 *
 * <pre>{@code
 * Function cb = Function.of(args -> (Long) args[0] + 1);
 * long r = (Long) Ferry.getGlobalFunc("demo.call").call(cb);   // C++ calls the lambda: 42
 * }</pre>
 */
public final class Function extends Wrapper implements FerryObject {
  /** A Java function over the converted arguments; what it returns is converted back. */
  @FunctionalInterface
  public interface Body {
    /**
     * Runs the function. An exception reaches the caller (C++, Python or Java) as an error of
     * its kind: FerryException keeps its kind, IllegalArgumentException is a ValueError,
     * ClassCastException a TypeError, IndexOutOfBoundsException an IndexError, others a
     * RuntimeError. Object arguments are wrappers owned by this call's receiver.
     */
    Object call(Object... args) throws Exception;
  }

  Function(long address) {
    super(address);
  }

  /**
   * A Function running {@code body}: callable from C++, Python and Java, from any thread. The
   * body is kept as long as any language holds the Function, and let go when the last holder
   * releases it.
   */
  public static Function of(Body body) {
    java.util.Objects.requireNonNull(body, "body");
    Ferry.ensureLoaded();
    long handle = newHandle(body);
    try {
      return new Function(handle);
    } catch (Throwable t) { // a StackOverflowError before the Cleaner holds the reference
      C.decRef(handle);
      throw t;
    }
  }

  /** A new reference to a new Function running `body`. */
  static long newHandle(Body body) {
    long id = Callbacks.keep(body);
    Scratch scratch = Scratch.get();
    long mark = scratch.mark();
    try {
      long out = scratch.alloc(8);
      int rc = (int) C.FUNCTION_CREATE.invokeExact(
          MemorySegment.ofAddress(id), Callbacks.CALLBACK, Callbacks.RELEASE,
          MemorySegment.ofAddress(out));
      if (rc != 0) {
        Callbacks.BODIES.remove(id);
        throw Errors.take();
      }
      long handle = C.ALL.get(JAVA_LONG, out);
      try {
        rc = (int) C.FUNCTION_SET_STACK_RESERVE.invokeExact(
            MemorySegment.ofAddress(handle), Callbacks.STACK_RESERVE);
        if (rc != 0) {
          throw Errors.take();
        }
      } catch (Throwable t) { // the function dies with its body (a StackOverflowError too)
        C.decRef(handle);
        throw t;
      }
      return handle;
    } catch (Throwable t) {
      throw C.rethrow(t);
    } finally {
      scratch.release(mark);
    }
  }

  /** Calls the function with {@code args}; its result converted to Java. */
  public Object call(Object... args) {
    try {
      return Values.call(handle.get(this), args);
    } finally {
      Reference.reachabilityFence(this);
    }
  }
}
