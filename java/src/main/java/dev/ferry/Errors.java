package dev.ferry;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Errors across the boundary, both ways. A failed C call's error becomes a {@link
 * FerryException} (kind, message, backtrace, C++ frames). A Java exception thrown in a callback
 * becomes a Ferry Error of its kind (IllegalArgumentException: ValueError, ...; others
 * RuntimeError) that carries the exception itself as its payload, so when the error comes back
 * to Java through C++ the very same exception is thrown again.
 */
final class Errors {
  private Errors() {}

  /** Java exceptions carried by live Ferry errors, by payload id. */
  static final ConcurrentHashMap<Long, Throwable> PAYLOADS = new ConcurrentHashMap<>();

  private static final AtomicLong NEXT_PAYLOAD = new AtomicLong();

  private static final MemorySegment RUNTIME_ERROR = Arena.global().allocateFrom("RuntimeError");
  private static final MemorySegment CALLBACK_FAILED =
      Arena.global().allocateFrom("a Java callback failed and its exception could not be kept");

  /**
   * The Ferry kinds of Java exception classes, the first match wins; any other exception is a
   * RuntimeError (a FerryException keeps its own kind).
   */
  private static final List<Map.Entry<Class<? extends Throwable>, String>> KINDS = List.of(
      Map.entry(IllegalArgumentException.class, "ValueError"),
      Map.entry(ClassCastException.class, "TypeError"),
      Map.entry(IndexOutOfBoundsException.class, "IndexError"),
      Map.entry(NoSuchElementException.class, "KeyError"),
      Map.entry(UnsupportedOperationException.class, "NotImplementedError"),
      Map.entry(ArithmeticException.class, "ZeroDivisionError"),
      Map.entry(OutOfMemoryError.class, "MemoryError"));

  /** The kind a Java exception becomes in Ferry. */
  static String kindOf(Throwable t) {
    if (t instanceof FerryException fe) {
      return fe.kind();
    }
    for (Map.Entry<Class<? extends Throwable>, String> kind : KINDS) {
      if (kind.getKey().isInstance(t)) {
        return kind.getValue();
      }
    }
    return "RuntimeError";
  }

  /** Takes the calling thread's raised error as the exception to throw. */
  static RuntimeException take() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = arena.allocate(8 * 4);
      C.ERROR_MOVE_FROM_RAISED.invokeExact(out);
      long error = out.get(JAVA_LONG, 0);
      if (error == 0) {
        return new FerryException("RuntimeError", "a call failed without raising an error");
      }
      try {
        int rc = (int) C.ERROR_GET_INFO.invokeExact(
            MemorySegment.ofAddress(error), out, out.asSlice(8), out.asSlice(16));
        if (rc != 0) {
          return new FerryException("InternalError", "a failed call raised a non-Error object");
        }
        String kind = C.cString(out.get(C.PTR, 0));
        String message = C.cString(out.get(C.PTR, 8));
        String backtrace = C.cString(out.get(C.PTR, 16));
        Throwable original = payloadOf(error, out);
        FerryException fe =
            new FerryException(kind, message, backtrace, frames(error, out));
        if (original instanceof RuntimeException r) {
          if (r != fe && !(r instanceof FerryException)) {
            r.addSuppressed(fe);
          }
          return r;
        }
        if (original instanceof Error e) {
          throw e;
        }
        if (original != null) {
          fe.initCause(original);
        }
        return fe;
      } finally {
        C.decRef(error);
      }
    } catch (Throwable t) {
      throw C.rethrow(t);
    }
  }

  private static Throwable payloadOf(long error, MemorySegment out) throws Throwable {
    int rc = (int) C.ERROR_GET_PAYLOAD.invokeExact(
        MemorySegment.ofAddress(error), out, out.asSlice(8));
    if (rc != 0 || out.get(JAVA_LONG, 8) != Callbacks.PAYLOAD_DELETER.address()) {
      return null;
    }
    return PAYLOADS.get(out.get(JAVA_LONG, 0));
  }

  private static List<FerryException.Frame> frames(long error, MemorySegment out)
      throws Throwable {
    int rc = (int) C.ERROR_GET_FRAMES.invokeExact(
        MemorySegment.ofAddress(error), out, out.asSlice(8));
    if (rc != 0) {
      return List.of();
    }
    long frames = out.get(JAVA_LONG, 0);
    int n = out.get(JAVA_INT, 8);
    List<FerryException.Frame> list = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      long f = frames + C.FRAME_SIZE * i;
      list.add(
          new FerryException.Frame(
              orEmpty(C.cString(MemorySegment.ofAddress(C.ALL.get(JAVA_LONG, f)))),
              orEmpty(C.cString(MemorySegment.ofAddress(C.ALL.get(JAVA_LONG, f + 8)))),
              C.ALL.get(JAVA_INT, f + 16),
              orEmpty(C.cString(MemorySegment.ofAddress(C.ALL.get(JAVA_LONG, f + 24))))));
    }
    return list;
  }

  private static String orEmpty(String s) {
    return s == null ? "" : s;
  }

  /**
   * Makes `t` the calling thread's raised Ferry error (in a callback, before returning -1).
   * Never throws: whatever goes wrong here still leaves a RuntimeError raised.
   */
  static void raise(Throwable t) {
    try {
      String kind = kindOf(t);
      String message;
      String backtrace;
      if (t instanceof FerryException fe) {
        message = String.valueOf(fe.getMessage());
        backtrace = fe.backtrace().isEmpty() ? javaTrace(t) : fe.backtrace();
      } else {
        message = kind.equals("RuntimeError") || t.getMessage() == null
            ? t.toString() : t.getMessage();
        backtrace = javaTrace(t);
      }
      try (Arena arena = Arena.ofConfined()) {
        MemorySegment out = arena.allocate(8);
        int rc = (int) C.ERROR_CREATE.invokeExact(
            arena.allocateFrom(kind), arena.allocateFrom(message), arena.allocateFrom(backtrace),
            out);
        if (rc != 0) {
          C.ERROR_MOVE_FROM_RAISED.invokeExact(out);
          long failed = out.get(JAVA_LONG, 0);
          if (failed != 0) {
            C.decRef(failed);
          }
          C.ERROR_SET_RAISED_FROM_C_STR.invokeExact(RUNTIME_ERROR, CALLBACK_FAILED);
          return;
        }
        long error = out.get(JAVA_LONG, 0);
        long id = NEXT_PAYLOAD.incrementAndGet();
        PAYLOADS.put(id, t);
        rc = (int) C.ERROR_SET_PAYLOAD.invokeExact(
            MemorySegment.ofAddress(error), MemorySegment.ofAddress(id),
            Callbacks.PAYLOAD_DELETER);
        if (rc != 0) {
          PAYLOADS.remove(id);
        }
        C.ERROR_SET_RAISED.invokeExact(MemorySegment.ofAddress(error));
        C.decRef(error);
      }
    } catch (Throwable again) {
      try {
        C.ERROR_SET_RAISED_FROM_C_STR.invokeExact(RUNTIME_ERROR, CALLBACK_FAILED);
      } catch (Throwable ignored) {
        // Nothing is left to report with: the call still returns -1.
      }
    }
  }

  private static String javaTrace(Throwable t) {
    StringWriter text = new StringWriter();
    t.printStackTrace(new PrintWriter(text));
    return "Java traceback:\n" + text;
  }
}
