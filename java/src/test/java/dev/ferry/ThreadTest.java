package dev.ferry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Calls from many Java threads; callbacks from C++ threads the JVM did not start. */
class ThreadTest {
  @BeforeAll
  static void load() {
    TestSupport.loadDemo();
  }

  @Test
  void manyJavaThreadsCallAtOnce() throws Exception {
    Function add = Ferry.getGlobalFunc("demo.add");
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try {
      List<Future<Long>> results = new ArrayList<>();
      for (int t = 0; t < 8; t++) {
        long base = t;
        results.add(pool.submit(() -> {
          long sum = 0;
          for (int i = 0; i < 10_000; i++) {
            sum += (Long) add.call(base, (long) i);
            String s = (String) Ferry.convert("thread " + base + " text long enough");
            assertEquals("thread " + base + " text long enough", s);
          }
          return sum;
        }));
      }
      for (int t = 0; t < 8; t++) {
        assertEquals(10_000L * t + 9_999L * 10_000 / 2, results.get(t).get());
      }
    } finally {
      pool.shutdown();
    }
  }

  @Test
  void cppThreadsRunJavaCallbacks() {
    Set<Thread> threads = ConcurrentHashMap.newKeySet();
    Function f = Function.of(a -> {
      threads.add(Thread.currentThread());
      return (Long) a[0];
    });
    Object sum = Ferry.getGlobalFunc("demo.call_threads").call(f, 4L, 2_000L);
    assertEquals(4L * (1_999L * 2_000 / 2), sum);
    assertTrue(threads.size() >= 2, "callbacks ran on the C++ threads: " + threads);
    assertTrue(!threads.contains(Thread.currentThread()));
  }

  @Test
  void anExceptionOnACppThreadComesBackToTheCaller() {
    Function f = Function.of(a -> {
      if ((Long) a[0] == 500L) {
        throw new IllegalArgumentException("at 500");
      }
      return 0L;
    });
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> Ferry.getGlobalFunc("demo.call_threads").call(f, 3L, 1_000L));
    assertEquals("at 500", e.getMessage());
  }

  @Test
  void callbacksOnCppThreadsCallBackIntoCpp() {
    Function add = Ferry.getGlobalFunc("demo.add");
    Function f = Function.of(a -> add.call(a[0], 1L));
    Object sum = Ferry.getGlobalFunc("demo.call_threads").call(f, 3L, 1_000L);
    assertEquals(3L * (999L * 1_000 / 2 + 1_000), sum);
  }
}
