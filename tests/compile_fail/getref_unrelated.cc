// expect: GetRef<R>\(p\): p must point to R::ContainerType
#include <ferry/ferry.h>

int main() {
  ferry::String s = "x";
  ferry::Error e = ferry::GetRef<ferry::Error>(s.get());
  return e.defined();
}
