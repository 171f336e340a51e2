package dev.ferry;

/**
 * A ferry.Array seen as an immutable {@code java.util.List}: elements are converted as a call's
 * results are; writes throw {@code UnsupportedOperationException} (Arrays are values: make a new
 * one with {@link Ferry#convert}). Made from Java by passing any {@code java.util.List}.
 */
public final class FerryArray extends CellList implements FerryObject {
  FerryArray(long address) {
    super(address);
  }
}
