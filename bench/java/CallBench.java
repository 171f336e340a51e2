// Times the Java frontend's hot paths beside their floors, in one run, interleaved:
//   1. Java calls the C++ global demo.add(long, long) through Function.call, against a plain
//      Java call of a LongBinaryOperator (the plain-Java floor) and against the same
//      FerryFunctionCall done by hand through FFM with preallocated cells (the FFM floor).
//   2. C++ calls a Java lambda (x + 1) in a loop (demo.call_n), per call, against the same C++
//      loop calling the C++ global demo.inc (the C++ floor) and a Java loop calling the lambda.
//   3. A field read x.get("value") of a C++ node, against a plain Java field read and a
//      hand-written FerryObjectGetAttr through FFM.
// Each measurement is the median of ROUNDS rounds of N operations; rounds of every row are
// interleaved so that machine load hits all rows alike. Run by scripts/bench_java.sh, which
// builds java/ and libdemo.so first. Not a test: it asserts nothing but the results' values.
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.ferry.Ferry;
import dev.ferry.FerryObject;
import dev.ferry.Function;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.util.Arrays;
import java.util.Map;
import java.util.function.LongBinaryOperator;
import java.util.function.LongSupplier;

@SuppressWarnings("restricted") // the hand-written FFM floor binds C functions itself
public final class CallBench {
  static final int N = Integer.getInteger("bench.n", 200_000);
  static final int ROUNDS = Integer.getInteger("bench.rounds", 15);
  static volatile long sink;
  // Read in every iteration, so that the JIT can neither hoist nor fold the plain floors.
  static volatile LongBinaryOperator plainAdd = Long::sum;
  static volatile Function.Body plainBody = a -> (Long) a[0] + 1;
  static volatile Plain plainNode = new Plain();

  static final class Plain {
    long value = 7;
  }

  /** The hand-written upcall floor: reads the int cell and writes the result cell directly. */
  static int rawInc(MemorySegment resource, MemorySegment args, int n, MemorySegment result) {
    long x = args.reinterpret(16).get(JAVA_LONG, 8);
    MemorySegment cell = result.reinterpret(16);
    cell.set(JAVA_INT, 0, 1);
    cell.set(JAVA_LONG, 8, x + 1);
    return 0;
  }

  public static void main(String[] args) throws Throwable {
    Ferry.loadLibrary(args[0]);
    Linker linker = Linker.nativeLinker();
    SymbolLookup lib = SymbolLookup.libraryLookup(Ferry.libraryPath(), Arena.global());
    MethodHandle call = linker.downcallHandle(lib.find("FerryFunctionCall").orElseThrow(),
        FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT, ADDRESS));
    MethodHandle getAttr = linker.downcallHandle(lib.find("FerryObjectGetAttr").orElseThrow(),
        FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
    Arena arena = Arena.global();
    MethodHandle create = linker.downcallHandle(lib.find("FerryFunctionCreate").orElseThrow(),
        FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS, ADDRESS));
    MemorySegment stub = linker.upcallStub(
        java.lang.invoke.MethodHandles.lookup().findStatic(CallBench.class, "rawInc",
            java.lang.invoke.MethodType.methodType(int.class, MemorySegment.class,
                MemorySegment.class, int.class, MemorySegment.class)),
        FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT, ADDRESS), arena);
    MemorySegment rawOut = arena.allocate(8);
    if ((int) create.invokeExact(MemorySegment.NULL, stub, MemorySegment.NULL, rawOut) != 0) {
      throw new IllegalStateException("FerryFunctionCreate failed");
    }
    // A Function over the raw stub, wrapped as a Ferry value through its address.
    long rawHandle = rawOut.get(JAVA_LONG, 0);

    Function add = Ferry.getGlobalFunc("demo.add");
    Function callN = Ferry.getGlobalFunc("demo.call_n");
    Function inc = Ferry.getGlobalFunc("demo.inc");
    Function lambda = Function.of(a -> (Long) a[0] + 1);
    FerryObject x = Ferry.makeNode("demo.IntImm", Map.of("value", 7L));

    // The hand-written FFM floor: cells filled once, the call made directly.
    MemorySegment cells = arena.allocate(16 * 4, 16);
    MemorySegment fnAddr = add.address();
    MemorySegment nodeAddr = x.address();
    MemorySegment name = arena.allocateFrom("value");
    MemorySegment out = arena.allocate(16, 16);
    MemorySegment out2 = arena.allocate(16, 16);
    MemorySegment callNAddr = callN.address();

    LongSupplier[] rows = {
      // 0: Ferry call of demo.add
      () -> {
        long s = 0;
        for (int i = 0; i < N; i++) {
          s += (Long) add.call((long) i, 2L);
        }
        return s;
      },
      // 1: plain Java floor
      () -> {
        long s = 0;
        for (int i = 0; i < N; i++) {
          s += plainAdd.applyAsLong(i, 2L);
        }
        return s;
      },
      // 2: hand-written FFM FerryFunctionCall
      () -> {
        long s = 0;
        try {
          for (int i = 0; i < N; i++) {
            cells.set(JAVA_INT, 0, 1);
            cells.set(JAVA_LONG, 8, i);
            cells.set(JAVA_INT, 16, 1);
            cells.set(JAVA_LONG, 24, 2L);
            cells.set(JAVA_LONG, 32, 0L);
            cells.set(JAVA_LONG, 40, 0L);
            int rc = (int) call.invokeExact(fnAddr, cells, 2, cells.asSlice(32));
            if (rc != 0) {
              throw new IllegalStateException("call failed");
            }
            s += cells.get(JAVA_LONG, 40);
          }
        } catch (Throwable t) {
          throw new RuntimeException(t);
        }
        return s;
      },
      // 3: C++ calls a Java lambda N times
      () -> (Long) callN.call(lambda, (long) N, 1L),
      // 4: C++ calls the C++ global demo.inc N times (the C++ floor)
      () -> (Long) callN.call(inc, (long) N, 1L),
      // 5: Java calls the lambda's body N times (plain Java)
      () -> {
        long s = 0;
        try {
          for (int i = 0; i < N; i++) {
            s += (Long) plainBody.call(1L);
          }
        } catch (Exception e) {
          throw new RuntimeException(e);
        }
        return s;
      },
      // 6: C++ calls the hand-written upcall stub N times (demo.call_n called by hand)
      () -> {
        try {
          cells.set(JAVA_INT, 0, 67); // kFerryFunction
          cells.set(JAVA_INT, 4, 0);
          cells.set(JAVA_LONG, 8, rawHandle);
          cells.set(JAVA_INT, 16, 1);
          cells.set(JAVA_LONG, 24, N);
          cells.set(JAVA_INT, 32, 1);
          cells.set(JAVA_LONG, 40, 1L);
          MemorySegment result = out2;
          result.set(JAVA_LONG, 0, 0L);
          result.set(JAVA_LONG, 8, 0L);
          int rc = (int) call.invokeExact(callNAddr, cells, 3, result);
          if (rc != 0) {
            throw new IllegalStateException("call_n failed");
          }
          return result.get(JAVA_LONG, 8);
        } catch (Throwable t) {
          throw new RuntimeException(t);
        }
      },
      // 6: field read through Ferry
      () -> {
        long s = 0;
        for (int i = 0; i < N; i++) {
          s += (Long) x.get("value");
        }
        return s;
      },
      // 7: plain Java field read
      () -> {
        long s = 0;
        for (int i = 0; i < N; i++) {
          s += plainNode.value;
        }
        return s;
      },
      // 8: hand-written FFM FerryObjectGetAttr (an int field: nothing to release)
      () -> {
        long s = 0;
        try {
          for (int i = 0; i < N; i++) {
            int rc = (int) getAttr.invokeExact(nodeAddr, name, out);
            if (rc != 0) {
              throw new IllegalStateException("getattr failed");
            }
            s += out.get(JAVA_LONG, 8);
          }
        } catch (Throwable t) {
          throw new RuntimeException(t);
        }
        return s;
      },
    };
    String[] names = {
      "Java calls the C++ global demo.add(i, 2)",
      "  plain Java floor: LongBinaryOperator.applyAsLong",
      "  FFM floor: FerryFunctionCall by hand, cells prefilled",
      "C++ calls a Java lambda (x + 1), per call (demo.call_n)",
      "  C++ floor: the same loop calling the C++ global demo.inc",
      "  plain Java floor: the lambda's body called from Java",
      "  FFM floor: the same loop calling a hand-written upcall stub",
      "x.get(\"value\") of a C++ node",
      "  plain Java floor: a field read",
      "  FFM floor: FerryObjectGetAttr by hand",
    };
    double[][] times = new double[rows.length][ROUNDS];
    for (int warm = 0; warm < 3; warm++) {
      for (LongSupplier row : rows) {
        sink = row.getAsLong();
      }
    }
    for (int r = 0; r < ROUNDS; r++) {
      for (int k = 0; k < rows.length; k++) {
        long t0 = System.nanoTime();
        sink = rows[k].getAsLong();
        times[k][r] = (System.nanoTime() - t0) / (double) N;
      }
    }
    double[] median = new double[rows.length];
    for (int k = 0; k < rows.length; k++) {
      Arrays.sort(times[k]);
      median[k] = times[k][ROUNDS / 2];
    }
    int[] of = {-1, 0, 0, -1, 3, 3, 3, -1, 7, 7};
    System.out.printf("N=%d per round, median of %d rounds, ns per operation%n", N, ROUNDS);
    for (int k = 0; k < rows.length; k++) {
      if (of[k] < 0) {
        System.out.printf("%-62s %8.1f ns%n", names[k], median[k]);
      } else {
        System.out.printf("%-62s %8.1f ns   Ferry is %.2fx%n", names[k], median[k],
            median[of[k]] / median[k]);
      }
    }
  }
}
