// The `halfway` Python module (python/README.md): kernels from .hk files, run on a device with
// NumPy arrays in and out, compared with the reference interpreter, and the precision opt-ins.
//
// Everything the user hands in is checked here, before a launch, so that a mistake is a
// halfway.Error naming the kernel and parameter rather than a crash: arrays must have exactly the
// parameter's element type (no silent rounding: that is the whole point of halfway), scalars must
// be exactly a value of their type, grids must fit. Launches run with the GIL released, on a
// thread of their own, so that Ctrl-C cancels them.
#include "halfway/diff/compare.hpp"
#include "halfway/diff/diff.hpp"
#include "halfway/diff/inputs.hpp"
#include "halfway/diff/report.hpp"
#include "halfway/ir/bits.hpp"
#include "halfway/policy/policy.hpp"
#include "halfway/runtime/device.hpp"
#include "halfway/support/error.hpp"
#include "halfway/text/kernel_file.hpp"
#include "halfway/text/parse.hpp"
#include "halfway/version.hpp"

#include <algorithm>
#include <atomic>
#include <cfloat>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <thread>
#include <unistd.h>

namespace py = pybind11;
using namespace halfway;

namespace {

// ---- text and errors --------------------------------------------------------------------------

// A Python str from bytes that should be UTF-8: anything that is not becomes U+FFFD rather than
// an exception (error messages must always reach the user).
py::str py_text(const std::string& s) {
  PyObject* o = PyUnicode_DecodeUTF8(s.data(), static_cast<Py_ssize_t>(s.size()), "replace");
  if (!o)
    throw py::error_already_set();
  return py::reinterpret_steal<py::str>(o);
}

PyObject* g_error_class = nullptr; // halfway.Error, owned by the module

// Raises halfway.Error for `e`: str() is the formatted message the CLI prints; the attributes
// give its parts (kind, message, kernel, buffer, file, line, column, index) for programs.
void raise_error(const Error& e) {
  auto cls = py::reinterpret_borrow<py::object>(g_error_class);
  py::object exc = cls(py_text(e.what()));
  const ErrorContext& c = e.context();
  auto opt_text = [](const std::string& s) -> py::object {
    return s.empty() ? py::object(py::none()) : py::object(py_text(s));
  };
  exc.attr("kind") = error_kind_name(e.kind());
  exc.attr("message") = py_text(e.message());
  exc.attr("kernel") = opt_text(c.kernel);
  exc.attr("buffer") = opt_text(c.buffer);
  exc.attr("file") = opt_text(c.file);
  exc.attr("line") = c.line ? py::object(py::int_(c.line)) : py::object(py::none());
  exc.attr("column") = c.column ? py::object(py::int_(c.column)) : py::object(py::none());
  exc.attr("index") = c.index ? py::object(py::int_(*c.index)) : py::object(py::none());
  PyErr_SetObject(g_error_class, exc.ptr());
}

[[noreturn]] void usage(const ir::Kernel& k, const std::string& message,
                        const std::string& buffer = {}) {
  ErrorContext c;
  c.kernel = k.name;
  c.buffer = buffer;
  throw Error(ErrorKind::Usage, message, c);
}

std::string type_name(py::handle o) {
  return py::str(py::type::handle_of(o).attr("__name__"));
}

// ---- element types and NumPy dtypes -----------------------------------------------------------

// Modules the conversions use, imported once and never released: a static py::object would be
// destroyed after the interpreter has finalized, and crash the process on exit.
py::handle ml_dtypes() { // None when ml_dtypes is not installed
  static py::handle module = [] {
    try {
      return py::module_::import("ml_dtypes").release();
    } catch (const py::error_already_set&) {
      return py::none().release();
    }
  }();
  return module;
}

py::handle numpy() {
  static py::handle np = py::module_::import("numpy").release();
  return np;
}

// NumPy's name for the dtype of a buffer element; for bf16 and fp8 the bit patterns' (the
// dtype without ml_dtypes).
const char* raw_dtype_name(ir::ScalarType t) {
  switch (t) {
  case ir::ScalarType::Bool:
    return "bool";
  case ir::ScalarType::I8:
    return "int8";
  case ir::ScalarType::U8:
  case ir::ScalarType::E4M3:
  case ir::ScalarType::E5M2:
    return "uint8";
  case ir::ScalarType::I16:
    return "int16";
  case ir::ScalarType::U16:
  case ir::ScalarType::BF16:
    return "uint16";
  case ir::ScalarType::F16:
    return "float16";
  case ir::ScalarType::I32:
    return "int32";
  case ir::ScalarType::U32:
    return "uint32";
  case ir::ScalarType::I64:
    return "int64";
  case ir::ScalarType::U64:
    return "uint64";
  case ir::ScalarType::F32:
    return "float32";
  case ir::ScalarType::F64:
    return "float64";
  }
  throw Error(ErrorKind::Internal, "no NumPy dtype for this type");
}

py::object dtype(const char* name) {
  return numpy().attr("dtype")(name);
}

// The unsigned dtype as wide as NumPy's element: arrays are copied through it with the buffer
// protocol, which NumPy refuses for ml_dtypes' types. (pybind11's numpy.h is not used: the
// pybind11 of Debian 12 reads NumPy 2's dtype structure wrongly.)
py::object bits_dtype(ir::ScalarType t) {
  switch (t == ir::ScalarType::Bool ? 1 : ir::bytes(t)) {
  case 1:
    return dtype("uint8");
  case 2:
    return dtype("uint16");
  case 4:
    return dtype("uint32");
  default:
    return dtype("uint64");
  }
}

// ml_dtypes' name for the types NumPy lacks; null for the others.
const char* ml_dtypes_name(ir::ScalarType t) {
  switch (t) {
  case ir::ScalarType::BF16:
    return "bfloat16";
  case ir::ScalarType::E4M3:
    return "float8_e4m3fn";
  case ir::ScalarType::E5M2:
    return "float8_e5m2";
  default:
    return nullptr;
  }
}

// What results come back as: ml_dtypes' type where there is one and ml_dtypes is installed.
py::object result_dtype(ir::ScalarType t) {
  const char* ml = ml_dtypes_name(t);
  py::handle mod = ml_dtypes();
  if (ml && !mod.is_none())
    return numpy().attr("dtype")(mod.attr(ml));
  return dtype(raw_dtype_name(t));
}

// The dtypes an input array of type `t` may have, for messages.
std::string accepted_dtypes(ir::ScalarType t) {
  if (const char* ml = ml_dtypes_name(t))
    return std::string("ml_dtypes.") + ml + " (or its bit patterns as " + raw_dtype_name(t) + ")";
  return raw_dtype_name(t);
}

bool dtype_accepted(py::handle d, ir::ScalarType t) {
  if (d.equal(dtype(raw_dtype_name(t))))
    return true;
  const char* ml = ml_dtypes_name(t);
  py::handle mod = ml_dtypes();
  return ml && !mod.is_none() && d.equal(numpy().attr("dtype")(mod.attr(ml)));
}

bool is_ndarray(py::handle o) {
  return py::isinstance(o, numpy().attr("ndarray"));
}

// ---- arguments ---------------------------------------------------------------------------------

// A non-negative integer from a Python int or NumPy integer; nullopt for anything else (floats
// and bools included: 2.0 lanes is a mistake, not a count).
std::optional<uint64_t> as_count(py::handle o) {
  if (PyBool_Check(o.ptr()) || !PyIndex_Check(o.ptr()))
    return std::nullopt;
  py::object i = py::reinterpret_steal<py::object>(PyNumber_Index(o.ptr()));
  if (!i)
    throw py::error_already_set();
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
  if (overflow > 0) {
    unsigned long long u = PyLong_AsUnsignedLongLong(i.ptr());
    if (PyErr_Occurred()) {
      PyErr_Clear();
      return UINT64_MAX; // past 2^64: every caller refuses it as too large
    }
    return u;
  }
  if (overflow < 0 || v < 0)
    return std::nullopt;
  return static_cast<uint64_t>(v);
}

// grid= or groups=: one size or a tuple or list of one to three, each at least 1.
std::array<uint64_t, 3> parse_dims(const ir::Kernel& k, py::handle value, const char* what) {
  std::array<uint64_t, 3> out{1, 1, 1};
  std::vector<py::handle> parts;
  if (py::isinstance<py::tuple>(value) || py::isinstance<py::list>(value)) {
    for (py::handle h : value)
      parts.push_back(h);
  } else {
    parts.push_back(value);
  }
  const std::string shown = std::string(what) + "=" + std::string(py::repr(value));
  if (parts.empty() || parts.size() > 3)
    usage(k, shown + ": give one size or a tuple of two or three (x, y, z)");
  for (size_t d = 0; d < parts.size(); ++d) {
    auto v = as_count(parts[d]);
    if (!v)
      usage(k, shown + ": every size is a non-negative integer (the size along " +
                   std::string(1, "xyz"[d]) + " is a " + type_name(parts[d]) + ")");
    if (*v == 0)
      usage(k, shown + ": every size is at least 1 (the size along " + std::string(1, "xyz"[d]) +
                   " is 0)");
    out[d] = *v;
  }
  return out;
}

struct Launch {
  rt::Grid grid;
  uint64_t lanes = 0; // in the whole grid: what a buffer left out gets
};

Launch parse_grid(const ir::Kernel& k, py::handle grid, py::handle groups) {
  if (!grid.is_none() && !groups.is_none())
    usage(k, "give grid= (lanes) or groups= (workgroups), not both");
  if (grid.is_none() && groups.is_none())
    usage(k, "no grid: give grid=LANES or groups=N (an integer, or a tuple for 2-D and 3-D)");
  Launch l;
  std::array<uint64_t, 3> lanes3{};
  if (!groups.is_none()) {
    auto g = parse_dims(k, groups, "groups");
    for (int d = 0; d < 3; ++d) {
      if (g[d] > 0xffffffffull)
        usage(k, "groups=" + std::string(py::repr(groups)) + ": more than the 4294967295 " +
                     "workgroups a grid can have along " + std::string(1, "xyz"[d]));
      l.grid.groups[d] = static_cast<uint32_t>(g[d]);
      lanes3[d] = g[d] * k.workgroup[d]; // both below 2^32
    }
  } else {
    lanes3 = parse_dims(k, grid, "grid");
    l.grid = rt::Grid::for_lanes(k, lanes3); // refuses what needs 2^32 workgroups or more
  }
  l.lanes = 1;
  for (uint64_t n : lanes3) {
    if (n && l.lanes > UINT64_MAX / n)
      usage(k, "the grid has more than 2^64 lanes in all");
    l.lanes *= n;
  }
  return l;
}

// A scalar argument's bit pattern. Floats follow the rule of the CLI's --arg and of constants in
// .hk files: f32 and narrower are read through f32 (so 0.1 means the f32 nearest 0.1), f64 as it
// is, and the value must then be exactly a value of the parameter's type: 70000 for an f16 or 0.1
// for a bf16 is refused rather than rounded behind the caller's back.
uint64_t scalar_bits(const ir::Kernel& k, const ir::Param& p, py::handle value) {
  const std::string tname(ir::name(p.type));
  auto wrong = [&](const std::string& why) -> uint64_t {
    usage(k, "scalar " + p.name + "=" + std::string(py::repr(value)) + ": " + why + " (" + p.name +
                 " is " + tname + ")");
  };
  if (p.type == ir::ScalarType::Bool) {
    if (PyBool_Check(value.ptr()) || py::isinstance(value, numpy().attr("bool_")))
      return value.cast<bool>() ? 1 : 0;
    return wrong("not a bool");
  }
  if (ir::is_float(p.type)) {
    if (PyBool_Check(value.ptr()) || (!PyFloat_Check(value.ptr()) && !PyIndex_Check(value.ptr()) &&
                                      !PyObject_HasAttrString(value.ptr(), "__float__")))
      return wrong("not a number");
    double v = PyFloat_AsDouble(value.ptr());
    if (v == -1.0 && PyErr_Occurred()) {
      PyErr_Clear();
      return wrong("not a number that fits a double");
    }
    if (p.type == ir::ScalarType::E4M3 && std::isinf(v))
      return wrong("e4m3 has no infinity");
    if (p.type != ir::ScalarType::F64 && std::isfinite(v)) {
      if (std::fabs(v) > FLT_MAX)
        return wrong(p.type == ir::ScalarType::F32 ? "out of range for f32"
                                                   : "out of range for f32, and so for " + tname);
      v = static_cast<float>(v);
    }
    uint64_t bits = 0;
    if (ir::exact_bits(p.type, v, bits))
      return bits;
    return wrong(diff::inexact_reason(p.type, v));
  }
  // Integers: a Python or NumPy integer in the type's range.
  if (PyBool_Check(value.ptr()) || !PyIndex_Check(value.ptr()))
    return wrong("not an integer");
  py::object i = py::reinterpret_steal<py::object>(PyNumber_Index(value.ptr()));
  if (!i)
    throw py::error_already_set();
  const auto& info = ir::info(p.type);
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(i.ptr(), &overflow);
  if (overflow < 0 || (!info.is_signed && v < 0))
    return wrong(info.is_signed ? "out of range" : "negative, and " + tname + " is unsigned");
  if (overflow > 0) {
    unsigned long long u = PyLong_AsUnsignedLongLong(i.ptr());
    if (PyErr_Occurred()) {
      PyErr_Clear();
      return wrong("out of range");
    }
    if (info.is_signed || info.bits < 64)
      return wrong("out of range");
    return u;
  }
  if (info.is_signed) {
    if (info.bits < 64 &&
        (v < -(int64_t{1} << (info.bits - 1)) || v >= (int64_t{1} << (info.bits - 1))))
      return wrong("out of range");
    return ir::truncate_bits(p.type, static_cast<uint64_t>(v));
  }
  if (info.bits < 64 && static_cast<uint64_t>(v) >> info.bits)
    return wrong("out of range");
  return static_cast<uint64_t>(v);
}

uint64_t physical_memory_bytes() {
  long pages = ::sysconf(_SC_PHYS_PAGES), size = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && size > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(size) : 0;
}

// A zeroed buffer of `count` elements of the parameter's type, refused (rather than reserved and
// then touched) when it cannot fit in this machine's memory.
rt::HostBuffer zeroed(const ir::Kernel& k, const ir::Param& p, uint64_t count) {
  const uint64_t memory = physical_memory_bytes();
  if (count > UINT64_MAX / ir::bytes(p.type) || (memory && count * ir::bytes(p.type) > memory))
    usage(k,
          "buffer " + p.name + ": " + std::to_string(count) + " elements of " +
              std::string(ir::name(p.type)) + " do not fit in this machine's memory",
          p.name);
  return rt::HostBuffer(p.type, count);
}

// The array's elements, in C order, as a buffer of the parameter's type.
rt::HostBuffer from_array(const ir::Kernel& k, const ir::Param& p, py::handle a) {
  py::object d = a.attr("dtype");
  if (!dtype_accepted(d, p.type))
    usage(k,
          "buffer " + p.name + " is " + std::string(ir::name(p.type)) + ": give an array of " +
              accepted_dtypes(p.type) + ", not " + std::string(py::str(d)) +
              " (halfway never converts: round explicitly, e.g. with .astype())",
          p.name);
  py::object c = numpy().attr("ascontiguousarray")(a).attr("view")(bits_dtype(p.type));
  py::buffer_info info = py::reinterpret_borrow<py::buffer>(c).request();
  const auto n = static_cast<uint64_t>(info.size);
  rt::HostBuffer b = zeroed(k, p, n);
  if (p.type == ir::ScalarType::Bool) {
    // Bools live in 32-bit slots (as in SPIR-V); NumPy's are bytes.
    const auto* src = static_cast<const uint8_t*>(info.ptr);
    for (uint64_t i = 0; i < n; ++i)
      b.set_bits(i, src[i] != 0);
  } else if (n) {
    std::memcpy(b.data(), info.ptr, b.size_bytes());
  }
  return b;
}

py::object to_array(const rt::HostBuffer& b, const std::vector<py::ssize_t>& shape) {
  py::tuple dims(shape.size());
  for (size_t i = 0; i < shape.size(); ++i)
    dims[i] = py::int_(shape[i]);
  py::object out = numpy().attr("empty")(dims, bits_dtype(b.type()));
  py::buffer_info info = py::reinterpret_borrow<py::buffer>(out).request(true);
  if (static_cast<size_t>(info.size) != b.size())
    throw Error(ErrorKind::Internal, "result of " + std::to_string(b.size()) +
                                         " elements for a shape of " + std::to_string(info.size));
  if (b.type() == ir::ScalarType::Bool) {
    auto* dst = static_cast<uint8_t*>(info.ptr);
    for (size_t i = 0; i < b.size(); ++i)
      dst[i] = b.get_bits(i) != 0;
  } else if (b.size()) {
    std::memcpy(info.ptr, b.data(), b.size_bytes());
  }
  return out.attr("view")(result_dtype(b.type()));
}

const char* access_name(ir::Access a) {
  switch (a) {
  case ir::Access::Read:
    return "read";
  case ir::Access::Write:
    return "write";
  case ir::Access::ReadWrite:
    return "read_write";
  }
  return "?";
}

// Buffers and arguments for one launch, from the keyword arguments of run() or diff().
struct Prepared {
  Launch launch;
  std::vector<rt::HostBuffer> buffers; // one per buffer parameter, in parameter order
  std::vector<rt::Arg> args;
  std::vector<std::vector<py::ssize_t>> shapes; // per buffer: what results come back as
};

// `values`: parameter name -> Python value. Without `generate` every read and read_write buffer
// and every scalar must be given; a write-only buffer may be an array (its shape is kept), an
// element count, or left out (one element per lane of the grid). With `generate` (diff), what is
// left out comes from diff::inputs::make_inputs with that generator and seed.
Prepared prepare(const ir::Kernel& k, py::handle grid, py::handle groups, const py::dict& values,
                 std::optional<std::pair<diff::inputs::Kind, uint64_t>> generate) {
  for (auto item : values) {
    std::string name = py::str(item.first);
    if (k.find_param(name) == ir::kNone) {
      std::string known;
      for (const auto& p : k.params)
        known += (known.empty() ? "" : ", ") + p.name;
      usage(k, "kernel " + k.name + " has no parameter '" + name + "'; it has " + known);
    }
  }
  Prepared out;
  out.launch = parse_grid(k, grid, groups);
  std::map<std::string, uint64_t> scalars;
  for (const auto& p : k.params) {
    if (p.is_buffer())
      continue;
    if (values.contains(p.name))
      scalars[p.name] = scalar_bits(k, p, values[py::str(p.name)]);
    else if (!generate)
      usage(k, "scalar " + p.name + " (" + std::string(ir::name(p.type)) + ") has no value: pass " +
                   p.name + "=VALUE");
  }
  if (generate) {
    auto in =
        diff::inputs::make_inputs(k, out.launch.lanes, generate->first, generate->second, scalars);
    out.buffers = std::move(in.buffers);
    for (size_t i = 0; i < k.params.size(); ++i)
      if (!k.params[i].is_buffer())
        scalars[k.params[i].name] = in.args[i].scalar;
  }
  size_t slot = 0;
  for (const auto& p : k.params) {
    if (!p.is_buffer())
      continue;
    const size_t s = slot++;
    std::vector<py::ssize_t> shape{static_cast<py::ssize_t>(out.launch.lanes)};
    std::optional<rt::HostBuffer> made;
    if (values.contains(p.name)) {
      py::object v = values[py::str(p.name)];
      if (is_ndarray(v)) {
        made = from_array(k, p, v);
        shape.clear();
        for (py::handle n : v.attr("shape"))
          shape.push_back(n.cast<py::ssize_t>());
      } else if (auto n = as_count(v); n && p.access == ir::Access::Write) {
        made = zeroed(k, p, *n);
        shape = {static_cast<py::ssize_t>(*n)};
      } else {
        usage(k,
              "buffer " + p.name + " (" + std::string(ir::name(p.type)) + ", " +
                  access_name(p.access) + ") must be a NumPy array of " + accepted_dtypes(p.type) +
                  (p.access == ir::Access::Write ? " or an element count" : "") + ", not a " +
                  type_name(v),
              p.name);
      }
    } else if (!generate) {
      if (p.access != ir::Access::Write)
        usage(k,
              "buffer " + p.name + " (" + std::string(ir::name(p.type)) + ", " +
                  access_name(p.access) + ") has no value: pass " + p.name + "=<NumPy array of " +
                  accepted_dtypes(p.type) + ">",
              p.name);
      made = zeroed(k, p, out.launch.lanes);
    }
    if (made) {
      if (generate)
        out.buffers[s] = std::move(*made);
      else
        out.buffers.push_back(std::move(*made));
    }
    out.shapes.push_back(std::move(shape));
  }
  slot = 0;
  for (const auto& p : k.params)
    out.args.push_back(p.is_buffer() ? rt::Arg::of(out.buffers[slot++])
                                     : rt::Arg::bits(scalars.at(p.name)));
  rt::check_args(k, out.launch.grid, out.args);
  return out;
}

// ---- devices and launches ----------------------------------------------------------------------

// Devices are made once per name and kept: making one (a Vulkan instance, an LLVM JIT) costs far
// more than a launch, and each keeps its compiled kernels. One launch at a time per device.
struct CachedDevice {
  std::unique_ptr<rt::Device> device;
  std::mutex mutex;
};
std::map<std::string, std::unique_ptr<CachedDevice>>& device_cache() {
  static auto* cache = new std::map<std::string, std::unique_ptr<CachedDevice>>;
  return *cache;
}

CachedDevice& get_device(const std::string& name) {
  auto& cache = device_cache();
  auto it = cache.find(name);
  if (it != cache.end())
    return *it->second;
  auto d = std::make_unique<CachedDevice>();
  d->device = rt::make_device(name);
  return *cache.emplace(name, std::move(d)).first->second;
}

struct RunOptions {
  std::optional<double> timeout; // seconds
  bool check = false;
  bool deterministic = false;
  unsigned threads = 0;
};

rt::LaunchOptions launch_options(const RunOptions& o) {
  rt::LaunchOptions l;
  l.check_bounds = o.check;
  l.deterministic = o.deterministic;
  l.threads = o.threads;
  if (o.timeout) {
    if (!(*o.timeout > 0) || *o.timeout > 1e9)
      throw Error(ErrorKind::Usage, "timeout=" + std::to_string(*o.timeout) +
                                        ": give a number of seconds above 0 (and below 1e9)");
    l.timeout = std::chrono::milliseconds(
        std::max<int64_t>(1, static_cast<int64_t>(std::llround(*o.timeout * 1000))));
  }
  return l;
}

// Runs `work` (which must not touch Python) on a thread of its own with the GIL released, while
// this thread looks for Ctrl-C every 50 ms: a KeyboardInterrupt raises `cancel`, waits for the
// launch to stop and is then raised in Python.
template <class F> void interruptible(std::atomic<bool>& cancel, F work) {
  std::mutex m;
  std::condition_variable cv;
  bool done = false;
  std::exception_ptr failure;
  bool interrupted = false;
  {
    py::gil_scoped_release release;
    std::thread worker([&] {
      try {
        work();
      } catch (...) {
        failure = std::current_exception();
      }
      std::lock_guard lock(m);
      done = true;
      cv.notify_all();
    });
    std::unique_lock lock(m);
    while (!cv.wait_for(lock, std::chrono::milliseconds(50), [&] { return done; })) {
      if (interrupted)
        continue;
      lock.unlock();
      {
        py::gil_scoped_acquire acquire;
        if (PyErr_CheckSignals() != 0) {
          interrupted = true;
          cancel = true;
          // The exception stays set until the launch has stopped, then propagates.
        }
      }
      lock.lock();
    }
    lock.unlock();
    worker.join();
  }
  if (interrupted)
    throw py::error_already_set();
  if (failure)
    std::rethrow_exception(failure);
}

// ---- the Python classes ------------------------------------------------------------------------

struct Kernel {
  ir::VerifiedKernel verified;
  std::string file;

  const ir::Kernel& k() const { return verified.kernel(); }

  py::dict run(const std::string& device, py::object grid, py::object groups, py::object args,
               const RunOptions& o, const py::kwargs& kwargs) const;
};

// run()'s and diff()'s arguments: the keyword arguments, and `args` for names that collide with
// the functions' own parameters (a buffer called grid, say).
py::dict merged_values(const ir::Kernel& k, py::handle args, const py::kwargs& kwargs) {
  py::dict values;
  if (!args.is_none()) {
    if (!py::isinstance<py::dict>(args))
      usage(k, "args= must be a dict of parameter name -> value, not a " + type_name(args));
    for (auto item : py::reinterpret_borrow<py::dict>(args))
      values[item.first] = item.second;
  }
  for (auto item : kwargs) {
    if (values.contains(item.first))
      usage(k, std::string(py::str(item.first)) + " is given twice (in args= and as a keyword)");
    values[item.first] = item.second;
  }
  return values;
}

py::dict Kernel::run(const std::string& device, py::object grid, py::object groups, py::object args,
                     const RunOptions& o, const py::kwargs& kwargs) const {
  Prepared in = prepare(k(), grid, groups, merged_values(k(), args, kwargs), std::nullopt);
  rt::LaunchOptions options = launch_options(o);
  CachedDevice& d = get_device(device);
  std::atomic<bool> cancel{false};
  options.cancel = &cancel;
  interruptible(cancel, [&] {
    std::lock_guard lock(d.mutex);
    d.device->launch(verified, in.launch.grid, in.args, options);
  });
  py::dict out;
  size_t slot = 0;
  for (const auto& p : k().params) {
    if (!p.is_buffer())
      continue;
    const size_t s = slot++;
    if (p.access != ir::Access::Read)
      out[py_text(p.name)] = to_array(in.buffers[s], in.shapes[s]);
  }
  return out;
}

struct DiffOptions {
  std::string inputs = "ties";
  uint64_t seed = 1;
  uint64_t max_shown = 10, max_unchecked = 0, max_undecided = 0;
  bool accept_inconclusive = false, exact_models = false, arrays = false;
};

py::dict diff_kernel(const Kernel& kernel, const std::string& device, py::object grid,
                     py::object groups, py::object args, const DiffOptions& o, const RunOptions& ro,
                     const py::kwargs& kwargs) {
  const ir::Kernel& k = kernel.k();
  auto kind = diff::inputs::parse_kind(o.inputs);
  if (!kind)
    usage(k, "inputs='" + o.inputs + "': not one of random, ties, edges, zeros, iota");
  Prepared in = prepare(k, grid, groups, merged_values(k, args, kwargs), std::pair(*kind, o.seed));
  diff::Options opts;
  opts.max_shown = o.max_shown;
  opts.max_unchecked = o.max_unchecked;
  opts.max_undecided = o.max_undecided;
  opts.accept_inconclusive = o.accept_inconclusive;
  opts.exact_models = o.exact_models;
  opts.launch = launch_options(ro);
  std::vector<diff::BufferResults> results;
  if (o.arrays)
    opts.results = &results;
  CachedDevice& d = get_device(device);
  std::atomic<bool> cancel{false};
  opts.launch.cancel = &cancel;
  std::string json;
  interruptible(cancel, [&] {
    std::lock_guard lock(d.mutex);
    json = diff::to_json(diff::run(kernel.verified, *d.device, in.launch.grid, in.args, opts));
  });
  // The report is the document `halfway diff --json` prints: one definition of its fields
  // (diff/report.hpp), read back with Python's own parser.
  py::dict report = py::module_::import("json").attr("loads")(py_text(json));
  if (o.arrays) {
    py::dict arrays;
    for (const auto& r : results) {
      size_t slot = 0;
      for (uint32_t i = 0; i < r.param; ++i)
        slot += k.params[i].is_buffer();
      rt::HostBuffer verdicts(ir::ScalarType::U8, r.verdicts.size());
      for (size_t e = 0; e < r.verdicts.size(); ++e)
        verdicts.set_bits(e, static_cast<uint64_t>(r.verdicts[e]));
      py::dict one;
      one["reference"] = to_array(r.reference, in.shapes[slot]);
      one["device"] = to_array(r.device, in.shapes[slot]);
      one["verdicts"] = to_array(verdicts, in.shapes[slot]);
      arrays[py_text(r.name)] = one;
    }
    report["arrays"] = arrays;
  }
  return report;
}

struct Kernels {
  std::string file;
  std::vector<Kernel> kernels;

  const Kernel& get(const std::string& name) const {
    for (const auto& k : kernels)
      if (k.verified.name() == name)
        return k;
    std::string known;
    for (const auto& k : kernels)
      known += (known.empty() ? "" : ", ") + k.verified.name();
    ErrorContext c;
    c.file = file;
    c.kernel = name;
    throw Error(ErrorKind::Usage, "unknown kernel " + name + " in " + file + "; it has " + known,
                c);
  }
};

Kernels from_file(const text::KernelFile& f) {
  Kernels out;
  out.file = f.file_name();
  for (auto& v : f.verify_all())
    out.kernels.push_back(Kernel{std::move(v), f.file_name()});
  return out;
}

// The scope of an opt-in: a kernel's name, a Kernel, or ALL_KERNELS. None is refused: an
// accidental None must not widen an opt-in to every kernel of the process.
struct AllKernels {};

policy::Scope to_scope(py::handle scope) {
  if (py::isinstance<AllKernels>(scope))
    return policy::Scope::all_kernels();
  if (py::isinstance<Kernel>(scope))
    return policy::Scope::kernel(scope.cast<const Kernel&>().verified.name());
  if (py::isinstance<py::str>(scope))
    return policy::Scope::kernel(scope.cast<std::string>());
  throw Error(ErrorKind::Usage, "an opt-in's scope is a kernel name, a halfway.Kernel or "
                                "halfway.ALL_KERNELS, not a " +
                                    type_name(scope));
}

void accept(policy::OptIn kind, py::handle scope, const std::string& reason) {
  policy::Scope s = to_scope(scope);
  auto outcome = policy::accept(kind, s, reason);
  if (!outcome.ok())
    throw Error(ErrorKind::Usage, std::string(policy::opt_in_name(kind)) + " for " +
                                      policy::to_string(s) +
                                      ": refused: " + policy::refusal_message(outcome.error()));
}

// Log lines (opt-ins recorded, device notes) go to stderr as the CLI's do, at the level HALFWAY_LOG
// names (docs/environment.md; default info): spdlog's own default logger would write to stdout.
void setup_logging() {
  if (spdlog::default_logger() && spdlog::default_logger()->name() == "halfway")
    return;
  auto logger = std::make_shared<spdlog::logger>(
      "halfway", std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
  logger->set_pattern("halfway: %^%l%$: %v");
  spdlog::level::level_enum level = spdlog::level::info;
  if (const char* env = std::getenv("HALFWAY_LOG"); env && *env) {
    const std::string v = env;
    for (const char* name : {"trace", "debug", "info", "warn", "warning", "error", "off"})
      if (v == name)
        level = spdlog::level::from_str(v);
    if (level == spdlog::level::info && v != "info" &&
        PyErr_WarnEx(PyExc_RuntimeWarning,
                     ("HALFWAY_LOG=" + printable(v) +
                      " is not one of trace, debug, info, warn, error, off; using info")
                         .c_str(),
                     1) < 0)
      throw py::error_already_set(); // warnings turned into errors
  }
  logger->set_level(level);
  spdlog::set_default_logger(logger);
}

std::string repr(const Kernel& k) {
  std::string s = "<halfway.Kernel " + k.verified.name() + "(";
  const char* sep = "";
  for (const auto& p : k.k().params) {
    s += sep + p.name + ": " + std::string(ir::name(p.type)) + (p.is_buffer() ? "[]" : "");
    if (p.is_buffer())
      s += std::string(" ") + access_name(p.access);
    sep = ", ";
  }
  return s + ")>";
}

} // namespace

PYBIND11_MODULE(halfway, m) {
  m.doc() = "GPU compute kernels over low-precision floats, checked against an exact reference "
            "(see the README, 'Using halfway from Python')";
  m.attr("__version__") = version_string;
  setup_logging();

  // Never destroyed, like the modules above.
  auto* error_class = new py::exception<Error>(m, "Error");
  g_error_class = error_class->ptr();
  error_class->doc() =
      "A halfway error. str() is the full message; attributes: kind ('usage', 'out of bounds', "
      "...), message, kernel, buffer, file, line, column, index (None when unknown).";
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p)
        std::rethrow_exception(p);
    } catch (const Error& e) {
      raise_error(e);
    }
  });

  py::class_<AllKernels>(m, "_AllKernels").def("__repr__", [](const AllKernels&) {
    return "halfway.ALL_KERNELS";
  });
  m.attr("ALL_KERNELS") = AllKernels{};

  py::class_<Kernel>(m, "Kernel", "A verified kernel of a .hk file")
      .def_property_readonly("name", [](const Kernel& k) { return py_text(k.verified.name()); })
      .def_property_readonly("file", [](const Kernel& k) { return py_text(k.file); })
      .def_property_readonly("workgroup",
                             [](const Kernel& k) {
                               const auto& w = k.k().workgroup;
                               return py::make_tuple(w[0], w[1], w[2]);
                             })
      .def_property_readonly(
          "params",
          [](const Kernel& k) {
            py::list out;
            for (const auto& p : k.k().params) {
              py::dict d;
              d["name"] = py_text(p.name);
              d["kind"] = p.is_buffer() ? "buffer" : "scalar";
              d["type"] = std::string(ir::name(p.type));
              if (p.is_buffer())
                d["access"] = access_name(p.access);
              out.append(d);
            }
            return out;
          },
          "The parameters in order: dicts of name, kind ('buffer' or 'scalar'), type ('f16', "
          "...) and, for buffers, access ('read', 'write' or 'read_write')")
      .def(
          "run",
          [](const Kernel& k, const std::string& device, py::object grid, py::object groups,
             py::object args, std::optional<double> timeout, bool check, bool deterministic,
             unsigned threads, const py::kwargs& kwargs) {
            return k.run(device, grid, groups, args,
                         RunOptions{timeout, check, deterministic, threads}, kwargs);
          },
          py::arg("device"), py::kw_only(), py::arg("grid") = py::none(),
          py::arg("groups") = py::none(), py::arg("args") = py::none(),
          py::arg("timeout") = py::none(), py::arg("check") = false,
          py::arg("deterministic") = false, py::arg("threads") = 0u,
          "Runs the kernel once on `device` ('interp', 'cpu', 'vulkan', 'vulkan:NAME') over "
          "grid= lanes (or groups= workgroups; an int or a tuple for 2-D/3-D), with one keyword "
          "argument per parameter: NumPy arrays of the element type for buffers, numbers for "
          "scalars. Write-only buffers may be left out (one element per lane) or given as a "
          "count. Returns {name: array} for every written buffer, with the shape of the array "
          "given; the arrays passed in are never modified.")
      .def("__repr__", &repr);

  py::class_<Kernels>(m, "Kernels", "The kernels of one .hk file, by name or position")
      .def_property_readonly("file", [](const Kernels& ks) { return py_text(ks.file); })
      .def_property_readonly("names",
                             [](const Kernels& ks) {
                               py::list out;
                               for (const auto& k : ks.kernels)
                                 out.append(py_text(k.verified.name()));
                               return out;
                             })
      .def("__len__", [](const Kernels& ks) { return ks.kernels.size(); })
      .def("__getitem__", [](const Kernels& ks, const std::string& name) { return ks.get(name); })
      .def("__getitem__",
           [](const Kernels& ks, py::ssize_t i) {
             const auto n = static_cast<py::ssize_t>(ks.kernels.size());
             if (i < -n || i >= n)
               throw py::index_error("kernel index " + std::to_string(i) + " out of range (" +
                                     std::to_string(n) + " kernels)");
             return ks.kernels[static_cast<size_t>(i < 0 ? i + n : i)];
           })
      .def("__contains__",
           [](const Kernels& ks, const std::string& name) {
             return std::any_of(ks.kernels.begin(), ks.kernels.end(),
                                [&](const Kernel& k) { return k.verified.name() == name; });
           })
      .def(
          "__iter__",
          [](const Kernels& ks) { return py::make_iterator(ks.kernels.begin(), ks.kernels.end()); },
          py::keep_alive<0, 1>())
      .def("__repr__", [](const Kernels& ks) {
        std::string names;
        for (const auto& k : ks.kernels)
          names += (names.empty() ? "" : ", ") + k.verified.name();
        return "<halfway.Kernels of " + ks.file + ": " + names + ">";
      });

  m.def(
      "load", [](const std::string& path) { return from_file(text::parse_file(path)); },
      py::arg("path"),
      "Parses and verifies every kernel of a .hk file. Raises halfway.Error with file:line:column "
      "for malformed text or an ill-typed kernel.");
  m.def(
      "loads",
      [](const std::string& source, const std::string& name) {
        if (source.size() > text::kMaxTextBytes)
          throw Error(ErrorKind::Usage, "kernel text of " + std::to_string(source.size()) +
                                            " bytes is over the limit (16 MiB) on kernel text");
        return from_file(text::KernelFile(source, name));
      },
      py::arg("source"), py::arg("name") = "<string>",
      "Like load(), for kernel text in a string; `name` stands for the file in messages.");
  m.def(
      "devices", [] { return rt::device_names(); },
      "The devices this build can make: 'interp', 'cpu' and, when a Vulkan device exists, "
      "'vulkan'.");
  m.def(
      "device_info",
      [](const std::string& name) {
        const rt::DeviceInfo& info = get_device(name).device->info();
        py::dict d;
        d["name"] = py_text(info.name);
        d["description"] = py_text(info.description);
        d["may_fuse"] = info.may_fuse;
        return d;
      },
      py::arg("device"), "The device's full name and a description of its features and limits.");
  m.def(
      "diff",
      [](const Kernel& k, const std::string& device, py::object grid, py::object groups,
         py::object args, const std::string& inputs, uint64_t seed, uint64_t max_shown,
         uint64_t max_unchecked, uint64_t max_undecided, bool accept_inconclusive,
         bool exact_models, bool arrays, std::optional<double> timeout, bool check,
         const py::kwargs& kwargs) {
        DiffOptions o{inputs,        seed,          max_shown,
                      max_unchecked, max_undecided, accept_inconclusive,
                      exact_models,  arrays};
        return diff_kernel(k, device, grid, groups, args, o, RunOptions{timeout, check, false, 0},
                           kwargs);
      },
      py::arg("kernel"), py::arg("device"), py::kw_only(), py::arg("grid") = py::none(),
      py::arg("groups") = py::none(), py::arg("args") = py::none(), py::arg("inputs") = "ties",
      py::arg("seed") = 1, py::arg("max_shown") = 10, py::arg("max_unchecked") = 0,
      py::arg("max_undecided") = 0, py::arg("accept_inconclusive") = false,
      py::arg("exact_models") = false, py::arg("arrays") = false, py::arg("timeout") = py::none(),
      py::arg("check") = false,
      "Runs `kernel` on the reference interpreter and on `device` with the same inputs and "
      "compares every output element (bit for bit without an opt-in, within the documented bound "
      "with one). Buffers and scalars are keyword arguments as for Kernel.run; those left out "
      "come from the `inputs` generator (random, ties, edges, zeros, iota) and `seed`. Returns "
      "the report as a dict: the document `halfway diff --json` prints for one device (ok, "
      "violations, per-buffer counts, histogram, rounding models, budget, notes); with "
      "arrays=True also report['arrays'][buffer] = {reference, device, verdicts}.");
  m.def(
      "accept_single_rounding",
      [](py::handle scope, const std::string& reason) {
        accept(policy::OptIn::SingleRounding, scope, reason);
      },
      py::arg("scope"), py::arg("reason"),
      "Lets the kernels of `scope` (a kernel name, a Kernel, or halfway.ALL_KERNELS) round "
      "narrowed expressions once, for the rest of the process; `reason` is recorded. A refusal "
      "(blank reason, reserved name) raises halfway.Error.");
  m.def(
      "accept_relaxed_accumulation",
      [](py::handle scope, const std::string& reason) {
        accept(policy::OptIn::RelaxedAccumulation, scope, reason);
      },
      py::arg("scope"), py::arg("reason"),
      "Lets the kernels of `scope` reassociate and contract loop-carried accumulations, as "
      "accept_single_rounding does for single rounding.");
  m.def(
      "policy_report", [] { return py_text(policy::report()); },
      "The opt-ins recorded in this process, with their reasons.");

  // Devices hold driver state (a Vulkan instance, the JIT): release them while the interpreter
  // is still whole rather than in static destructors after it.
  py::module_::import("atexit").attr("register")(py::cpp_function([] { device_cache().clear(); }));
}
