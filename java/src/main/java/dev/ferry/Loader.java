package dev.ferry;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.foreign.Arena;
import java.lang.foreign.SymbolLookup;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Finds and opens libferry, once per process. The search, first hit wins:
 *
 * <ol>
 *   <li>the system property {@code ferry.library.path}: the library file itself, or a directory
 *       holding {@code libferry.so} (an install's {@code lib/}, or a CMake build tree);
 *   <li>the environment variable {@code FERRY_LIBRARY_PATH}: directories (or files) separated by
 *       ':', the list Python's unpickling also searches for user libraries;
 *   <li>each directory of {@code java.library.path};
 *   <li>{@code python3 -m ferry --lib-dir}, the installed Python package's library (the
 *       interpreter is {@code FERRY_PYTHON} when set).
 * </ol>
 *
 * <p>A failure is a {@link FerryException} ("ImportError") that lists every place looked at and
 * why each was passed over; it is kept and thrown again by every later use.
 */
@SuppressWarnings("restricted") // opening libferry
final class Loader {
  private Loader() {}

  /** The file name of the library on this platform. */
  static final String FILE_NAME = System.mapLibraryName("ferry");

  private static final Object LOCK = new Object();
  private static volatile SymbolLookup lookup;
  private static volatile Path path;
  private static FerryException failure;

  /** The symbols of libferry, opening it at first use; throws the search's failure. */
  static SymbolLookup lookup() {
    SymbolLookup found = lookup;
    if (found != null) {
      return found;
    }
    synchronized (LOCK) {
      if (lookup == null) {
        if (failure != null) {
          throw failure.copy();
        }
        List<String> looked = new ArrayList<>();
        Path file = search(looked);
        if (file == null) {
          failure =
              new FerryException(
                  "ImportError",
                  "cannot find "
                      + FILE_NAME
                      + "; looked at:\n  "
                      + String.join("\n  ", looked)
                      + "\nset FERRY_LIBRARY_PATH (or -Dferry.library.path) to the library or"
                      + " its directory");
          throw failure.copy();
        }
        try {
          // Global: the library stays mapped for the life of the process, as every Ferry
          // object may point into it.
          lookup = SymbolLookup.libraryLookup(file, Arena.global());
          path = file;
        } catch (IllegalArgumentException e) {
          failure =
              new FerryException("ImportError", "cannot load " + file + ": " + e.getMessage());
          throw failure.copy();
        }
      }
      return lookup;
    }
  }

  /** The library file that was loaded (after {@link #lookup()} succeeded). */
  static Path path() {
    lookup();
    return path;
  }

  private static Path search(List<String> looked) {
    String property = System.getProperty("ferry.library.path", "");
    if (!property.isEmpty()) {
      Path hit = candidate(Path.of(property), "-Dferry.library.path", looked);
      if (hit != null) {
        return hit;
      }
    } else {
      looked.add("-Dferry.library.path: not set");
    }
    // The same variable Python's unpickling searches for user libraries (docs/distributed.md):
    // a list of directories separated by ':'; a file names libferry itself.
    String env = System.getenv("FERRY_LIBRARY_PATH");
    if (env != null && !env.isEmpty()) {
      for (String entry : env.split(java.io.File.pathSeparator)) {
        if (!entry.isEmpty()) {
          Path hit = candidate(Path.of(entry), "FERRY_LIBRARY_PATH", looked);
          if (hit != null) {
            return hit;
          }
        }
      }
    } else {
      looked.add("FERRY_LIBRARY_PATH: not set");
    }
    String javaPath = System.getProperty("java.library.path", "");
    for (String dir : javaPath.split(java.io.File.pathSeparator)) {
      if (!dir.isEmpty()) {
        Path hit = candidate(Path.of(dir), "java.library.path", looked);
        if (hit != null) {
          return hit;
        }
      }
    }
    String python = System.getenv().getOrDefault("FERRY_PYTHON", "python3");
    String dir = pythonLibDir(python, looked);
    if (dir != null) {
      return candidate(Path.of(dir), python + " -m ferry --lib-dir", looked);
    }
    return null;
  }

  /** `where` as a library file or a directory holding one, else null (noting why). */
  private static Path candidate(Path where, String source, List<String> looked) {
    Path file = Files.isDirectory(where) ? where.resolve(FILE_NAME) : where;
    if (Files.isRegularFile(file)) {
      return file.toAbsolutePath();
    }
    looked.add(source + ": " + file + " (no such file)");
    return null;
  }

  private static String pythonLibDir(String python, List<String> looked) {
    String what = python + " -m ferry --lib-dir";
    try {
      Process process =
          new ProcessBuilder(python, "-m", "ferry", "--lib-dir")
              .redirectErrorStream(true)
              .start();
      process.getOutputStream().close();
      String output;
      try (BufferedReader reader =
          new BufferedReader(
              new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
        output = String.join("\n", reader.lines().toList()).strip();
      }
      if (!process.waitFor(60, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        looked.add(what + ": timed out");
        return null;
      }
      if (process.exitValue() != 0 || output.isEmpty()) {
        String last = output.lines().reduce((a, b) -> b).orElse("no output");
        looked.add(what + ": exit " + process.exitValue() + " (" + last + ")");
        return null;
      }
      return output.lines().reduce((a, b) -> b).orElse(output);
    } catch (java.io.IOException e) {
      looked.add(what + ": cannot run " + python + " (" + e.getMessage() + ")");
      return null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      looked.add(what + ": interrupted");
      return null;
    }
  }
}
