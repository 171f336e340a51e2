// UnloadLibrary: registrations leave at once, objects and Functions made by the library keep it
// mapped until the last dies, then it is dlclose-d (checked in /proc/self/maps), and the same
// file name may be loaded again. Each test loads its own copy of unload_module, so the tests
// are independent.
#include <ferry/ferry.h>
#include <gtest/gtest.h>
#include <unistd.h>  // getpid

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

namespace {

using ferry::Error;
using ferry::Function;
using ferry::ObjectRef;

const std::string kModuleDir = FERRY_TEST_MODULE_DIR;

/// A fresh copy of the unload module `version` under a name of this test's own.
std::string CopyModule(const std::string& name, int version) {
  std::string path =
      ::testing::TempDir() + "/ferry_unload_" + std::to_string(::getpid()) + "_" + name + ".so";
  // Written aside and renamed over, as a build does: a mapped library's file is never changed.
  std::filesystem::copy_file(kModuleDir + "/unload_module_v" + std::to_string(version) + ".so",
                             path + ".new", std::filesystem::copy_options::overwrite_existing);
  std::filesystem::rename(path + ".new", path);
  return std::filesystem::canonical(path).string();
}

/// Whether the code of `path` is mapped (an executable mapping: the backtraces of errors may
/// keep a read-only map of the file itself).
bool Mapped(const std::string& path) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    size_t perms = line.find(' ');
    if (line.find(path) != std::string::npos && perms != std::string::npos &&
        line.compare(perms + 3, 1, "x") == 0) {
      return true;
    }
  }
  return false;
}

/// Waits (up to a minute: the machine may be loaded) for libferry's closing thread.
bool UnmappedSoon(const std::string& path) {
  for (int k = 0; k < 6000 && Mapped(path); ++k) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return !Mapped(path);
}

Error CaptureError(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "no error";
  return Error("RuntimeError", "none");
}

bool Contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

TEST(UnloadLibrary, ObjectsKeepItMappedUntilTheLastDiesThenItIsClosed) {
  const std::string path = CopyModule("kept", 1);
  ferry::LoadLibrary(path);
  ObjectRef box = Function::GetGlobalRequired("testing.unload.make_box")(7).cast<ObjectRef>();
  Function add3 = Function::GetGlobalRequired("testing.unload.adder")(3).cast<Function>();
  Function version = Function::GetGlobalRequired("testing.unload.version");
  ferry::UnloadLibrary(path);
  // The registrations are gone at once.
  EXPECT_FALSE(Function::GetGlobal("testing.unload.make_box").has_value());
  Error e = CaptureError([] { Function::GetGlobalRequired("testing.unload.make_box"); });
  EXPECT_EQ(e.kind(), "KeyError");
  EXPECT_TRUE(Contains(e.message(), "'testing.unload.make_box' is not registered")) << e.what();
  Error node = CaptureError([] { ferry::MakeNode("testing.unload.Box", {}); });
  EXPECT_TRUE(Contains(node.message(), "testing.unload.Box")) << node.what();
  // What was taken before stays valid, and keeps the library mapped.
  EXPECT_EQ(add3(4).cast<int64_t>(), 7);
  EXPECT_EQ(version().cast<int64_t>(), 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // past the closer's delay
  EXPECT_TRUE(Mapped(path));
  box = ObjectRef();
  add3 = Function();
  EXPECT_TRUE(Mapped(path)) << "the registered function is still held";
  version = Function();
  EXPECT_TRUE(UnmappedSoon(path)) << "never closed after its last object died";
  Error again = CaptureError([&] { ferry::UnloadLibrary(path); });
  EXPECT_TRUE(Contains(again.message(), path)) << again.what();
}

// Freeing a long chain defers most of the frees (ObjectFreeGuarded's queue) past the deleter
// that started them: each object's count on the library is dropped only when it is really
// freed, so the library is not closed under the queue's feet.
/// The body of the child process of the next test: 0, or the number of the check that failed.
int FormatAnErrorOfAClosedLibrary(const std::string& path) {
  ferry::LoadLibrary(path);
  Error e = CaptureError(
      [] { Function::GetGlobalRequired("testing.unload.throw")(static_cast<int64_t>(7)); });
  if (e.message() != "thrown by unload_module 7") return 1;
  ferry::UnloadLibrary(path);
  if (!UnmappedSoon(path)) return 2;  // the error alone must not keep the library mapped
  // Asked for only now: the frames are symbolized after their library is gone.
  const std::string text = e.backtrace();
  // The throw site's file:line was copied when thrown; it reads back after the close.
  if (!Contains(text, "unload_module.cc:")) return 3;
  const FerryErrorFrame* frames = nullptr;
  int32_t num = 0;
  if (FerryErrorGetFrames(ferry::details::ObjectUnsafe::GetHeader(e.get()), &frames, &num) != 0) {
    return 4;
  }
  if (num == 0 || frames[0].address == 0) return 5;
  if (std::string(e.what()) != "ValueError: thrown by unload_module 7") return 6;
  return 0;
}

// A kept error whose library was closed before its backtrace was asked for: before the throw
// site was copied, formatting read the closed library's string (a crash). In a child process
// (it crashed). Frames of the closed library that were never symbolized show as addresses.
TEST(UnloadLibrary, AnErrorItThrewIsFormattedAfterItIsClosed) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const std::string path = CopyModule("error", 1);
  EXPECT_EXIT(std::exit(FormatAnErrorOfAClosedLibrary(path)), ::testing::ExitedWithCode(0), "");
}

TEST(UnloadLibrary, ALongChainFreedAfterTheUnloadDoesNotOutrunTheClose) {
  const std::string path = CopyModule("chain", 1);
  ferry::LoadLibrary(path);
  ObjectRef chain =
      Function::GetGlobalRequired("testing.unload.make_chain")(1000000).cast<ObjectRef>();
  ferry::UnloadLibrary(path);
  chain = ObjectRef();
  EXPECT_TRUE(UnmappedSoon(path));
}

TEST(UnloadLibrary, AnUnknownPathIsAClearError) {
  Error e = CaptureError([] { ferry::UnloadLibrary("/no/such/libnothing.so"); });
  EXPECT_EQ(e.kind(), "RuntimeError");
  EXPECT_TRUE(Contains(e.message(), "/no/such/libnothing.so")) << e.what();
  EXPECT_TRUE(Contains(e.message(), "no library of that path was loaded")) << e.what();
  EXPECT_EQ(FerryLibraryUnload("/no/such/libnothing.so"), -1);
  EXPECT_EQ(FerryLibraryUnload(nullptr), -1);
}

TEST(UnloadLibrary, ARebuiltLibraryOfTheSameNameLoadsAfterTheOldIsClosed) {
  const std::string path = CopyModule("reload", 1);
  ferry::LoadLibrary(path);
  ferry::LoadLibrary(path);  // twice: still one unload closes it
  Function version = Function::GetGlobalRequired("testing.unload.version");
  EXPECT_EQ(version().cast<int64_t>(), 1);
  ferry::UnloadLibrary(path);
  // While a Function of the old build lives, the file name cannot load the new build.
  CopyModule("reload", 2);
  Error busy = CaptureError([&] { ferry::LoadLibrary(path); });
  EXPECT_TRUE(Contains(busy.message(), "still alive")) << busy.what();
  version = Function();
  ASSERT_TRUE(UnmappedSoon(path));
  ferry::LoadLibrary(path);
  EXPECT_EQ(Function::GetGlobalRequired("testing.unload.version")().cast<int64_t>(), 2);
  ferry::UnloadLibrary(path);
  EXPECT_TRUE(UnmappedSoon(path));
}

// Promised: a thread that holds a Function of the library (or got one from the registry before
// the unload) may go on calling it; the library is closed after that thread drops it.
TEST(UnloadLibrary, UnloadWhileAnotherThreadCallsIntoItIsSafe) {
  const std::string path = CopyModule("threads", 1);
  ferry::LoadLibrary(path);
  std::atomic<bool> stop{false};
  std::atomic<int64_t> calls{0};
  std::thread caller([&] {
    while (!stop.load()) {
      // Looked up each time: either found (and then held for the call) or cleanly missing.
      if (auto f = Function::GetGlobal("testing.unload.adder")) {
        Function add = (*f)(1).cast<Function>();
        if (add(1).cast<int64_t>() == 2) calls.fetch_add(1);
      } else {
        break;
      }
    }
  });
  while (calls.load() < 100) std::this_thread::yield();
  ferry::UnloadLibrary(path);
  caller.join();
  EXPECT_GE(calls.load(), 100);
  EXPECT_TRUE(UnmappedSoon(path));
}

}  // namespace
