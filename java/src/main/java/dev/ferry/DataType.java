package dev.ferry;

/**
 * A Ferry data type (DLPack's code, bits, lanes): {@code DataType.parse("float32")}. Its text
 * form is Ferry's ({@code "int64"}, {@code "float32x4"}).
 */
public record DataType(int code, int bits, int lanes) {
  /** int64. */
  public static final DataType INT64 = new DataType(0, 64, 1);
  /** float64. */
  public static final DataType FLOAT64 = new DataType(2, 64, 1);
  /** float32. */
  public static final DataType FLOAT32 = new DataType(2, 32, 1);

  /** Parses Ferry's text form ("int64", "float32x4"); a FerryException ("ValueError") else. */
  public static DataType parse(String text) {
    Ferry.ensureLoaded();
    try (java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofConfined()) {
      java.lang.foreign.MemorySegment out = arena.allocate(C.DTYPE);
      int rc = (int) C.DATA_TYPE_FROM_STRING.invokeExact(arena.allocateFrom(text), out);
      Values.check(rc);
      return new DataType(
          Byte.toUnsignedInt(out.get(java.lang.foreign.ValueLayout.JAVA_BYTE, 0)),
          Byte.toUnsignedInt(out.get(java.lang.foreign.ValueLayout.JAVA_BYTE, 1)),
          Short.toUnsignedInt(out.get(java.lang.foreign.ValueLayout.JAVA_SHORT, 2)));
    } catch (Throwable t) {
      throw C.rethrow(t);
    }
  }

  /** The bytes of one element (all lanes). */
  public long byteSize() {
    return ((long) bits * lanes + 7) / 8;
  }

  @Override
  public String toString() {
    String name = switch (code) {
      case 0 -> "int";
      case 1 -> "uint";
      case 2 -> "float";
      case 3 -> "handle";
      case 4 -> "bfloat";
      case 5 -> "complex";
      case 6 -> "bool";
      default -> "code" + code + "_";
    };
    return name + bits + (lanes != 1 ? "x" + lanes : "");
  }
}
