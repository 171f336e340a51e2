/// \file library.cc
/// Loading shared libraries that register globals. Libraries are never unloaded: objects and
/// functions they made hold pointers into their code (deleters, call entries).
#include <dlfcn.h>     // dlopen
#include <sys/stat.h>  // stat, to tell a missing file from a broken one

#include <string>
#include <vector>

#include "c_api_internal.h"
#include "ferry/function.h"
#include "library_internal.h"

namespace ferry {
namespace details {
namespace {
/// The errors of the registrations run by the LoadLibrary on this thread, if one is running.
thread_local std::vector<Error>* load_errors = nullptr;
}  // namespace

bool RecordLoadError(const Error& error) {
  if (load_errors == nullptr) return false;
  load_errors->push_back(error);
  return true;
}

}  // namespace details

void LoadLibrary(const std::string& path) {
  struct stat info;
  if (::stat(path.c_str(), &info) != 0) {
    FERRY_THROW(RuntimeError) << "cannot load library '" << path << "': no such file";
  }
  // dlopen searches the system's library path for a name without a slash; the file stat() just
  // found is the one meant.
  const std::string open_path = path.find('/') == std::string::npos ? "./" + path : path;
  std::vector<Error> errors;
  std::vector<Error>* outer = details::load_errors;
  details::load_errors = &errors;
  void* handle = ::dlopen(open_path.c_str(), RTLD_NOW | RTLD_LOCAL);
  details::load_errors = outer;
  if (handle == nullptr) {
    const char* reason = ::dlerror();
    FERRY_THROW(RuntimeError) << "cannot load library '" << path
                              << "': " << (reason != nullptr ? reason : "unknown dlopen error");
  }
  if (!errors.empty()) {
    const Error& first = errors.front();
    FERRY_THROW(RuntimeError) << "library '" << path << "' loaded, but " << errors.size()
                              << " of its registrations failed; the first: " << first.what();
  }
}

}  // namespace ferry

int FerryLibraryLoad(const char* path) {
  FERRY_C_API_BEGIN();
  FERRY_C_API_CHECK_NOT_NULL(path);
  ferry::LoadLibrary(path);
  FERRY_C_API_END();
}
