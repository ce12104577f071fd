// METIS's k-way partitioning (graph/partition.h), where the build found Debian's libmetis-dev.
#include <ATen/ATen.h>

#include <limits>
#include <vector>

#include "directgnn/error.h"
#include "graph/partition.h"

#ifdef DIRECTGNN_HAVE_METIS
#include <metis.h>
#endif

namespace directgnn {

#ifdef DIRECTGNN_HAVE_METIS
namespace {

// The undirected graph METIS wants: each pair once per direction, no self-loops, as CSR.
// A stored undirected graph already lists both directions; a directed one gains its reverse.
struct MetisGraph {
  std::vector<idx_t> xadj, adjncy;
};

void check_fits(int64_t entries) {
  DGNN_CHECK_ARG(entries < std::numeric_limits<idx_t>::max(), "method",
                 "metis: the undirected graph has ", entries,
                 " adjacency entries, more than this METIS build's 32-bit ids hold; use random");
}

// A graph that stores both directions already: its lists without self-loops.
template <typename Index>
MetisGraph lists_without_self_loops(const CsrGraph& g) {
  const int64_t n = g.num_nodes();
  const int64_t* ptr = g.indptr.data_ptr<int64_t>();
  const Index* idx = g.indices.data_ptr<Index>();
  check_fits(g.num_edges());
  MetisGraph out;
  out.xadj.reserve(n + 1);
  out.xadj.push_back(0);
  out.adjncy.reserve(g.num_edges());
  for (int64_t v = 0; v < n; ++v) {
    for (int64_t e = ptr[v]; e < ptr[v + 1]; ++e) {
      if (idx[e] != v) out.adjncy.push_back(static_cast<idx_t>(idx[e]));
    }
    out.xadj.push_back(static_cast<idx_t>(out.adjncy.size()));
  }
  return out;
}

MetisGraph undirected_lists(const CsrGraph& g, bool directed) {
  const int64_t n = g.num_nodes();
  DGNN_CHECK_ARG(n < std::numeric_limits<idx_t>::max(), "method", "metis: ", n,
                 " nodes are more than this METIS build's 32-bit ids hold; use random");
  if (!directed) {
    return g.indices.scalar_type() == at::kInt ? lists_without_self_loops<int32_t>(g)
                                               : lists_without_self_loops<int64_t>(g);
  }
  at::Tensor dst = at::repeat_interleave(g.degrees());
  at::Tensor src = g.indices.to(at::kLong);
  at::Tensor keys = at::cat({dst * n + src, src * n + dst});
  keys = keys.masked_select(keys.div(n, "floor") != keys.remainder(n));
  keys = std::get<0>(at::_unique2(keys, /*sorted=*/true, false, false));
  check_fits(keys.numel());
  const at::Tensor rows = keys.div(n, "floor"), cols = keys.remainder(n);
  const at::Tensor counts = at::bincount(rows, {}, n).to(at::kLong);
  MetisGraph out;
  out.xadj.assign(n + 1, 0);
  const int64_t* c = counts.data_ptr<int64_t>();
  for (int64_t v = 0; v < n; ++v) out.xadj[v + 1] = out.xadj[v] + static_cast<idx_t>(c[v]);
  const at::Tensor cols32 = cols.to(at::kInt);
  out.adjncy.assign(cols32.data_ptr<int32_t>(), cols32.data_ptr<int32_t>() + cols32.numel());
  return out;
}

// One weight per constraint per node: 1 for its group's node count (one group, or
// options.groups'), its stored edges, and 1 for a training seed.
std::vector<idx_t> node_weights(const CsrGraph& g, const PartitionOptions& o, idx_t groups,
                                idx_t ncon) {
  const int64_t n = g.num_nodes();
  const int64_t* ptr = g.indptr.data_ptr<int64_t>();
  const at::Tensor group =
      groups > 1 ? o.groups.to(at::kInt).contiguous() : at::zeros({n}, at::kInt);
  const int32_t* grp = group.data_ptr<int32_t>();
  std::vector<idx_t> w(static_cast<size_t>(n * ncon), 0);
  for (int64_t v = 0; v < n; ++v) {
    w[v * ncon + grp[v]] = 1;
    w[v * ncon + groups] = static_cast<idx_t>(ptr[v + 1] - ptr[v]);
  }
  if (ncon == groups + 2) {
    const at::Tensor s = o.seeds.to(at::kLong).contiguous();
    for (int64_t i = 0; i < s.numel(); ++i) w[s.data_ptr<int64_t>()[i] * ncon + groups + 1] = 1;
  }
  return w;
}

}  // namespace

bool metis_available() { return true; }

at::Tensor detail::metis_owner(const CsrGraph& graph, const PartitionOptions& o) {
  MetisGraph g = undirected_lists(graph, o.directed);
  idx_t nvtxs = static_cast<idx_t>(graph.num_nodes());
  const idx_t groups =
      o.groups.defined() && o.num_groups > 1 ? static_cast<idx_t>(o.num_groups) : 1;
  idx_t ncon = groups + (o.seeds.defined() && o.seeds.numel() > 0 ? 2 : 1);
  std::vector<idx_t> vwgt = node_weights(graph, o, groups, ncon);
  idx_t nparts = static_cast<idx_t>(o.parts), objval = 0;
  idx_t options[METIS_NOPTIONS];
  METIS_SetDefaultOptions(options);
  options[METIS_OPTION_SEED] = static_cast<idx_t>(o.seed % 1000003);
  options[METIS_OPTION_NUMBERING] = 0;
  std::vector<idx_t> part(static_cast<size_t>(nvtxs), 0);
  const int status =
      METIS_PartGraphKway(&nvtxs, &ncon, g.xadj.data(), g.adjncy.data(), vwgt.data(), nullptr,
                          nullptr, &nparts, nullptr, nullptr, options, &objval, part.data());
  DGNN_CHECK(status == METIS_OK, "partitioning with METIS failed (status ", status,
             status == METIS_ERROR_MEMORY ? ": out of memory" : "",
             "); partition this graph with the random method");
  return at::tensor(std::vector<int32_t>(part.begin(), part.end()), at::kInt);
}

#else

bool metis_available() { return false; }

at::Tensor detail::metis_owner(const CsrGraph&, const PartitionOptions&) {
  fail_argument("method",
                "metis: this build has no METIS (install Debian's libmetis-dev, as "
                "scripts/install-deps.sh does, and configure again); random needs none");
}

#endif

}  // namespace directgnn
