package dev.ferry;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The upcall side: stubs made once for the process, shared by every Java function.
 *
 * <p>A Java {@link Function.Body} becomes a Ferry Function through FerryFunctionCreate with the
 * stub {@link #CALLBACK} and, as its resource, a number that keys {@link #BODIES}. The body stays
 * in that table as long as the Function lives, whoever holds it (Java, C++, Python), and is
 * removed by the stub {@link #RELEASE} when the last reference dies. So a lambda is kept alive
 * exactly as long as C++ may call it, with no stub or arena per lambda. FFM attaches a thread
 * the JVM did not start (a C++ worker) on its first upcall.
 */
@SuppressWarnings("restricted") // upcall stubs: the way C++ calls Java
final class Callbacks {
  private Callbacks() {}

  /** The bodies of live Java functions, by resource id: what the leak tests count. */
  static final ConcurrentHashMap<Long, Function.Body> BODIES = new ConcurrentHashMap<>();

  private static final AtomicLong NEXT_ID = new AtomicLong();

  static final MemorySegment CALLBACK;
  static final MemorySegment RELEASE;
  static final MemorySegment PAYLOAD_DELETER;
  /** An owner deleter that releases one reference to the object the owner points at. */
  static final MemorySegment OWNER_RELEASE;

  static {
    try {
      MethodHandles.Lookup lookup = MethodHandles.lookup();
      CALLBACK = C.LINKER.upcallStub(
          lookup.findStatic(Callbacks.class, "invoke", MethodType.methodType(
              int.class, MemorySegment.class, MemorySegment.class, int.class,
              MemorySegment.class)),
          FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT, ADDRESS),
          Arena.global());
      RELEASE = deleterStub("release");
      PAYLOAD_DELETER = deleterStub("releasePayload");
      OWNER_RELEASE = deleterStub("releaseOwner");
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  /** A stub for C++ of the {@code void(void*)} deleter {@code name} of this class. */
  private static MemorySegment deleterStub(String name) throws ReflectiveOperationException {
    return C.LINKER.upcallStub(
        MethodHandles.lookup().findStatic(Callbacks.class, name,
            MethodType.methodType(void.class, MemorySegment.class)),
        FunctionDescriptor.ofVoid(ADDRESS),
        Arena.global());
  }

  /** A new id for `body`, kept until the Function made with it dies. */
  static long keep(Function.Body body) {
    long id = NEXT_ID.incrementAndGet();
    BODIES.put(id, body);
    return id;
  }

  /**
   * The FerryFunctionCallback of every Java function: converts the borrowed arguments, runs the
   * body, stores its result (owned) and returns 0; any Throwable becomes the raised error and
   * -1. Nothing propagates into C (an exception escaping an upcall would end the JVM): the
   * handlers call nothing outside a try, since a StackOverflowError (a lambda recursing through
   * C++ without end) may strike again while the error is raised. With no stack left to raise
   * one, C++ reports "a function callback failed without raising an error", and the levels
   * below, with more stack, carry that back to the first Java caller.
   */
  static int invoke(MemorySegment resource, MemorySegment args, int n, MemorySegment result) {
    Scratch scratch;
    long mark;
    try {
      scratch = Scratch.get();
      mark = scratch.mark();
    } catch (Throwable t) {
      try {
        Errors.raise(t);
      } catch (Throwable again) {
        // No stack left (a StackOverflowError strikes again): the -1 alone reports it.
      }
      return -1;
    }
    try {
      Function.Body body = BODIES.get(resource.address());
      if (body == null) {
        throw new FerryException("RuntimeError", "a Java function was called after its release");
      }
      Object[] values = new Object[n];
      long base = args.address();
      for (int i = 0; i < n; i++) {
        values[i] = Values.load(base + C.CELL * i, false);
      }
      Object value = body.call(values);
      Values.store(value, result.address(), scratch, true);
      return 0;
    } catch (Throwable t) {
      try {
        Errors.raise(t);
      } catch (Throwable again) {
        // No stack left (a StackOverflowError strikes again): the -1 alone reports it.
      }
      return -1;
    } finally {
      try {
        scratch.release(mark);
      } catch (Throwable t) {
        // A release that failed leaves a reference behind; never unwind into C.
      }
    }
  }

  /** The resource deleter: the Function died, its body may go. */
  static void release(MemorySegment resource) {
    BODIES.remove(resource.address());
  }

  /** The payload deleter of errors raised from Java: the error died, its exception may go. */
  static void releasePayload(MemorySegment payload) {
    Errors.PAYLOADS.remove(payload.address());
  }

  /** The owner deleter of views made from Java: drops the reference to the viewed object. */
  static void releaseOwner(MemorySegment owner) {
    try {
      C.decRef(owner.address());
    } catch (Throwable t) {
      // Never unwind into C.
    }
  }
}
