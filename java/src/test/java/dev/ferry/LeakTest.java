package dev.ferry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * 1e5 calls and 1e5 callbacks leave nothing behind. Three counts: the strong reference count
 * of an object passed through every call (C++'s own count, read from its header); the Java
 * lambdas kept for C++ ({@code Callbacks.BODIES}); and the references Java wrappers hold
 * ({@code Handle.LIVE}, after the GC ran the Cleaners), plus exceptions kept for errors.
 */
class LeakTest {
  private static final int N = 100_000;

  @BeforeAll
  static void load() {
    TestSupport.loadDemo();
  }

  @Test
  void callsLeakNoReferences() {
    Function add = Ferry.getGlobalFunc("demo.add");
    Function callN = Ferry.getGlobalFunc("demo.call_n");
    try (FerryObject x = Ferry.makeNode("demo.IntImm", Map.of("value", 1L))) {
      int refs = x.useCount();
      long live = Handle.LIVE.sum();
      long sum = 0;
      for (int i = 0; i < N; i++) {
        sum += (Long) add.call((long) i, 1L);
        Ferry.saveJson(x); // an object argument, a String result
        if (i % 10 == 0) { // Arrays made for a call hold x until the call ends
          assertTrue(Ferry.structuralEqual(List.of(x, "a string past seven bytes"), List.of(x,
              "a string past seven bytes")));
        }
      }
      assertEquals((long) N * (N + 1) / 2, sum);
      assertEquals(refs, x.useCount(), "references to an argument left by calls");
      // (<=: wrappers of earlier tests may be collected meanwhile; a leak adds 1e5.)
      assertTrue(Handle.LIVE.sum() <= live, "wrappers made by calls of plain values");
      // Object results: each wrapper released by the GC's Cleaner when unreachable.
      Function echo = Function.of(a -> a[0]);
      for (int i = 0; i < N / 10; i++) {
        callN.call(echo, 1L, x);
      }
      assertTrue(TestSupport.gcUntil(() -> x.useCount() == refs),
          "the Cleaner released the wrappers of results: " + x.useCount() + " vs " + refs);
      echo.close();
    }
  }

  /** How many live Java functions run `body`. */
  private static long functionsOf(Function.Body body) {
    return Callbacks.BODIES.values().stream().filter(b -> b == body).count();
  }

  @Test
  void callbacksLeakNoReferencesAndLambdasDieWithTheirFunction() {
    Function callN = Ferry.getGlobalFunc("demo.call_n");
    try (FerryObject x = Ferry.makeNode("demo.IntImm", Map.of("value", 2L))) {
      int refs = x.useCount();
      long[] seen = new long[1];
      Function.Body counter = a -> ++seen[0];
      try (Function count = Function.of(counter)) {
        assertEquals((long) N, callN.call(count, (long) N, 0L));
        assertEquals(N, seen[0]);
        assertEquals(1, functionsOf(counter));
      }
      assertEquals(0, functionsOf(counter), "the lambda let go with its Function");
      // Callbacks receiving an object: each receives a wrapper, released by the Cleaner.
      try (Function touch = Function.of(a -> ((FerryObject) a[0]).typeKey())) {
        for (int i = 0; i < 10; i++) {
          callN.call(touch, (long) N / 10, x);
        }
      }
      assertTrue(TestSupport.gcUntil(() -> x.useCount() == refs),
          "wrappers of callback arguments released: " + x.useCount() + " vs " + refs);
      // Lambdas passed to C++, which drops each Function when the call ends: none kept.
      Function.Body one = a -> 1L;
      Function call = Ferry.getGlobalFunc("demo.call");
      for (int i = 0; i < N / 10; i++) {
        assertEquals(1L, call.call(one));
      }
      assertEquals(0, functionsOf(one), "lambdas passed to C++ and dropped");
    }
  }

  @Test
  void errorsLeakNoExceptionsOrReferences() {
    Function callN = Ferry.getGlobalFunc("demo.catch");
    long payloads = Errors.PAYLOADS.size();
    try (Function bad = Function.of(a -> { throw new IllegalArgumentException("x"); })) {
      for (int i = 0; i < N / 50; i++) {
        assertEquals("ValueError: x", callN.call(bad, 0L));
      }
    }
    assertTrue(Errors.PAYLOADS.size() <= payloads, "exceptions kept past their errors");
  }
}
