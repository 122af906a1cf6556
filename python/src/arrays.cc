// Copyright 2026 The shoal Authors.

#include "arrays.h"

#include <limits>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "nanobind/stl/string.h"
#include "status.h"

namespace nb = nanobind;
using namespace nanobind::literals;

namespace shoal::python {
namespace {

// PyNumber_Index: ints and numpy integer scalars; floats and the rest are a
// TypeError (as everywhere in Python where an index is wanted).
nb::object AsIndex(nb::handle h, const std::string& what) {
  PyObject* index = PyNumber_Index(h.ptr());
  if (index == nullptr) {
    PyErr_Clear();
    throw nb::type_error(absl::StrCat(what, " must be an int, got ",
                                      nb::type_name(h.type()).c_str())
                             .c_str());
  }
  return nb::steal(index);
}

nb::module_ Numpy() { return nb::module_::import_("numpy"); }

char Kind(nb::handle array) {
  return nb::cast<std::string>(array.attr("dtype").attr("kind"))[0];
}

// str(h), as Python gives it.
std::string Str(nb::handle h) {
  PyObject* s = PyObject_Str(h.ptr());
  if (s == nullptr) throw nb::python_error();
  return nb::cast<std::string>(nb::steal(s));
}

std::string Shape(nb::handle array) { return Str(array.attr("shape")); }

template <class T>
T CastOrThrow(nb::handle h, const std::string& what) {
  T out;
  if (!nb::try_cast(h, out, /*convert=*/false)) {
    throw nb::type_error(absl::StrCat(what, ": cannot be read as an array").c_str());
  }
  return out;
}

template <class T>
nb::object Own(std::vector<T> data, size_t rows, size_t cols) {
  auto* owned = new std::vector<T>(std::move(data));
  nb::capsule owner(owned, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  if (cols == 0) {
    return nb::ndarray<nb::numpy, T, nb::ndim<1>>(owned->data(), {rows}, owner).cast();
  }
  return nb::ndarray<nb::numpy, T, nb::ndim<2>>(owned->data(), {rows, cols}, owner).cast();
}

}  // namespace

uint64_t ToId(nb::handle h, const std::string& what) {
  nb::object index = AsIndex(h, what);
  const unsigned long long value = PyLong_AsUnsignedLongLong(index.ptr());
  if (value == static_cast<unsigned long long>(-1) && PyErr_Occurred()) {
    PyErr_Clear();
    ThrowInvalid(absl::StrCat(what, " must be in [0, 2**64), got ",
                              nb::cast<std::string>(nb::repr(h))));
  }
  return value;
}

uint32_t ToU32(nb::handle h, const std::string& what) {
  const uint64_t value = ToId(h, what);
  if (value > std::numeric_limits<uint32_t>::max()) {
    ThrowInvalid(absl::StrCat(what, " must be in [0, 2**32), got ", value));
  }
  return static_cast<uint32_t>(value);
}

int64_t ToI64(nb::handle h, const std::string& what) {
  nb::object index = AsIndex(h, what);
  const long long value = PyLong_AsLongLong(index.ptr());
  if (value == -1 && PyErr_Occurred()) {
    PyErr_Clear();
    ThrowInvalid(absl::StrCat(what, " must be in [-2**63, 2**63), got ",
                              nb::cast<std::string>(nb::repr(h))));
  }
  return value;
}

IdArray ToIds(nb::handle h, const std::string& what) {
  IdArray ids;
  if (nb::try_cast(h, ids, /*convert=*/false)) return ids;
  nb::module_ np = Numpy();
  nb::object array = np.attr("asarray")(h);
  const size_t ndim = nb::cast<size_t>(array.attr("ndim"));
  if (ndim != 1) {
    ThrowInvalid(absl::StrCat(what, " must be one-dimensional, got shape ", Shape(array)));
  }
  const char kind = Kind(array);
  if (nb::cast<size_t>(array.attr("size")) == 0) {
    array = np.attr("zeros")(0, "dtype"_a = np.attr("uint64"));
  } else if (kind == 'i') {
    nb::object any_negative = np.attr("any")(array.attr("__lt__")(0));  // a numpy bool
    if (PyObject_IsTrue(any_negative.ptr()) != 0) {
      ThrowInvalid(absl::StrCat(what, " must be in [0, 2**64): a negative id was given"));
    }
    array = np.attr("ascontiguousarray")(array);
    // int64: the same bits, without a copy; narrower ints: widened once.
    array = nb::cast<size_t>(array.attr("itemsize")) == 8
                ? array.attr("view")(np.attr("uint64"))
                : array.attr("astype")(np.attr("uint64"));
  } else if (kind == 'u') {
    array = np.attr("ascontiguousarray")(array, "dtype"_a = np.attr("uint64"));
  } else if (kind == 'O') {  // Python ints beyond int64
    try {
      array = np.attr("asarray")(h, "dtype"_a = np.attr("uint64"));
    } catch (nb::python_error&) {
      ThrowInvalid(absl::StrCat(what, " must be integers in [0, 2**64)"));
    }
  } else {
    throw nb::type_error(absl::StrCat(what, " must be integers, got dtype ",
                                      Str(array.attr("dtype")))
                             .c_str());
  }
  return CastOrThrow<IdArray>(array, what);
}

namespace {

// `h` as a C-contiguous float32 array of `ndim` dimensions (`shape` says
// which, for the error): converted once from any integer or floating dtype.
nb::object AsFloat32(nb::handle h, size_t ndim, const std::string& shape,
                     const std::string& what) {
  nb::module_ np = Numpy();
  nb::object array = np.attr("asarray")(h);
  const char kind = Kind(array);
  if (kind != 'f' && kind != 'i' && kind != 'u') {
    throw nb::type_error(
        absl::StrCat(what, " must be numbers, got dtype ", Str(array.attr("dtype"))).c_str());
  }
  if (nb::cast<size_t>(array.attr("ndim")) != ndim) {
    ThrowInvalid(absl::StrCat(what, " must be ", ndim == 1 ? "one" : "two", "-dimensional ",
                              shape, ", got shape ", Shape(array)));
  }
  return np.attr("ascontiguousarray")(array, "dtype"_a = np.attr("float32"));
}

}  // namespace

RowArray ToRows(nb::handle h, size_t dim, const std::string& what) {
  RowArray rows;
  if (!nb::try_cast(h, rows, /*convert=*/false)) {
    rows = CastOrThrow<RowArray>(AsFloat32(h, 2, absl::StrCat("(n, ", dim, ")"), what), what);
  }
  if (dim != 0 && rows.shape(1) != dim) {
    ThrowInvalid(absl::StrCat(what, " must have shape (n, ", dim, "), got (", rows.shape(0),
                              ", ", rows.shape(1), ")"));
  }
  return rows;
}

VectorArray ToVector(nb::handle h, size_t dim, const std::string& what) {
  VectorArray vector;
  if (!nb::try_cast(h, vector, /*convert=*/false)) {
    vector =
        CastOrThrow<VectorArray>(AsFloat32(h, 1, absl::StrCat("(", dim, ",)"), what), what);
  }
  if (dim != 0 && vector.shape(0) != dim) {
    ThrowInvalid(absl::StrCat(what, " must have shape (", dim, ",), got (", vector.shape(0),
                              ",)"));
  }
  return vector;
}

nb::object NewArray(std::vector<uint64_t> data, size_t rows, size_t cols) {
  return Own(std::move(data), rows, cols);
}
nb::object NewArray(std::vector<float> data, size_t rows, size_t cols) {
  return Own(std::move(data), rows, cols);
}
nb::object NewArray(std::vector<uint32_t> data, size_t rows, size_t cols) {
  return Own(std::move(data), rows, cols);
}

}  // namespace shoal::python
