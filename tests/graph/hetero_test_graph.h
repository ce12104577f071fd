// A small random heterogeneous graph for the sampler, loader and model tests: papers (with
// features and labels), authors and fields (featureless); papers cite papers, authors write
// papers, papers have fields, with the reverses of writes and has_topic.
#pragma once

#include <ATen/ATen.h>

#include "graph/hetero_graph.h"

namespace directgnn::testing {

inline HeteroDataset random_hetero(uint64_t seed, int64_t papers = 60, int64_t authors = 40,
                                   int64_t fields = 7, int64_t feat_dim = 5) {
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  HeteroDataset ds;
  ds.name = "random-hetero";
  ds.source = "random-hetero";
  ds.node_types = {{"paper", papers, at::randn({papers, feat_dim}, gen), ""},
                   {"author", authors, at::Tensor(), ""},
                   {"field", fields, at::Tensor(), ""}};
  auto relation = [&](const char* s, const char* r, const char* d, int64_t ns, int64_t nd,
                      int64_t m) {
    Relation rel;
    rel.src = s;
    rel.rel = r;
    rel.dst = d;
    rel.graph =
        build_relation_csr(at::randint(ns, {m}, gen), at::randint(nd, {m}, gen), ns, nd, rel.key());
    return rel;
  };
  ds.relations = {relation("paper", "cites", "paper", papers, papers, papers * 4),
                  relation("author", "writes", "paper", authors, papers, papers * 3),
                  relation("paper", "has_topic", "field", papers, fields, papers * 2)};
  ds.target_type = 0;
  ds.num_classes = 3;
  ds.labels = at::randint(3, {papers}, gen);
  const at::Tensor perm = at::randperm(papers, gen);
  ds.splits.push_back({perm.narrow(0, 0, papers / 2), perm.narrow(0, papers / 2, papers / 4),
                       perm.narrow(0, papers / 2 + papers / 4, papers - papers / 2 - papers / 4)});
  validate_hetero(ds, "random-hetero");
  add_reverse_relations(ds);
  validate_hetero(ds, "random-hetero");
  return ds;
}

}  // namespace directgnn::testing
