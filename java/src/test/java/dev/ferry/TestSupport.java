package dev.ferry;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;

/**
 * Test support: builds the Rust frontend's test library rust/ferry/tests/demo/demo.cc (the
 * README's demo.add, demo.call, demo.IntImm, plus globals that drive callbacks from C++ loops
 * and C++ threads) into libdemo.so in the tests' working directory (target/ferry-demo, set by
 * the pom), against the libferry this process uses; rebuilt when missing or older than its
 * source or libferry. Then loads it once.
 */
final class TestSupport {
  private TestSupport() {}

  private static boolean loaded;

  /** The directory holding libdemo.so: the working directory of the tests. */
  static Path demoDir() {
    return Path.of(System.getProperty("user.dir")).toAbsolutePath();
  }

  /** The repository's root (ferry.source.dir from the pom, else ../ of java/). */
  static Path sourceDir() {
    String dir = System.getProperty("ferry.source.dir", "");
    return dir.isEmpty() ? Path.of("..", "..", "..").toAbsolutePath().normalize()
        : Path.of(dir).toAbsolutePath().normalize();
  }

  static synchronized Path demoLibrary() {
    Path library = demoDir().resolve("libdemo.so");
    Path source = sourceDir().resolve("rust/ferry/tests/demo/demo.cc");
    Path libferry = Ferry.libraryPath();
    try {
      if (!Files.exists(library)
          || Files.getLastModifiedTime(source).compareTo(Files.getLastModifiedTime(library)) > 0
          || Files.getLastModifiedTime(libferry).compareTo(Files.getLastModifiedTime(library))
              > 0) {
        Files.createDirectories(demoDir());
        Path partial = demoDir().resolve("libdemo.so." + ProcessHandle.current().pid());
        String cxx = System.getenv().getOrDefault("CXX", "c++");
        Path libDir = libferry.getParent();
        List<String> command = new ArrayList<>(List.of(
            cxx, "-std=c++17", "-shared", "-fPIC", "-O1", "-pthread",
            "-I" + sourceDir().resolve("include"), source.toString(),
            "-L" + libDir, "-Wl,-rpath," + libDir, "-lferry", "-o", partial.toString()));
        Process p = new ProcessBuilder(command).inheritIO().start();
        if (p.waitFor() != 0) {
          throw new AssertionError(cxx + " failed to build " + source);
        }
        Files.move(partial, library, StandardCopyOption.REPLACE_EXISTING,
            StandardCopyOption.ATOMIC_MOVE);
      }
    } catch (IOException e) {
      throw new AssertionError("cannot build libdemo.so: " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
    return library;
  }

  /** Builds (when needed) and loads libdemo.so, once per JVM. */
  static synchronized void loadDemo() {
    if (!loaded) {
      Ferry.loadLibrary(demoLibrary().toString());
      loaded = true;
    }
  }

  /** Runs the GC until `condition` holds, for at most ~10 s; whether it came to hold. */
  static boolean gcUntil(java.util.function.BooleanSupplier condition) {
    for (int i = 0; i < 200; i++) {
      if (condition.getAsBoolean()) {
        return true;
      }
      System.gc();
      try {
        Thread.sleep(50);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      }
    }
    return condition.getAsBoolean();
  }
}
