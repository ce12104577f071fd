#include "graph/edge_lookup.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <algorithm>

#include "core/parallel.h"

namespace directgnn {
namespace {

template <typename T>
bool rows_sorted(const int64_t* ptr, const T* ids, int64_t n) {
  return first_index_where(n, 1 << 12, [&](int64_t v) {
           for (int64_t e = ptr[v] + 1; e < ptr[v + 1]; ++e) {
             if (ids[e] < ids[e - 1]) return true;
           }
           return false;
         }) < 0;
}

template <typename T>
void sort_rows(const int64_t* ptr, T* ids, int64_t n) {
  at::parallel_for(0, n, 1 << 12, [&](int64_t begin, int64_t end) {
    for (int64_t v = begin; v < end; ++v) std::sort(ids + ptr[v], ids + ptr[v + 1]);
  });
}

template <typename T>
bool in_row(const T* ids, int64_t begin, int64_t end, int64_t value) {
  return std::binary_search(ids + begin, ids + end, static_cast<T>(value));
}

}  // namespace

EdgeLookup::EdgeLookup(const CsrGraph& graph)
    : indptr_(graph.indptr.contiguous()),
      indices_(graph.indices.contiguous()),
      num_nodes_(graph.num_nodes()) {
  ptr_ = indptr_.data_ptr<int64_t>();
  const bool is32 = indices_.scalar_type() == at::kInt;
  in_place_ = is32 ? rows_sorted(ptr_, indices_.data_ptr<int32_t>(), num_nodes_)
                   : rows_sorted(ptr_, indices_.data_ptr<int64_t>(), num_nodes_);
  if (!in_place_) {
    indices_ = indices_.clone();
    if (is32) {
      sort_rows(ptr_, indices_.data_ptr<int32_t>(), num_nodes_);
    } else {
      sort_rows(ptr_, indices_.data_ptr<int64_t>(), num_nodes_);
    }
  }
  if (is32) {
    ids32_ = indices_.data_ptr<int32_t>();
  } else {
    ids64_ = indices_.data_ptr<int64_t>();
  }
}

bool EdgeLookup::contains(int64_t src, int64_t dst) const {
  const int64_t begin = ptr_[dst], end = ptr_[dst + 1];
  return ids32_ != nullptr ? in_row(ids32_, begin, end, src) : in_row(ids64_, begin, end, src);
}

}  // namespace directgnn
