package dev.ferry;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

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
 *
 * <p>An exception escaping an upcall ends the JVM, and the JDK's adapter runs Java frames before
 * {@link #invoke}'s try: a StackOverflowError there (a lambda calling itself through C++ without
 * end, overflowing wherever the frames happen to fall) would be fatal. So the stubs take C
 * pointers as {@code long} (the adapter makes no MemorySegment), and every Java function is made
 * with a stack reserve ({@link #STACK_RESERVE}, FerryFunctionSetStackReserve): C++ refuses to
 * enter the stub with a RuntimeError while less than that is left, so the adapter always has
 * the stack the JVM's guard and shadow zones ask for. The deleters are upcalls too, run wherever
 * the last reference dies: {@link #RELEASE} (a function's) is kept by C++ for the next call of a
 * Java function when a function dies with less than that left, and so are {@link
 * #PAYLOAD_DELETER} and {@link #OWNER_RELEASE}, given the same reserve by
 * FerryDeleterSetStackReserve (or the next such release that has the stack).
 */
@SuppressWarnings("restricted") // upcall stubs: the way C++ calls Java
final class Callbacks {
  private Callbacks() {}

  /** The bodies of live Java functions, by resource id: what the leak tests count. */
  static final ConcurrentHashMap<Long, Function.Body> BODIES = new ConcurrentHashMap<>();

  private static final AtomicLong NEXT_ID = new AtomicLong();

  /**
   * The stack (bytes) a thread must have left for C++ to call a Java function: HotSpot's guard
   * zones (red, yellow, reserved: 4 pages) and shadow zone (20 pages), which a Java frame needs
   * free below it or throws StackOverflowError, 96 KiB on x86-64 and AArch64 Linux with 4 KiB
   * pages, plus 64 KiB for the adapter and for converting the error on the way back. Set
   * {@code -Dferry.callbackStackReserve=BYTES} for a JVM run with a larger
   * {@code -XX:StackShadowPages} or on 64 KiB pages.
   */
  static final long STACK_RESERVE =
      Math.max(0, Long.getLong("ferry.callbackStackReserve", 160L << 10));

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
              int.class, long.class, long.class, int.class, long.class)),
          FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_LONG),
          Arena.global());
      RELEASE = deleterStub("release");
      PAYLOAD_DELETER = deleterStub("releasePayload");
      OWNER_RELEASE = deleterStub("releaseOwner");
      guard(PAYLOAD_DELETER);
      guard(OWNER_RELEASE);
    } catch (Throwable e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  /** Makes C++ keep `deleter` for later rather than run it with less than the reserve left. */
  private static void guard(MemorySegment deleter) throws Throwable {
    int rc = (int) C.DELETER_SET_STACK_RESERVE.invokeExact(deleter, STACK_RESERVE);
    if (rc != 0) {
      throw Errors.take();
    }
  }

  /**
   * A stub for C++ of the {@code void(void*)} deleter {@code name} of this class (the pointer as
   * a {@code long}: pointers and longs travel alike in the 64-bit C conventions FFM supports).
   */
  private static MemorySegment deleterStub(String name) throws ReflectiveOperationException {
    return C.LINKER.upcallStub(
        MethodHandles.lookup().findStatic(Callbacks.class, name,
            MethodType.methodType(void.class, long.class)),
        FunctionDescriptor.ofVoid(JAVA_LONG),
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
  static int invoke(long resource, long args, int n, long result) {
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
      Function.Body body = BODIES.get(resource);
      if (body == null) {
        throw new FerryException("RuntimeError", "a Java function was called after its release");
      }
      Object[] values = new Object[n];
      for (int i = 0; i < n; i++) {
        values[i] = Values.load(args + C.CELL * i, false);
      }
      Object value = body.call(values);
      Values.store(value, result, scratch, true);
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
  static void release(long resource) {
    try {
      BODIES.remove(resource);
    } catch (Throwable t) {
      // Never unwind into C (the body stays in the table).
    }
  }

  /** The payload deleter of errors raised from Java: the error died, its exception may go. */
  static void releasePayload(long payload) {
    try {
      Errors.PAYLOADS.remove(payload);
    } catch (Throwable t) {
      // Never unwind into C (the exception stays in the table).
    }
  }

  /** The owner deleter of views made from Java: drops the reference to the viewed object. */
  static void releaseOwner(long owner) {
    try {
      C.decRef(owner);
    } catch (Throwable t) {
      // Never unwind into C.
    }
  }
}
