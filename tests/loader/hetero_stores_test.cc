// A heterogeneous graph's tables in their placements (loader/hetero_stores.h): the per-type
// placements as options give them and `auto` chooses them, rows read from disk equal to those
// in memory, and one RAM cache shared by the types on disk, ranked across them.
#include "loader/hetero_stores.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <set>
#include <tuple>

#include "graph/mag_generator.h"
#include "io/hetero_dir.h"
#include "test_util.h"

namespace directgnn {
namespace {

using testing::TempDirectory;

HeteroDataset tiny_mag() {
  MagOptions o;
  o.scale = 0.005;
  o.num_classes = 4;
  o.feat_dim = 8;
  o.seed = 3;
  return generate_mag(o);
}

// The tiny mag with a second, narrower float16 table (field_of_study), written to `dir` and
// loaded from there (memory-mapped, with the tables' files).
HeteroDataset two_tables_on_file(const std::string& dir) {
  HeteroDataset ds = tiny_mag();
  NodeType& field = ds.node_types[static_cast<size_t>(ds.type_index("field_of_study", "test"))];
  at::manual_seed(5);
  field.features = at::randn({field.count, 4}).to(at::kHalf);
  save_hetero_dir(ds, dir);
  return load_hetero_dir(dir);
}

LoaderOptions cpu_options() {
  LoaderOptions o;
  o.device = DeviceChoice::cpu();
  o.fanouts = {3, 2};
  return o;
}

template <typename F>
void expect_error(const F& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no error; expected one containing: " << needle;
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(HeteroPlacements, PerTypeTextParsesChecksAndWritesBack) {
  const std::vector<TypePlacement> p = parse_type_placements("paper=disk,author=auto,field=pinned");
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[0].type, "paper");
  EXPECT_EQ(p[0].placement, Placement::kDisk);
  EXPECT_FALSE(p[1].placement.has_value());
  EXPECT_EQ(type_placements_text(p), "paper=disk,author=auto,field=pinned");
  EXPECT_TRUE(parse_type_placements("").empty());
  EXPECT_EQ(parse_type_placements(" paper = disk, author=host").at(1).type, "author");
  expect_error([] { parse_type_placements("paper"); }, "is not TYPE=PLACEMENT");
  expect_error([] { parse_type_placements("paper=disk,paper=host"); }, "named twice");
  expect_error([] { parse_type_placements("paper=floppy"); }, "floppy");
}

TEST(HeteroPlacements, AutoTakesGpuMemoryThenRamThenDiskAndSaysWhy) {
  PlacementRoom room{100, 50};
  auto [p, why] = auto_type_placement({40, false, true}, true, room);
  EXPECT_EQ(p, Placement::kDevice);
  EXPECT_EQ(why, "fits in GPU memory");
  EXPECT_EQ(room.gpu_left, 10);
  std::tie(p, why) = auto_type_placement({40, false, true}, true, room);
  EXPECT_EQ(p, Placement::kPinned);
  EXPECT_EQ(room.ram_left, 60);
  std::tie(p, why) = auto_type_placement({80, false, true}, true, room);
  EXPECT_EQ(p, Placement::kDisk);
  EXPECT_EQ(why, "larger than the RAM left for tables");
  std::tie(p, why) = auto_type_placement({80, false, false}, true, room);
  EXPECT_EQ(p, Placement::kPinned);  // no file to read it from: it stays where it is
  std::tie(p, why) = auto_type_placement({80, true, false}, true, room);
  EXPECT_EQ(p, Placement::kDevice);
  PlacementRoom cpu{100, 0};
  EXPECT_EQ(auto_type_placement({40, false, true}, false, cpu).first, Placement::kHost);
  EXPECT_EQ(auto_type_placement({80, false, true}, false, cpu).first, Placement::kDisk);
}

TEST(HeteroPlacements, ResolvedPerTypeWithTheFlagsChecksNamingTypeAndFix) {
  TempDirectory dir;
  const HeteroDataset ds = two_tables_on_file(dir.file("mag"));
  const int paper = ds.type_index("paper", "test"), field = ds.type_index("field_of_study", "t");
  LoaderOptions o = cpu_options();
  o.features = Placement::kDisk;
  o.type_features = parse_type_placements("field_of_study=host");
  LoaderSettings s = resolve_hetero_loader(o, ds);
  ASSERT_EQ(s.type_features.size(), ds.node_types.size());
  EXPECT_EQ(s.type_features[static_cast<size_t>(paper)], Placement::kDisk);
  EXPECT_EQ(s.type_features[static_cast<size_t>(field)], Placement::kHost);
  EXPECT_EQ(s.prefetch, LoaderOptions::kGpuPrefetch);  // rows read from disk are read ahead
  // auto on the CPU: small tables in RAM, and it says why.
  s = resolve_hetero_loader(cpu_options(), ds);
  EXPECT_EQ(s.type_features[static_cast<size_t>(paper)], Placement::kHost);
  EXPECT_EQ(s.type_reasons[static_cast<size_t>(paper)], "fits in RAM");
  EXPECT_EQ(s.prefetch, 0);

  o = cpu_options();
  o.type_features = parse_type_placements("author=disk");
  expect_error([&] { resolve_hetero_loader(o, ds); }, "node type 'author' has no feature table");
  o.type_features = parse_type_placements("venue=disk");
  expect_error([&] { resolve_hetero_loader(o, ds); }, "no node type 'venue'");
  o.type_features = parse_type_placements("paper=pinned");
  expect_error([&] { resolve_hetero_loader(o, ds); }, "keeps the table for a GPU to read");
  o.type_features.clear();
  o.gather.method = GatherMethod::kAligned;
  expect_error([&] { resolve_hetero_loader(o, ds); }, "gathers onto a GPU");
  o.gather.method = GatherMethod::kAuto;
  o.cache.gib = 1;
  expect_error([&] { resolve_hetero_loader(o, ds); }, "no node type's table is placed on disk");
  o.cache.gib = 0;
  o.disk.direct = true;  // nothing is read from disk: said, not ignored
  expect_error([&] { resolve_hetero_loader(o, ds); }, "says how rows on disk are read");
  o.disk.direct = false;
  o.cache.ranking = disk::CacheRanking::kDegree;
  expect_error([&] { resolve_hetero_loader(o, ds); }, "but there is none");
  o.cache.ranking = disk::CacheRanking::kPresample;
  const HeteroDataset in_memory = tiny_mag();
  o.cache.gib = 0;
  o.features = Placement::kDisk;
  expect_error([&] { resolve_hetero_loader(o, in_memory); }, "not in a file");
  HeteroDataset featureless = tiny_mag();
  for (NodeType& t : featureless.node_types) t.features = at::Tensor();
  o.features = Placement::kHost;
  expect_error([&] { resolve_hetero_loader(o, featureless); }, "has a feature table to place");
  o.features.reset();
  EXPECT_EQ(resolve_hetero_loader(o, featureless).type_features.size(), 4u);
}

TEST(HeteroStores, RowsReadFromDiskEqualThoseInMemory) {
  TempDirectory dir;
  const HeteroDataset ds = two_tables_on_file(dir.file("mag"));
  LoaderOptions o = cpu_options();
  const HeteroStores memory(ds, resolve_hetero_loader(o, ds));
  o.features = Placement::kDisk;
  const HeteroStores disk(ds, resolve_hetero_loader(o, ds));
  std::vector<at::Tensor> ids;
  at::manual_seed(1);
  for (const NodeType& t : ds.node_types) ids.push_back(at::randint(t.count, {50}, at::kLong));
  const std::vector<at::Tensor> a = memory.gather(ids), b = disk.gather(ids);
  int featured = 0;
  for (size_t t = 0; t < ds.node_types.size(); ++t) {
    ASSERT_EQ(a[t].defined(), ds.node_types[t].has_features());
    if (!a[t].defined()) continue;
    ++featured;
    EXPECT_TRUE(a[t].equal(b[t])) << ds.node_types[t].name;
    EXPECT_EQ(disk.store(t)->placement(), Placement::kDisk);
  }
  EXPECT_EQ(featured, 2);
  EXPECT_TRUE(disk.has_disk());
  EXPECT_FALSE(memory.has_disk());
  EXPECT_NE(disk.description().find("field_of_study disk"), std::string::npos)
      << disk.description();
}

// Rows of both types are ranked together by degree, the budget taken in that order, each row
// costing its own type's bytes (32 for a paper, 8 for a field).
TEST(HeteroStores, TheSharedCacheTakesTheBestRowsOfEveryTypeByDegree) {
  TempDirectory dir;
  const HeteroDataset ds = two_tables_on_file(dir.file("mag"));
  LoaderOptions o = cpu_options();
  o.features = Placement::kDisk;
  HeteroStores stores(ds, resolve_hetero_loader(o, ds));
  const int64_t budget = 4096;
  disk::CacheOptions cache;
  cache.gib = static_cast<double>(budget) / (1 << 30);
  cache.ranking = disk::CacheRanking::kDegree;
  const std::string line = fill_hetero_feature_cache(stores, ds, {}, cache, false);
  EXPECT_NE(line.find("ranked by in-degree"), std::string::npos) << line;
  // The expected rows, ranked here by (degree desc, type, id).
  std::vector<std::tuple<int64_t, size_t, int64_t>> rows;
  for (size_t t = 0; t < ds.node_types.size(); ++t) {
    if (!ds.node_types[t].has_features()) continue;
    const at::Tensor degree = hetero_in_degrees(ds, static_cast<int>(t));
    for (int64_t i = 0; i < degree.numel(); ++i)
      rows.emplace_back(-degree[i].item<int64_t>(), t, i);
  }
  std::sort(rows.begin(), rows.end());
  std::set<std::pair<size_t, int64_t>> expected;
  int64_t spent = 0;
  for (const auto& [neg_degree, t, id] : rows) {
    const int64_t bytes = stores.store(t)->row_bytes();
    if (spent + bytes > budget) break;
    spent += bytes;
    expected.emplace(t, id);
  }
  size_t cached = 0;
  for (size_t t = 0; t < stores.size(); ++t) {
    const FeatureStore* s = stores.store(t);
    if (s == nullptr) continue;
    ASSERT_NE(s->row_cache(), nullptr) << stores.type_name(t);
    for (int64_t i = 0; i < s->num_rows(); ++i) {
      ASSERT_EQ(s->row_cache()->contains(i), expected.count({t, i}) == 1)
          << stores.type_name(t) << " row " << i;
    }
    cached += static_cast<size_t>(s->row_cache()->rows());
  }
  EXPECT_EQ(cached, expected.size());
}

// Pre-sampled counts come first: the rows two minibatches gather are cached before those one
// gathers, whatever their degree.
TEST(HeteroStores, TheSharedCacheRanksByPresampledCountsFirst) {
  TempDirectory dir;
  const HeteroDataset ds = two_tables_on_file(dir.file("mag"));
  LoaderOptions o = cpu_options();
  o.features = Placement::kDisk;
  HeteroStores stores(ds, resolve_hetero_loader(o, ds));
  const size_t paper = static_cast<size_t>(ds.type_index("paper", "test"));
  const size_t field = static_cast<size_t>(ds.type_index("field_of_study", "test"));
  // Take the papers and fields of lowest degree, so degree alone would never pick them.
  const at::Tensor low_paper = std::get<1>(hetero_in_degrees(ds, int(paper)).sort());
  const at::Tensor low_field = std::get<1>(hetero_in_degrees(ds, int(field)).sort());
  const int64_t p0 = low_paper[0].item<int64_t>(), p1 = low_paper[1].item<int64_t>();
  const int64_t f0 = low_field[0].item<int64_t>(), f1 = low_field[1].item<int64_t>();
  const HeteroPresample presample{2, [&](int64_t step) {
                                    std::vector<at::Tensor> in(ds.node_types.size(),
                                                               at::empty({0}, at::kLong));
                                    in[paper] = step == 0 ? at::tensor({p0, p1}) : at::tensor({p0});
                                    in[field] = step == 0 ? at::tensor({f0}) : at::tensor({f0, f1});
                                    return in;
                                  }};
  disk::CacheOptions cache;                             // presample
  cache.gib = static_cast<double>(32 + 8) / (1 << 30);  // one paper row and one field row
  const std::string line = fill_hetero_feature_cache(stores, ds, presample, cache, false);
  EXPECT_NE(line.find("ranked by pre-sampling 2 minibatches"), std::string::npos) << line;
  ASSERT_EQ(stores.store(paper)->row_cache()->rows(), 1);
  ASSERT_EQ(stores.store(field)->row_cache()->rows(), 1);
  EXPECT_TRUE(stores.store(paper)->row_cache()->contains(p0));
  EXPECT_TRUE(stores.store(field)->row_cache()->contains(f0));
}

}  // namespace
}  // namespace directgnn
