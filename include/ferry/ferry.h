/// \file ferry/ferry.h
/// Everything Ferry offers to C++ in one include.
///
///     #include <ferry/ferry.h>
#ifndef FERRY_FERRY_H_
#define FERRY_FERRY_H_

#include "ferry/any.h"
#include "ferry/c_api.h"
#include "ferry/container/array.h"
#include "ferry/container/dict.h"
#include "ferry/container/list.h"
#include "ferry/container/map.h"
#include "ferry/container/optional.h"
#include "ferry/container/shape.h"
#include "ferry/container/tuple.h"
#include "ferry/container/variant.h"
#include "ferry/dtype.h"
#include "ferry/error.h"
#include "ferry/function.h"
#include "ferry/library.h"
#include "ferry/memory.h"
#include "ferry/object.h"
#include "ferry/reflection/enum.h"
#include "ferry/reflection/json.h"
#include "ferry/reflection/reflection.h"
#include "ferry/reflection/structural.h"
#include "ferry/reflection/transform.h"
#include "ferry/string.h"
#include "ferry/tensor.h"

#endif  // FERRY_FERRY_H_
