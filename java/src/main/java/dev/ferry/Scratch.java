package dev.ferry;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * Per-thread native scratch memory for calls: argument cells, result cells, C strings, and the
 * references made for a call's arguments (released when the call ends). Used as a stack: a call
 * takes a {@link #mark()}, allocates, and {@link #release(long)}s to the mark, so a callback
 * that C++ runs inside a call on the same thread nests above it. No arena is opened per call.
 */
final class Scratch {
  private static final ThreadLocal<Scratch> CURRENT = ThreadLocal.withInitial(Scratch::new);
  private static final long SIZE = 32 * 1024;

  static Scratch get() {
    return CURRENT.get();
  }

  private final MemorySegment buffer = Arena.ofAuto().allocate(SIZE, 16);
  private final long base = buffer.address();
  private long top;
  private long[] temps = new long[16];
  private int numTemps;
  /** Blocks past the buffer's end, kept reachable until released to their mark. */
  private final List<MemorySegment> overflow = new ArrayList<>();

  private Scratch() {}

  /** The current position, to release to. */
  long mark() {
    return (top << 32) | numTemps;
  }

  /** `bytes` of native memory, 16-aligned, valid until release to an earlier mark. */
  long alloc(long bytes) {
    long rounded = (bytes + 15) & ~15L;
    if (top + rounded <= SIZE) {
      long address = base + top;
      top += rounded;
      return address;
    }
    MemorySegment block = Arena.ofAuto().allocate(rounded, 16);
    overflow.add(block);
    top = SIZE + 1; // later allocations of this frame overflow too; the mark restores it
    return block.address();
  }

  /** A NUL-terminated UTF-8 copy of `text` (its bytes as given). */
  long cString(byte[] utf8) {
    long address = alloc(utf8.length + 1L);
    MemorySegment.copy(utf8, 0, C.ALL, java.lang.foreign.ValueLayout.JAVA_BYTE, address, utf8.length);
    C.ALL.set(java.lang.foreign.ValueLayout.JAVA_BYTE, address + utf8.length, (byte) 0);
    return address;
  }

  /** A C string of a name or path: one with a NUL byte would name something else in C. */
  long cString(String text) {
    if (text.indexOf('\0') >= 0) {
      throw new FerryException(
          "ValueError", "a name or path with a NUL byte: \"" + text.replace("\0", "\\0") + "\"");
    }
    return cString(text.getBytes(java.nio.charset.StandardCharsets.UTF_8));
  }

  /** Releases `handle` (a new reference made for this frame) when the frame is released. */
  void temp(long handle) {
    if (numTemps == temps.length) {
      temps = java.util.Arrays.copyOf(temps, temps.length * 2);
    }
    temps[numTemps++] = handle;
  }

  /** Frees everything allocated after `mark` and releases the references taken since. */
  void release(long mark) {
    int keepTemps = (int) mark;
    long keepTop = mark >>> 32;
    RuntimeException failure = null;
    while (numTemps > keepTemps) {
      long handle = temps[--numTemps];
      try {
        C.decRef(handle);
      } catch (RuntimeException e) {
        failure = e;
      }
    }
    if (top > SIZE && keepTop <= SIZE && !overflow.isEmpty()) {
      overflow.clear();
    }
    top = keepTop;
    if (failure != null) {
      throw failure;
    }
  }
}
