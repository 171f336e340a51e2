package dev.ferry;

/** A Ferry object without a Java class of its own (a node, a Shape, an Error, ...). */
final class Node extends Wrapper implements FerryObject {
  Node(long address) {
    super(address);
  }
}
