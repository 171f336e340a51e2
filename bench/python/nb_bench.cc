// The nanobind side of the Python call-overhead benchmark (bench/python/bench_ffi.py): the same
// operations as Ferry's test-support library and tvm-ffi's testing functions, bound the way a
// nanobind user would bind them. Built by bench/python/CMakeLists.txt (scripts/bench_python.sh).
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace nb = nanobind;

namespace {

struct IntBox {
  int64_t value = 0;
};

}  // namespace

NB_MODULE(nb_bench, m) {
  m.def("nop", [] {});
  // A C++ error reaching Python (bench_errors.py): nanobind turns std::invalid_argument into
  // ValueError.
  m.def("raise_value_error",
        [](const std::string& message) { throw std::invalid_argument(message); });
  // The same nop with the GIL released during the call (nanobind keeps it by default).
  m.def(
      "nop_release_gil", [] {}, nb::call_guard<nb::gil_scoped_release>());
  m.def("add", [](int64_t a, int64_t b) { return a + b; });
  // Pass any Python object through (what Ferry's and tvm-ffi's untyped echo do with an object).
  m.def("echo", [](nb::object x) { return x; });
  // Pass a bound C++ object through, typed: nanobind finds the existing Python instance.
  m.def(
      "echo_box", [](IntBox* x) { return x; }, nb::rv_policy::reference);
  m.def("echo_str", [](const std::string& s) { return s; });
  // The first half of echo_str (bench/python/compare_builds.py): taking a str, returning an int.
  m.def("take_str", [](const std::string& s) { return s.size(); });
  m.def("call_n", [](nb::callable f, int64_t n) {
    int64_t sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += nb::cast<int64_t>(f(i));
    return sum;
  });
  // The same operations with the GIL released while the C++ body runs, as Ferry and tvm-ffi do by
  // default: the "nanobind, GIL released" variant. The bodies touch no Python object without the
  // GIL (f(obj) passes the bound C++ object, typed); the callback takes the GIL back per call.
  auto release = nb::call_guard<nb::gil_scoped_release>();
  m.def(
      "add_release_gil", [](int64_t a, int64_t b) { return a + b; }, release);
  m.def(
      "echo_box_release_gil", [](IntBox* x) { return x; }, nb::rv_policy::reference, release);
  m.def(
      "echo_str_release_gil", [](const std::string& s) { return s; }, release);
  m.def(
      "take_str_release_gil", [](const std::string& s) { return s.size(); }, release);
  m.def("call_n_release_gil", [](nb::callable f, int64_t n) {
    nb::gil_scoped_release unlocked;
    int64_t sum = 0;
    for (int64_t i = 0; i < n; ++i) {
      nb::gil_scoped_acquire locked;
      sum += nb::cast<int64_t>(f(i));
    }
    return sum;
  });
  nb::class_<IntBox>(m, "IntBox")
      .def(nb::init<>())
      .def("__init__", [](IntBox* self, int64_t v) { new (self) IntBox{v}; })
      .def_ro("value", &IntBox::value);
}
