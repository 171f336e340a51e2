// expect: as<T>\(\): T must be an Object type
#include <ferry/object.h>

int main() {
  ferry::ObjectRef ref;
  return ref.as<int>() != nullptr;
}
