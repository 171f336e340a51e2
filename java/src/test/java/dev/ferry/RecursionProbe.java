package dev.ferry;

/**
 * Run by CallbackTest in a fresh JVM (an abort must not take the test run with it): lambdas that
 * call themselves through C++ without end, with 0 to 8 Java frames added between the lambda and
 * the call (0 and 1 on the big stack), on the main thread, on a thread with a 256 KiB stack, on
 * one with 8 MiB, and on a C++ thread the JVM did not start. The StackOverflowError used to
 * strike inside the JDK's upcall adapter, and abort the JVM or not by where the frames fell.
 * Then lambdas called from C++ that throw a StackOverflowError or overflow the stack in Java,
 * Java functions closed at the stack's end, and errors raised from Java and views of a tensor
 * released there (their deleters are Java upcalls too). Prints what the first caller caught, one
 * line per case, then "alive".
 */
final class RecursionProbe {
  private RecursionProbe() {}

  private static Function call;

  /** Calls `self` through C++ (demo.call) from under `frames` more Java frames. */
  private static Object through(int frames, Function self) {
    if (frames == 0) {
      return call.call(self);
    }
    long a = frames;
    long b = a * 31;
    Object r = through(frames - 1, self);
    return a + b == -1 ? null : r;
  }

  /** Endless Java recursion: overflows the stack inside a body. */
  private static long deep(long n) {
    return deep(n + 1) + 1;
  }

  private static final Function.Body ONE = a -> 1L;

  /** Makes and closes a Java function at every level of an endless Java recursion. */
  private static long closeAll(long depth) {
    Function.of(ONE).close();
    return closeAll(depth + 1) + 1;
  }

  /** Errors raised from Java (each carrying its exception) and read-only views, to release. */
  private static long[] errors;
  private static Tensor[] views;
  /** How many of `errors` and `views` were released; how many at the current run's end. */
  private static int dropped;
  private static int droppedThisRun;

  /**
   * Recurses without end; as the StackOverflowError unwinds, each of the deepest 50 levels
   * releases one error and one view (their deleters run there, at the stack's end) and passes
   * the error on.
   */
  private static void dropAtTheEnd(long depth) {
    try {
      dropAtTheEnd(depth + 1);
    } catch (StackOverflowError e) {
      if (droppedThisRun < 50 && dropped < errors.length) {
        views[dropped].close(); // idempotent: a retry one level up after an overflow here
        if (errors[dropped] != 0) {
          C.decRef(errors[dropped]);
          errors[dropped] = 0;
        }
        dropped++;
        droppedThisRun++;
      }
      throw e;
    }
  }

  /** The error Errors.raise makes of `t` (a new reference), taken from the raised slot. */
  private static long javaError(Throwable t) {
    Errors.raise(t);
    try (java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined()) {
      java.lang.foreign.MemorySegment out = arena.allocate(8);
      C.ERROR_MOVE_FROM_RAISED.invokeExact(out);
      return out.get(java.lang.foreign.ValueLayout.JAVA_LONG, 0);
    } catch (Throwable e) {
      throw C.rethrow(e);
    }
  }

  /**
   * Runs `recursion`, which has no end, 20 times on a new thread with a 256 KiB stack (each run
   * ends where a StackOverflowError strikes, at another depth each time), and waits for it.
   */
  private static void twentyTimesOnASmallStack(String name, Runnable recursion)
      throws InterruptedException {
    Thread t = new Thread(null, () -> {
      for (int i = 0; i < 20; i++) {
        try {
          recursion.run();
        } catch (StackOverflowError e) {
          // expected: the recursion has no end
        }
      }
    }, name, 256L << 10);
    t.start();
    t.join();
  }

  /** Calls `f` through C++ on a thread with `stack` bytes (0: the default) and prints. */
  private static void report(String name, long stack, Function f) throws Exception {
    Runnable r = () -> {
      try {
        call.call(f);
        System.out.println(name + ": no error");
      } catch (FerryException e) {
        System.out.println(name + ": caught " + e.kind());
      } catch (StackOverflowError e) {
        System.out.println(name + ": caught StackOverflowError");
      }
    };
    Thread t = stack == 0 ? new Thread(r) : new Thread(null, r, name, stack);
    t.start();
    t.join();
  }

  public static void main(String[] args) throws Exception {
    Ferry.loadLibrary(args[0]);
    call = Ferry.getGlobalFunc("demo.call");
    long[] stacks = {0, 256L << 10, 8L << 20};
    for (long stack : stacks) {
      for (int frames = 0; frames <= (stack == 8L << 20 ? 1 : 8); frames++) {
        int k = frames;
        Function[] self = new Function[1];
        self[0] = Function.of(a -> through(k, self[0]));
        report("stack " + stack + " frames " + k, stack, self[0]);
      }
    }
    Function[] onCpp = new Function[1];
    onCpp[0] = Function.of(a -> through(1, onCpp[0]));
    try {
      Ferry.getGlobalFunc("demo.call_threads").call(onCpp[0], 1L, 1L);
      System.out.println("C++ thread: no error");
    } catch (FerryException e) {
      System.out.println("C++ thread: caught " + e.kind());
    }
    report("throws StackOverflowError", 0, Function.of(a -> {
      throw new StackOverflowError("thrown by the body");
    }));
    report("overflows in Java", 256L << 10, Function.of(a -> deep(0)));
    // Closing a Java function runs its deleter, a Java upcall, at any depth: one at the stack's
    // end waits for the next call of a Java function that has the stack (else an abort).
    twentyTimesOnASmallStack("closer", () -> closeAll(0));
    // Deferred deleters run at the next call of a Java function; unclosed ones by the Cleaner.
    Function other = Function.of(a -> 2L);
    boolean released = TestSupport.gcUntil(() -> {
      call.call(other);
      return Callbacks.BODIES.values().stream().noneMatch(b -> b == ONE);
    });
    System.out.println("closing at the stack's end: " + (released ? "released" : "kept " + Callbacks.BODIES.values().stream().filter(b -> b == ONE).count()));
    // Errors raised from Java and views made by Java release their exception and their tensor
    // through Java deleters, at any depth: one at the stack's end waits like a function's.
    int n = 20 * 50;
    errors = new long[n];
    views = new Tensor[n];
    Tensor base = Tensor.empty(new long[] {4}, DataType.FLOAT32);
    RuntimeException payload = new RuntimeException("carried by the errors");
    for (int i = 0; i < n; i++) {
      errors[i] = javaError(payload);
      views[i] = base.readOnlyView();
    }
    twentyTimesOnASmallStack("dropper", () -> {
      droppedThisRun = 0;
      dropAtTheEnd(0);
    });
    int atTheEnd = dropped;
    for (int i = 0; i < n; i++) { // what the runs did not reach
      views[i].close();
      if (errors[i] != 0) {
        C.decRef(errors[i]);
      }
    }
    boolean freed = TestSupport.gcUntil(() -> {
      call.call(other);
      return Errors.PAYLOADS.values().stream().noneMatch(t -> t == payload)
          && base.useCount() == 1;
    });
    System.out.println("errors and views released at the stack's end: "
        + (atTheEnd >= 20 && freed ? "released" : atTheEnd + " dropped there, "
        + Errors.PAYLOADS.values().stream().filter(t -> t == payload).count()
        + " payloads and " + (base.useCount() - 1) + " views kept"));
    System.out.println("alive");
  }
}
