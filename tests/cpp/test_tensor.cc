// Tests of ferry/tensor.h and ferry/dlpack.h: layout, allocation, ownership, DLPack hand-overs
// both ways (each deleter runs exactly once), typed-function arguments, errors.
#include <ferry/ferry.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

#include "test_util.h"

namespace {

using namespace ferry;
using ferry_test::ExpectError;

static_assert(sizeof(FerryTensorObject) == 72, "header + DLTensor + flags");

/// A producer's tensor, counting its deleter's calls.
struct Producer {
  std::vector<float> data;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  int deleted = 0;
};

DLManagedTensor* MakeManaged(Producer* p, bool with_strides) {
  auto* m = new DLManagedTensor{};
  m->dl_tensor.data = p->data.data();
  m->dl_tensor.device = DLDevice{kDLCPU, 0};
  m->dl_tensor.ndim = static_cast<int32_t>(p->shape.size());
  m->dl_tensor.dtype = DLDataType{kDLFloat, 32, 1};
  m->dl_tensor.shape = p->shape.data();
  m->dl_tensor.strides = with_strides ? p->strides.data() : nullptr;
  m->manager_ctx = p;
  m->deleter = [](DLManagedTensor* self) {
    ++static_cast<Producer*>(self->manager_ctx)->deleted;
    delete self;
  };
  return m;
}

DLManagedTensorVersioned* MakeVersioned(Producer* p, uint64_t flags) {
  auto* m = new DLManagedTensorVersioned{};
  m->version = DLPackVersion{1, 0};
  m->flags = flags;
  m->dl_tensor.data = p->data.data();
  m->dl_tensor.device = DLDevice{kDLCPU, 0};
  m->dl_tensor.ndim = static_cast<int32_t>(p->shape.size());
  m->dl_tensor.dtype = DLDataType{kDLFloat, 32, 1};
  m->dl_tensor.shape = p->shape.data();
  m->manager_ctx = p;
  m->deleter = [](DLManagedTensorVersioned* self) {
    ++static_cast<Producer*>(self->manager_ctx)->deleted;
    delete self;
  };
  return m;
}

TEST(Tensor, EmptyLayout) {
  Tensor t = Tensor::Empty({2, 3, 4}, DataType::Float(32));
  EXPECT_EQ(t->type_index(), kFerryTensor);
  EXPECT_STREQ(t->GetTypeKey(), "ferry.Tensor");
  EXPECT_EQ(t.ndim(), 3);
  EXPECT_EQ(t.shape(), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(t.strides(), (std::vector<int64_t>{12, 4, 1}));
  EXPECT_EQ(t.shape()[1], 3);
  EXPECT_EQ(t.shape().size(), 3u);
  ExpectError([&] { (void)t.shape()[3]; }, "IndexError", {"3"});
  EXPECT_EQ(t.dtype(), DataType::Float(32));
  EXPECT_EQ(t.device().device_type, kDLCPU);
  EXPECT_EQ(t.numel(), 24);
  EXPECT_EQ(t.nbytes(), 96);
  EXPECT_TRUE(t.IsContiguous());
  EXPECT_FALSE(t.IsReadOnly());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data_ptr()) % 64, 0u);
  // The DLTensor sits where c_api.h's FerryTensorObject says (offsetof is not allowed on
  // TensorObj, which is not standard-layout).
  const auto* obj = t.get();
  EXPECT_EQ(reinterpret_cast<const char*>(&obj->dl_tensor) - reinterpret_cast<const char*>(obj),
            static_cast<std::ptrdiff_t>(offsetof(FerryTensorObject, dl_tensor)));
  EXPECT_EQ(reinterpret_cast<const char*>(&obj->flags_) - reinterpret_cast<const char*>(obj),
            static_cast<std::ptrdiff_t>(offsetof(FerryTensorObject, flags)));
  EXPECT_EQ(&static_cast<const FerryTensorObject*>(
                 static_cast<const void*>(details::ObjectUnsafe::GetHeader(obj)))
                 ->dl_tensor,
            &obj->dl_tensor);
  // Shape and strides live in the object's own block, right after it.
  EXPECT_EQ(reinterpret_cast<const char*>(obj->dl_tensor.shape),
            reinterpret_cast<const char*>(obj + 1));
  EXPECT_EQ(obj->dl_tensor.strides, obj->dl_tensor.shape + 3);
  // The memory is usable to its end.
  std::memset(t.data_ptr(), 0xab, static_cast<size_t>(t.nbytes()));
}

TEST(Tensor, EmptyEdgeCases) {
  Tensor scalar = Tensor::Empty({}, DataType::Int(64));
  EXPECT_EQ(scalar.ndim(), 0);
  EXPECT_EQ(scalar.numel(), 1);
  EXPECT_EQ(scalar.nbytes(), 8);
  EXPECT_TRUE(scalar.IsContiguous());
  Tensor empty = Tensor::Empty({3, 0}, DataType::Float(64));
  EXPECT_EQ(empty.numel(), 0);
  EXPECT_EQ(empty.nbytes(), 0);
  EXPECT_NE(empty.data_ptr(), nullptr);
  EXPECT_EQ(Tensor::Empty({5}, DataType::Float(32, 4)).nbytes(), 80);
  EXPECT_EQ(Tensor::Empty({3}, DataType(DataType::kDLBool, 8, 1)).dtype().ToString(), "bool8");
  EXPECT_EQ(Tensor::Empty({3}, DataType(DataType::kComplex, 64, 1)).nbytes(), 24);
  ExpectError(
      [] {
        Tensor::Empty({2, -1}, DataType::Float(32));
      },
      "ValueError", {"dimension 1 is negative"});
  ExpectError([] { Tensor::Empty({2}, DataType::Void()); }, "ValueError", {"void"});
  ExpectError(
      [] {
        Tensor::Empty({int64_t{1} << 62, 8}, DataType::Float(32));
      },
      "ValueError", {"too big"});
  ExpectError(
      [] {
        Tensor::Empty({2}, DataType::Float(32), DLDevice{kDLCUDA, 1});
      },
      "ValueError", {"no allocator", "cuda:1"});
}

struct CountingAllocator {
  int allocs = 0;
  int frees = 0;
  void* last = nullptr;
};

TEST(Tensor, AllocatorHook) {
  CountingAllocator counts;
  TensorAllocator a;
  a.ctx = &counts;
  a.alloc = [](void* ctx, DLDevice device, size_t nbytes, size_t alignment) -> void* {
    auto* c = static_cast<CountingAllocator*>(ctx);
    EXPECT_EQ(device.device_type, kDLExtDev);
    EXPECT_EQ(alignment, 64u);
    ++c->allocs;
    c->last = std::malloc(nbytes == 0 ? 1 : nbytes);
    return c->last;
  };
  a.free = [](void* ctx, DLDevice, void* ptr) {
    auto* c = static_cast<CountingAllocator*>(ctx);
    EXPECT_NE(ptr, nullptr);
    ++c->frees;
    std::free(ptr);
  };
  SetTensorAllocator(kDLExtDev, a);
  {
    Tensor t = Tensor::Empty({4}, DataType::Int(32), DLDevice{kDLExtDev, 0});
    EXPECT_EQ(counts.allocs, 1);
    EXPECT_EQ(t.data_ptr(), counts.last);
    Tensor copy = t;
    EXPECT_EQ(counts.frees, 0);
  }
  EXPECT_EQ(counts.frees, 1);
  {
    // A tensor keeps the allocator that made it, whatever is registered later.
    Tensor t = Tensor::Empty({2}, DataType::Int(32), DLDevice{kDLExtDev, 0});
    SetTensorAllocator(kDLExtDev, TensorAllocator{});
    // Device memory cannot be read: such tensors are structurally equal only to themselves.
    EXPECT_TRUE(StructuralEqual()(t, t));
    SetTensorAllocator(kDLExtDev, a);
    Tensor u = Tensor::Empty({2}, DataType::Int(32), DLDevice{kDLExtDev, 0});
    EXPECT_FALSE(StructuralEqual()(t, u));
    u = Tensor();
    EXPECT_EQ(counts.frees, 2);
    SetTensorAllocator(kDLExtDev, TensorAllocator{});
  }
  EXPECT_EQ(counts.allocs, 3);
  EXPECT_EQ(counts.frees, 3);
  ExpectError(
      [] {
        Tensor::Empty({2}, DataType::Int(32), DLDevice{kDLExtDev, 0});
      },
      "ValueError", {"ext_dev:0"});
  TensorAllocator half;
  half.alloc = a.alloc;
  ExpectError([&] { SetTensorAllocator(kDLExtDev, half); }, "ValueError", {"both"});
}

TEST(Tensor, FromDLPackOwnsUntilLastReference) {
  Producer p{{0, 1, 2, 3, 4, 5}, {2, 3}, {}, 0};
  {
    Tensor t = Tensor::FromDLPack(MakeManaged(&p, /*with_strides=*/false));
    EXPECT_EQ(t.data_ptr(), p.data.data());                // no copy
    EXPECT_EQ(t.strides(), (std::vector<int64_t>{3, 1}));  // computed
    EXPECT_TRUE(t.IsContiguous());
    Tensor other = t;
    t = Tensor();
    EXPECT_EQ(p.deleted, 0);
    EXPECT_EQ(static_cast<float*>(other.data_ptr())[4], 4.0f);
  }
  EXPECT_EQ(p.deleted, 1);
}

TEST(Tensor, FromDLPackStridedView) {
  Producer p{{0, 1, 2, 3, 4, 5}, {3, 2}, {1, 3}, 0};  // the transpose of a 2x3
  {
    Tensor t = Tensor::FromDLPack(MakeManaged(&p, /*with_strides=*/true));
    EXPECT_EQ(t.strides(), (std::vector<int64_t>{1, 3}));
    EXPECT_FALSE(t.IsContiguous());
    EXPECT_NE(details::AnyRepr(Any(t).raw()).find("[0.0, 3.0, 1.0, 4.0, 2.0, 5.0]"),
              std::string::npos)
        << details::AnyRepr(Any(t).raw());
  }
  EXPECT_EQ(p.deleted, 1);
}

TEST(Tensor, FromDLPackVersionedKeepsReadOnly) {
  Producer p{{1, 2}, {2}, {}, 0};
  {
    Tensor t = Tensor::FromDLPackVersioned(MakeVersioned(&p, DLPACK_FLAG_BITMASK_READ_ONLY));
    EXPECT_TRUE(t.IsReadOnly());
    ExpectError([&] { t.ToDLPack(); }, "ValueError", {"read-only"});
    DLManagedTensorVersioned* out = t.ToDLPackVersioned();
    EXPECT_EQ(out->flags & DLPACK_FLAG_BITMASK_READ_ONLY, DLPACK_FLAG_BITMASK_READ_ONLY);
    out->deleter(out);
  }
  EXPECT_EQ(p.deleted, 1);
}

TEST(Tensor, FromDLPackErrorsLeaveOwnershipWithCaller) {
  Producer p{{1, 2}, {2}, {}, 0};
  DLManagedTensorVersioned* m = MakeVersioned(&p, 0);
  m->version.major = 2;
  ExpectError([&] { Tensor::FromDLPackVersioned(m); }, "ValueError", {"version 2.0"});
  m->version.major = 1;
  m->dl_tensor.dtype = DLDataType{kDLFloat8_e4m3fn, 8, 1};
  ExpectError([&] { Tensor::FromDLPackVersioned(m); }, "ValueError", {"dtype code 10"});
  m->dl_tensor.dtype = DLDataType{kDLFloat, 32, 1};
  int64_t bad_shape[] = {-2};
  m->dl_tensor.shape = bad_shape;
  ExpectError([&] { Tensor::FromDLPackVersioned(m); }, "ValueError", {"negative"});
  m->dl_tensor.ndim = -1;
  ExpectError([&] { Tensor::FromDLPackVersioned(m); }, "ValueError", {"ndim -1"});
  EXPECT_EQ(p.deleted, 0);
  m->deleter(m);
  EXPECT_EQ(p.deleted, 1);
  ExpectError([] { Tensor::FromDLPack(nullptr); }, "ValueError", {"NULL"});
}

TEST(Tensor, ToDLPackRoundTrip) {
  Tensor t = Tensor::Empty({2, 2}, DataType::Int(32));
  auto* data = static_cast<int32_t*>(t.data_ptr());
  for (int i = 0; i < 4; ++i) data[i] = i * 10;
  EXPECT_EQ(t.use_count(), 1);
  DLManagedTensor* out = t.ToDLPack();
  EXPECT_EQ(t.use_count(), 2);  // the hand-over holds the tensor
  EXPECT_EQ(out->dl_tensor.data, t.data_ptr());
  EXPECT_EQ(out->dl_tensor.shape[0], 2);
  EXPECT_EQ(out->dl_tensor.strides[1], 1);
  {
    // Back through FromDLPack: a second Tensor over the same memory; dropping it calls the
    // export's deleter, which drops the reference the export took.
    Tensor back = Tensor::FromDLPack(out);
    EXPECT_EQ(static_cast<int32_t*>(back.data_ptr())[3], 30);
    static_cast<int32_t*>(back.data_ptr())[0] = 7;
    EXPECT_EQ(data[0], 7);  // shared, not copied
  }
  EXPECT_EQ(t.use_count(), 1);
  DLManagedTensorVersioned* v = t.ToDLPackVersioned();
  EXPECT_EQ(v->version.major, 1u);
  EXPECT_EQ(v->version.minor, static_cast<uint32_t>(DLPACK_MINOR_VERSION));
  EXPECT_EQ(v->flags, 0u);
  Tensor back = Tensor::FromDLPackVersioned(v);
  EXPECT_EQ(t.use_count(), 2);
  back = Tensor();
  EXPECT_EQ(t.use_count(), 1);
}

TEST(Tensor, CApi) {
  const int64_t shape[] = {3};
  FerryObjectHandle h = nullptr;
  ASSERT_EQ(
      FerryTensorEmpty(shape, 1, FerryDataType{kFerryDTypeFloat, 64, 1}, DLDevice{kDLCPU, 0}, &h),
      0);
  auto* raw = static_cast<FerryTensorObject*>(h);
  EXPECT_EQ(raw->header.type_index, kFerryTensor);
  EXPECT_EQ(raw->dl_tensor.shape[0], 3);
  DLManagedTensor* m = nullptr;
  ASSERT_EQ(FerryTensorToDLPack(h, &m), 0);
  FerryObjectHandle h2 = nullptr;
  ASSERT_EQ(FerryTensorFromDLPack(m, &h2), 0);
  EXPECT_EQ(static_cast<FerryTensorObject*>(h2)->dl_tensor.data, raw->dl_tensor.data);
  FerryObjectDecRef(h2);
  FerryObjectDecRef(h);
  // Not a tensor: a TypeError.
  FerryObjectHandle s = nullptr;
  ASSERT_EQ(FerryStringCreate("abc", 3, &s), 0);
  EXPECT_EQ(FerryTensorToDLPack(s, &m), -1);
  FerryObjectHandle err = nullptr;
  FerryErrorMoveFromRaised(&err);
  ASSERT_NE(err, nullptr);
  const char *kind, *message, *backtrace;
  FerryErrorGetInfo(err, &kind, &message, &backtrace);
  EXPECT_STREQ(kind, "TypeError");
  EXPECT_NE(std::string(message).find("ferry.String"), std::string::npos);
  FerryObjectDecRef(err);
  FerryObjectDecRef(s);
}

int64_t SumInts(Tensor t) {
  int64_t sum = 0;
  for (int64_t i = 0; i < t.numel(); ++i) sum += static_cast<int32_t*>(t.data_ptr())[i];
  return sum;
}

TEST(Tensor, FunctionArguments) {
  Function sum = Function::FromTyped(SumInts);
  Function ndim = Function::FromTyped([](DLTensor* t) { return t->ndim; });
  Function identity = Function::FromTyped([](Tensor t) { return t; });
  Tensor t = Tensor::Empty({4}, DataType::Int(32));
  for (int i = 0; i < 4; ++i) static_cast<int32_t*>(t.data_ptr())[i] = i + 1;
  EXPECT_EQ(sum(t).cast<int64_t>(), 10);
  EXPECT_EQ(ndim(t).cast<int32_t>(), 1);
  EXPECT_EQ(t.use_count(), 1);
  // A borrowed DLTensor* converts to a Tensor view for the call.
  int32_t values[] = {5, 6};
  int64_t dims[] = {2};
  DLTensor borrowed{values, DLDevice{kDLCPU, 0}, 1, DLDataType{kDLInt, 32, 1}, dims, nullptr, 0};
  EXPECT_EQ(sum(&borrowed).cast<int64_t>(), 11);
  EXPECT_EQ(ndim(&borrowed).cast<int32_t>(), 1);
  AnyView view = &borrowed;
  EXPECT_EQ(view.type_index(), kFerryDLTensorPtr);
  EXPECT_STREQ(view.GetTypeKey(), "DLTensor*");
  Tensor same = identity(t).cast<Tensor>();
  EXPECT_TRUE(same.same_as(t));
  try {
    sum(String("not a tensor"));
    ADD_FAILURE() << "expected a TypeError";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), "TypeError");
    EXPECT_NE(std::string(e.what()).find("ferry.Tensor"), std::string::npos) << e.what();
  }
}

TEST(Tensor, ReadOnlyArgumentsAreRefusedWhereTheyMayBeWritten) {
  Producer p{{1, 2, 3}, {3}, {}, 0};
  Tensor ro = Tensor::FromDLPackVersioned(MakeVersioned(&p, DLPACK_FLAG_BITMASK_READ_ONLY));
  ASSERT_TRUE(ro.IsReadOnly());
  Tensor rw = Tensor::Empty({2}, DataType::Float(32));
  ASSERT_FALSE(rw.IsReadOnly());
  Function write = Function::FromTyped([](Tensor t) { return t.ndim(); }, "demo.write");
  Function write_ptr = Function::FromTyped([](DLTensor* t) { return t->ndim; }, "demo.write_ptr");
  Function read = Function::FromTyped(
      [](ConstTensor t) {
        return static_cast<const float*>(t.data_ptr())[t.numel() - 1] + (t.IsReadOnly() ? 100 : 0);
      },
      "demo.read");
  Function read_ptr =
      Function::FromTyped([](const DLTensor* t) { return t->ndim; }, "demo.read_ptr");
  // A parameter that may write refuses, naming the function and the argument's position.
  ExpectError([&] { write(ro); }, "ValueError",
              {"argument 0 of `demo.write(0: ferry.Tensor) -> int", "read-only", "ConstTensor"});
  ExpectError([&] { write_ptr(ro); }, "ValueError",
              {"argument 0 of `demo.write_ptr(0: DLTensor*)", "read-only"});
  ExpectError([&] { Any(ro).cast<Tensor>(); }, "ValueError", {"read-only"});
  ExpectError([&] { Any(ro).cast<DLTensor*>(); }, "ValueError", {"read-only"});
  // One that only reads accepts it, and a writable tensor too.
  EXPECT_EQ(read(ro).cast<double>(), 103.0);
  EXPECT_EQ(read_ptr(ro).cast<int>(), 1);
  EXPECT_EQ(read_ptr(rw).cast<int>(), 1);
  static_cast<float*>(rw.data_ptr())[1] = 5.0f;
  EXPECT_EQ(read(rw).cast<double>(), 5.0);
  ConstTensor as_const = rw;  // every Tensor is a ConstTensor
  EXPECT_TRUE(as_const.same_as(rw));
  EXPECT_EQ(Any(ro).cast<ConstTensor>().get(), ro.get());
  // A const DLTensor* stays read-only through a call: refused where it may be written, a
  // read-only view where it is read.
  const DLTensor* borrowed = rw.GetDLTensorPtr();
  AnyView cell = borrowed;
  EXPECT_EQ(cell.type_index(), kFerryDLTensorPtr);
  ExpectError([&] { write(borrowed); }, "ValueError", {"argument 0", "read-only"});
  ExpectError([&] { write_ptr(borrowed); }, "ValueError", {"argument 0", "read-only"});
  EXPECT_EQ(read(borrowed).cast<double>(), 105.0);  // the view is read-only
  EXPECT_EQ(read_ptr(borrowed).cast<int>(), 1);
  // Exporting keeps the flag; an export through ConstTensor always sets it; the unversioned
  // struct cannot say read-only, so a read-only tensor is refused there.
  for (DLManagedTensorVersioned* out : {ro.ToDLPackVersioned(), as_const.ToDLPackVersioned()}) {
    EXPECT_EQ(out->flags & DLPACK_FLAG_BITMASK_READ_ONLY, DLPACK_FLAG_BITMASK_READ_ONLY);
    out->deleter(out);
  }
  DLManagedTensorVersioned* out = rw.ToDLPackVersioned();
  EXPECT_EQ(out->flags, 0u);
  out->deleter(out);
  ExpectError([&] { ro.ToDLPack(); }, "ValueError", {"read-only"});
  // A container of tensors for a writing parameter refuses a read-only element.
  Function write_all = Function::FromTyped([](Array<Tensor> ts) { return ts.size(); });
  Function read_all = Function::FromTyped([](Array<ConstTensor> ts) { return ts.size(); });
  EXPECT_THROW(write_all(Array<Any>{rw, ro}), Error);
  EXPECT_EQ(read_all(Array<Any>{rw, ro}).cast<int64_t>(), 2);
  ro = Tensor();
  EXPECT_EQ(p.deleted, 1);
}

TEST(Tensor, Repr) {
  Tensor t = Tensor::Empty({2, 4}, DataType::Int(64));
  for (int i = 0; i < 8; ++i) static_cast<int64_t*>(t.data_ptr())[i] = i;
  EXPECT_EQ(details::AnyRepr(Any(t).raw()),
            "ferry.Tensor(int64, shape=(2, 4), cpu:0, [0, 1, 2, 3, 4, 5, ...])");
  Tensor b = Tensor::Empty({1}, DataType(DataType::kDLBool, 8, 1));
  *static_cast<uint8_t*>(b.data_ptr()) = 1;
  EXPECT_EQ(details::AnyRepr(Any(b).raw()), "ferry.Tensor(bool8, shape=(1,), cpu:0, [True])");
  // Floats print as Python prints them: 2.0, not 2 (float32 by its own shortest text).
  Tensor f = Tensor::Empty({3}, DataType::Float(64));
  for (int i = 0; i < 3; ++i) static_cast<double*>(f.data_ptr())[i] = i;
  EXPECT_EQ(details::AnyRepr(Any(f).raw()),
            "ferry.Tensor(float64, shape=(3,), cpu:0, [0.0, 1.0, 2.0])");
  Tensor g = Tensor::Empty({2}, DataType::Float(32));
  static_cast<float*>(g.data_ptr())[0] = 0.1f;
  static_cast<float*>(g.data_ptr())[1] = 2.5f;
  EXPECT_EQ(details::AnyRepr(Any(g).raw()), "ferry.Tensor(float32, shape=(2,), cpu:0, [0.1, 2.5])");
}

Tensor Iota(std::vector<int64_t> shape, int start = 0) {
  Tensor t = Tensor::Empty(std::move(shape), DataType::Float(32));
  for (int64_t i = 0; i < t.numel(); ++i) static_cast<float*>(t.data_ptr())[i] = start + i;
  return t;
}

TEST(Tensor, StructuralEqualityComparesContents) {
  Tensor a = Iota({2, 3});
  Tensor b = Iota({2, 3});
  EXPECT_TRUE(StructuralEqual()(a, b));
  EXPECT_EQ(StructuralHash()(a), StructuralHash()(b));
  EXPECT_FALSE(StructuralEqual()(a, Iota({2, 3}, 1)));
  EXPECT_FALSE(StructuralEqual()(a, Iota({3, 2})));  // same bytes, other shape
  Tensor c = Tensor::Empty({2, 3}, DataType::Int(32));
  std::memcpy(c.data_ptr(), a.data_ptr(), 24);
  EXPECT_FALSE(StructuralEqual()(a, c));  // same bytes, other dtype
  // A strided view equals the compact tensor holding its elements in row-major order.
  Producer p{{0, 3, 1, 4, 2, 5}, {2, 3}, {1, 2}, 0};
  Tensor strided = Tensor::FromDLPack(MakeManaged(&p, /*with_strides=*/true));
  EXPECT_FALSE(strided.IsContiguous());
  EXPECT_TRUE(StructuralEqual()(strided, a));
  EXPECT_EQ(StructuralHash()(strided), StructuralHash()(a));
  // Bitwise: -0.0 and 0.0 differ, a NaN equals the same NaN.
  Tensor z1 = Tensor::Empty({1}, DataType::Float(32));
  Tensor z2 = Tensor::Empty({1}, DataType::Float(32));
  *static_cast<float*>(z1.data_ptr()) = 0.0f;
  *static_cast<float*>(z2.data_ptr()) = -0.0f;
  EXPECT_FALSE(StructuralEqual()(z1, z2));
  uint32_t nan_bits = 0x7fc00001u;
  std::memcpy(z1.data_ptr(), &nan_bits, 4);
  std::memcpy(z2.data_ptr(), &nan_bits, 4);
  EXPECT_TRUE(StructuralEqual()(z1, z2));  // the same NaN
  EXPECT_EQ(StructuralHash()(z1), StructuralHash()(z2));
  // Inside containers.
  EXPECT_TRUE(StructuralEqual()(Array<Any>{a, 1}, Array<Any>{b, 1}));
}

TEST(Tensor, JSONCarriesBytesAndSharing) {
  Tensor a = Iota({2, 3});
  Tensor scalar = Tensor::Empty({}, DataType::Int(64));
  *static_cast<int64_t*>(scalar.data_ptr()) = -5;
  Tensor empty = Tensor::Empty({0, 4}, DataType::Float(64));
  Array<Any> graph{a, a, scalar, empty};
  std::string text = SaveJSON(graph);
  EXPECT_NE(text.find("\"type\": \"ferry.Tensor\""), std::string::npos) << text;
  Array<Any> back = LoadJSON(text).cast<Array<Any>>();
  Tensor a2 = back[0].cast<Tensor>();
  EXPECT_TRUE(a2.same_as(back[1].cast<Tensor>()));  // sharing kept
  EXPECT_FALSE(a2.same_as(a));
  EXPECT_TRUE(StructuralEqual()(a2, a));
  EXPECT_EQ(a2.shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(*static_cast<int64_t*>(back[2].cast<Tensor>().data_ptr()), -5);
  EXPECT_EQ(back[3].cast<Tensor>().shape(), (std::vector<int64_t>{0, 4}));
  EXPECT_TRUE(StructuralEqual()(graph, back));
  // Every length of the padding round-trips.
  for (int n = 0; n < 7; ++n) {
    Tensor u = Tensor::Empty({n}, DataType::UInt(8));
    auto* bytes = static_cast<uint8_t*>(u.data_ptr());
    for (int i = 0; i < n; ++i) bytes[i] = static_cast<uint8_t>(250 + i);
    EXPECT_TRUE(StructuralEqual()(LoadJSON(SaveJSON(u)), u)) << n;
  }
  // A strided view saves its elements in row-major order.
  Producer p{{0, 3, 1, 4, 2, 5}, {2, 3}, {1, 2}, 0};
  Tensor strided = Tensor::FromDLPack(MakeManaged(&p, /*with_strides=*/true));
  EXPECT_TRUE(StructuralEqual()(LoadJSON(SaveJSON(strided)), a));
}

TEST(Tensor, JSONRefusesDeviceTensorsAndBadData) {
  CountingAllocator counts;
  TensorAllocator alloc;
  alloc.ctx = &counts;
  alloc.alloc = [](void*, DLDevice, size_t n, size_t) -> void* { return std::malloc(n + 1); };
  alloc.free = [](void*, DLDevice, void* p) { std::free(p); };
  SetTensorAllocator(kDLCUDA, alloc);
  Tensor gpu = Tensor::Empty({2}, DataType::Float(32), DLDevice{kDLCUDA, 0});
  ExpectError([&] { SaveJSON(gpu); }, "ValueError", {"cuda:0", "CPU"});
  SetTensorAllocator(kDLCUDA, TensorAllocator{});
  std::string good = SaveJSON(Iota({2}));
  auto replace = [&](const std::string& from, const std::string& to) {
    std::string text = good;
    size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << good;
    return text.replace(at, from.size(), to);
  };
  ExpectError([&] { LoadJSON(replace("[2]", "[3]")); }, "ValueError", {"cannot hold"});
  ExpectError([&] { LoadJSON(replace("[2]", "[-2]")); }, "ValueError", {"non-negative"});
  ExpectError([&] { LoadJSON(replace("\"float32\"", "\"nope\"")); }, "ValueError", {"nope"});
  ExpectError([&] { LoadJSON(replace("AAAAAAAAgD8=", "AAAAAA*AgD8=")); }, "ValueError",
              {"invalid base64"});
}

TEST(Tensor, SizesFromUntrustedInputAreChecked) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  // A zero-sized dimension does not excuse the others: their compact strides would overflow.
  ExpectError([] { Tensor::Empty({0, kMax, kMax}, DataType::Int(32)); }, "ValueError", {"too big"});
  ExpectError([] { Tensor::Empty({kMax, 2, 0}, DataType::Int(32)); }, "ValueError", {"too big"});
  ExpectError([] { Tensor::Empty({int64_t{1} << 61}, DataType::Float(64)); }, "ValueError",
              {"overflow int64 bytes"});
  // The same shape from JSON.
  const std::string json =
      R"({"ferry_json": 1, "root": {"ref": 0}, "nodes": [{"type": "ferry.Tensor", "tensor": )"
      R"({"dtype": "int32", "shape": [0, 9223372036854775807, 9223372036854775807], "data": ""}}]})";
  ExpectError([&] { LoadJSON(json); }, "ValueError", {"too big"});
  // From DLPack: without strides (computing them would overflow), and with strides whose reach
  // in bytes passes int64. Each refusal leaves the struct with the caller.
  auto refused = [](std::vector<int64_t> shape, std::vector<int64_t> strides, uint64_t offset) {
    Producer p{{1, 2}, std::move(shape), std::move(strides), 0};
    DLManagedTensor* m = MakeManaged(&p, /*with_strides=*/!p.strides.empty());
    m->dl_tensor.byte_offset = offset;
    std::string message;
    try {
      Tensor::FromDLPack(m);
    } catch (const Error& e) {
      message = e.kind() + ": " + std::string(e.message().view());
    }
    EXPECT_EQ(p.deleted, message.empty() ? 1 : 0) << "taken only when accepted";
    if (!message.empty()) m->deleter(m);
    EXPECT_EQ(p.deleted, 1);
    return message;
  };
  EXPECT_NE(refused({0, kMax, kMax}, {}, 0).find("ValueError: Tensor::FromDLPack: the shape"),
            std::string::npos);
  const std::string reach = "ValueError: Tensor::FromDLPack: the strides and byte offset reach";
  EXPECT_EQ(refused({2, 3}, {int64_t{1} << 62, 1}, 0).rfind(reach, 0), 0u);
  EXPECT_EQ(refused({2, 3}, {-(int64_t{1} << 62), 1}, 0).rfind(reach, 0), 0u);
  EXPECT_EQ(refused({2, 3}, {3, 1}, uint64_t{1} << 63).rfind(reach, 0), 0u);
  EXPECT_EQ(refused({2, 3}, {3, 1}, 0), "");  // the same view within range is taken
}

TEST(Tensor, EmptyTensorsAreContiguousWhateverTheirStrides) {
  // NumPy's zeros((0, 3))[:, ::2]: shape (0, 2), strides (3, 2).
  Producer p{{1}, {0, 2}, {3, 2}, 0};
  {
    Tensor t = Tensor::FromDLPack(MakeManaged(&p, /*with_strides=*/true));
    EXPECT_EQ(t.numel(), 0);
    EXPECT_EQ(t.nbytes(), 0);
    EXPECT_TRUE(t.IsContiguous());
    EXPECT_TRUE(StructuralEqual()(t, Tensor::Empty({0, 2}, DataType::Float(32))));
  }
  // Large dimensions before the zero, odd strides: still no element, still contiguous.
  Producer q{{1}, {int64_t{1} << 40, int64_t{1} << 20, 0}, {0, 7, 0}, 0};
  {
    Tensor t = Tensor::FromDLPack(MakeManaged(&q, /*with_strides=*/true));
    EXPECT_EQ(t.numel(), 0);
    EXPECT_TRUE(t.IsContiguous());
  }
  EXPECT_EQ(p.deleted + q.deleted, 2);
}

TEST(DataType, DLPackCodes) {
  EXPECT_EQ(DataType("complex128"), DataType(DataType::kComplex, 128, 1));
  EXPECT_EQ(DataType("complex"), DataType(DataType::kComplex, 64, 1));
  EXPECT_EQ(DataType("bool8"), DataType(DataType::kDLBool, 8, 1));
  EXPECT_EQ(DataType(DataType::kDLBool, 8, 4).ToString(), "bool8x4");
  EXPECT_EQ(DataType("bool"), DataType::Bool());  // TVM's 1-bit bool is unchanged
  EXPECT_TRUE(DataType("complex64").is_complex());
}

}  // namespace
