package dev.ferry;

import java.util.List;

/**
 * An error of Ferry: what C++ threw (or Python raised) in a call, or what this frontend refuses.
 * {@link #kind()} is the error's kind ({@code "TypeError"}, {@code "ValueError"}, ... or any
 * name a library invents), {@link #getMessage()} its message, {@link #backtrace()} the text of
 * its frames in C++ (and Python), and {@link #frames()} the C++ frames one by one. The C++ frames
 * also lead the Java stack trace (class {@code <C++>}), so a printed trace shows both sides.
 *
 * <pre>{@code
 * try { add.call("a", 2L); } catch (FerryException e) { assert e.kind().equals("TypeError"); }
 * }</pre>
 */
public final class FerryException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** One C++ frame of the error's backtrace: function, source file and line, shared object. */
  public record Frame(String function, String file, int line, String library) {
    @Override
    public String toString() {
      String where = file.isEmpty() ? library : file + ":" + line;
      return (function.isEmpty() ? "??" : function) + " (" + where + ")";
    }
  }

  private final String kind;
  private final String backtrace;
  private final transient List<Frame> frames;

  /** An error of {@code kind} with {@code message}, as this frontend raises one. */
  public FerryException(String kind, String message) {
    this(kind, message, "", List.of());
  }

  FerryException(String kind, String message, String backtrace, List<Frame> frames) {
    super(message);
    this.kind = kind;
    this.backtrace = backtrace == null ? "" : backtrace;
    this.frames = List.copyOf(frames);
    if (!this.frames.isEmpty()) {
      StackTraceElement[] java = getStackTrace();
      StackTraceElement[] both = new StackTraceElement[this.frames.size() + java.length];
      for (int i = 0; i < this.frames.size(); i++) {
        Frame f = this.frames.get(i);
        both[i] =
            new StackTraceElement(
                "<C++>",
                f.function().isEmpty() ? "??" : f.function(),
                f.file().isEmpty() ? f.library() : f.file(),
                f.file().isEmpty() ? -1 : f.line());
      }
      System.arraycopy(java, 0, both, this.frames.size(), java.length);
      setStackTrace(both);
    }
  }

  /** The kind of the error, e.g. {@code "TypeError"}. */
  public String kind() {
    return kind;
  }

  /** The backtrace text Ferry recorded (C++ frames, and Python's when a callback raised). */
  public String backtrace() {
    return backtrace;
  }

  /** The C++ frames of the error, innermost first (empty for errors made in Java). */
  public List<Frame> frames() {
    return frames == null ? List.of() : frames;
  }

  @Override
  public String toString() {
    return "dev.ferry.FerryException: " + kind + ": " + getMessage();
  }

  /** The same error, thrown again from here (for failures kept and reported more than once). */
  FerryException copy() {
    FerryException again = new FerryException(kind, getMessage(), backtrace, frames());
    again.initCause(this);
    return again;
  }
}
