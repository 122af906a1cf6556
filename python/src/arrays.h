// Copyright 2026 The shoal Authors.
//
// numpy in and out. Inputs in the layout the engine reads (uint64 ids,
// float32 rows, C-contiguous) are used where they lie, read-only arrays
// included; other integer or floating dtypes and layouts are converted once
// (one copy). Anything else is a TypeError, a wrong shape an
// InvalidArgumentError, a negative id an InvalidArgumentError: never a
// silent wrap-around. Outputs are new arrays that own their memory.

#ifndef SHOAL_PYTHON_SRC_ARRAYS_H_
#define SHOAL_PYTHON_SRC_ARRAYS_H_

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "nanobind/nanobind.h"
#include "nanobind/ndarray.h"

namespace shoal::python {

using IdArray = nanobind::ndarray<const uint64_t, nanobind::ndim<1>, nanobind::c_contig,
                                  nanobind::device::cpu>;
using RowArray = nanobind::ndarray<const float, nanobind::ndim<2>, nanobind::c_contig,
                                   nanobind::device::cpu>;
using VectorArray = nanobind::ndarray<const float, nanobind::ndim<1>, nanobind::c_contig,
                                      nanobind::device::cpu>;

// An id: a Python int in [0, 2^64). `what` names the argument in errors.
uint64_t ToId(nanobind::handle h, const std::string& what);
// A uint32 (a label, k, a list size) from a Python int.
uint32_t ToU32(nanobind::handle h, const std::string& what);
int64_t ToI64(nanobind::handle h, const std::string& what);

// ids: a 1-D array (or sequence) of non-negative integers.
IdArray ToIds(nanobind::handle h, const std::string& what);
// rows: an (n, dim) array of numbers; dim 0 accepts any width.
RowArray ToRows(nanobind::handle h, size_t dim, const std::string& what);
// one vector: (dim,) numbers.
VectorArray ToVector(nanobind::handle h, size_t dim, const std::string& what);

template <class T>
std::span<const T> Span(const nanobind::ndarray<const T, nanobind::ndim<1>, nanobind::c_contig,
                                                nanobind::device::cpu>& a) {
  return {a.data(), a.shape(0)};
}
inline std::span<const float> Span(const RowArray& a) {
  return {a.data(), a.shape(0) * a.shape(1)};
}

// A new numpy array of `n` (x `cols` when cols > 0) elements owning `data`.
nanobind::object NewArray(std::vector<uint64_t> data, size_t rows, size_t cols);
nanobind::object NewArray(std::vector<float> data, size_t rows, size_t cols);
nanobind::object NewArray(std::vector<uint32_t> data, size_t rows, size_t cols);

}  // namespace shoal::python

#endif  // SHOAL_PYTHON_SRC_ARRAYS_H_
