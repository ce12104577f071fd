#include <ATen/ATen.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <tuple>

#include "feature/disk/read_plan.h"
#include "feature/feature_store.h"
#include "feature/npy_table_file.h"
#include "io/npy.h"
#include "test_util.h"

namespace directgnn {
namespace {

std::vector<disk::Backend> backends_here() {
  std::vector<disk::Backend> out{disk::Backend::kPread};
  if (disk::io_uring_unavailable_reason().empty()) out.push_back(disk::Backend::kIoUring);
  return out;
}

// Unsorted random ids with repeats, plus the first and last rows, twice.
at::Tensor awkward_ids(int64_t rows, at::ScalarType id_type) {
  const at::Tensor random = at::randint(0, rows, {300}, at::kLong);
  const at::Tensor ends = at::tensor({rows - 1, int64_t{0}, rows - 1, int64_t{5}, int64_t{0}});
  return at::cat({ends, random, random.narrow(0, 0, 50)}).to(id_type);
}

// dtype, row width, header alignment (64: rows straddle 4 KiB blocks; 4096: they do not).
class DiskGatherMatchesHost
    : public ::testing::TestWithParam<std::tuple<at::ScalarType, int64_t, size_t>> {};

TEST_P(DiskGatherMatchesHost, ForAnyIdsOnEveryBackend) {
  const auto [dtype, width, align] = GetParam();
  const int64_t rows = 700;
  const at::Tensor table = at::randn({rows, width}).to(dtype);
  testing::TempDirectory dir;
  const std::string path = testing::npy_table_file(dir, table, align);
  const FeatureStore host(table);
  for (const disk::Backend backend : backends_here()) {
    disk::RowFileOptions options;
    options.backend = backend;
    options.io_threads = 3;
    options.queue_depth = 4;
    const FeatureStore store = FeatureStore::on_disk(load_npy(path), path, options);
    ASSERT_EQ(store.row_file()->data_offset() % 4096 == 0, align == 4096);
    for (const at::ScalarType id_type : {at::kInt, at::kLong}) {
      const at::Tensor ids = awkward_ids(rows, id_type);
      EXPECT_TRUE(store.gather(ids).equal(host.gather(ids)))
          << disk::backend_name(backend) << " " << id_type;
    }
    const at::Tensor all = at::arange(rows, at::kLong);
    EXPECT_TRUE(store.gather(all).equal(table));
    EXPECT_EQ(store.gather(at::empty({0}, at::kLong)).sizes(), (std::vector<int64_t>{0, width}));
    EXPECT_ERROR_CONTAINS(store.gather(at::tensor({rows}, at::kLong)), "out of range");
  }
}

INSTANTIATE_TEST_SUITE_P(DtypesWidthsAlignments, DiskGatherMatchesHost,
                         ::testing::Combine(::testing::Values(at::kFloat, at::kHalf),
                                            ::testing::Values(3, 100, 1024, 3000),
                                            ::testing::Values(size_t{64}, size_t{4096})));

TEST(DiskGather, ODirectReadsMatchWhereTheFileSystemAllowsThem) {
  const at::Tensor table = at::randn({500, 1024});
  testing::TempDirectory dir;
  for (const size_t align : {size_t{64}, size_t{4096}}) {
    const std::string path = testing::npy_table_file(dir, table, align);
    const int probe = open(path.c_str(), O_RDONLY | O_DIRECT);
    if (probe < 0) GTEST_SKIP() << "this file system refuses O_DIRECT (" << errno << ")";
    close(probe);
    for (const disk::Backend backend : backends_here()) {
      disk::RowFileOptions options;
      options.backend = backend;
      options.direct = true;
      const FeatureStore store = FeatureStore::on_disk(load_npy(path), path, options);
      const at::Tensor ids = awkward_ids(500, at::kLong);
      EXPECT_TRUE(store.gather(ids).equal(table.index_select(0, ids))) << align;
    }
  }
}

TEST(DiskGather, PlanSortsDedupesAndMergesRowsByBlock) {
  // 1 KiB rows after a 4 KiB header: rows 0-3 share block 1, row 4 starts block 2.
  const int64_t ids[] = {4, 0, 2, 0, 40, 3};
  const disk::ReadPlan plan = disk::plan_reads(ids, 6, {4096, 1024});
  EXPECT_EQ(plan.unique_rows, 5);
  ASSERT_EQ(plan.extents.size(), 2u);  // blocks 1-2 (adjoining), block 11
  EXPECT_EQ(plan.extents[0].offset, 4096);
  EXPECT_EQ(plan.extents[0].length, 8192);
  EXPECT_EQ(plan.extents[1].offset, 4096 * 11);
  EXPECT_EQ(plan.buffer_bytes, 3 * 4096);
  EXPECT_EQ(plan.source[1], plan.source[3]);  // the repeated row is read once
  EXPECT_EQ(plan.source[0], 4096);            // row 4 = second block of the first extent
  // A row straddling two blocks (header 64 bytes, 4 KiB rows) reads both.
  const int64_t one[] = {1};
  const disk::ReadPlan straddle = disk::plan_reads(one, 1, {64, 4096});
  ASSERT_EQ(straddle.extents.size(), 1u);
  EXPECT_EQ(straddle.extents[0].length, 8192);
  EXPECT_EQ(straddle.source[0], 64);
}

TEST(DiskGather, BufferedPlansAskForTheRowsBytesOnly) {
  // 256-byte rows after a 4 KiB header, aligned to 1 byte (buffered reads): rows 0 and 2 share
  // block 1 and read as one extent from row 0's first byte to row 2's last; row 20 (block 2)
  // adjoins that block and joins too; row 400 reads its own 256 bytes.
  disk::PlanShape shape{4096, 256};
  shape.align = 1;
  const int64_t ids[] = {2, 400, 0, 20};
  const disk::ReadPlan plan = disk::plan_reads(ids, 4, shape);
  ASSERT_EQ(plan.extents.size(), 2u);
  EXPECT_EQ(plan.extents[0].offset, 4096);
  EXPECT_EQ(plan.extents[0].length, 21 * 256);
  EXPECT_EQ(plan.extents[0].needed, plan.extents[0].length);
  EXPECT_EQ(plan.extents[1].offset, 4096 + 400 * 256);
  EXPECT_EQ(plan.extents[1].length, 256);
  EXPECT_EQ(plan.buffer_bytes, 22 * 256);
  EXPECT_EQ(plan.source[0], 2 * 256);
  EXPECT_EQ(plan.source[2], 0);
  EXPECT_EQ(plan.source[3], 20 * 256);
  EXPECT_EQ(plan.source[1], 21 * 256);
}

TEST(DiskGather, ATruncatedOrResizedFileIsRefusedWhenOpened) {
  const at::Tensor table = at::randn({100, 16});
  testing::TempDirectory dir;
  const std::string path = testing::npy_table_file(dir, table, 4096);
  const at::Tensor mapped = load_npy(path);
  ASSERT_EQ(truncate(path.c_str(), 4096 + 100 * 64 - 10), 0);
  EXPECT_ERROR_CONTAINS(FeatureStore::on_disk(mapped, path, {}),
                        "is 10486 bytes, but its header (100 rows of 64 bytes after a 4096-byte "
                        "header) needs exactly 10496; the file was truncated or resized");
  EXPECT_ERROR_CONTAINS(FeatureStore::on_disk(mapped, dir.file("none.npy"), {}),
                        "none.npy: cannot open for features disk");
}

TEST(DiskGather, AShortReadAfterOpeningNamesTheFileAndOffset) {
  const at::Tensor table = at::randn({100, 1024});
  testing::TempDirectory dir;
  const std::string path = testing::npy_table_file(dir, table, 4096);
  for (const disk::Backend backend : backends_here()) {
    disk::RowFileOptions options;
    options.backend = backend;
    const FeatureStore store = FeatureStore::on_disk(load_npy(path), path, options);
    ASSERT_EQ(truncate(path.c_str(), 4096 + 50 * 4096), 0);
    EXPECT_TRUE(store.gather(at::tensor({3, 49}, at::kLong))
                    .equal(table.index_select(0, at::tensor({3, 49}, at::kLong))));
    // Row 70 starts at byte 4096 + 70 * 4096, past the new end of the file.
    EXPECT_ERROR_CONTAINS(store.gather(at::tensor({3, 70}, at::kLong)),
                          path + ": short read at offset " + std::to_string(4096 + 70 * 4096) +
                              ": wanted 4096 bytes, got 0");
    ASSERT_EQ(truncate(path.c_str(), 4096 + 100 * 4096), 0);
  }
}

// A cache of none, some or all rows serves exactly what the file serves; hits come from RAM and
// only misses reach the file.
TEST(DiskCache, GathersWhatTheHostGathersWithAnyShareCached) {
  const int64_t rows = 600;
  for (const at::ScalarType dtype : {at::kFloat, at::kHalf}) {
    const at::Tensor table = at::randn({rows, 100}).to(dtype);
    testing::TempDirectory dir;
    const std::string path = testing::npy_table_file(dir, table, 64);
    const FeatureStore host(table);
    const int64_t row_bytes = 100 * table.element_size();
    for (const int64_t cached : {int64_t{0}, int64_t{1}, int64_t{250}, rows}) {
      FeatureStore store = FeatureStore::on_disk(load_npy(path), path, {});
      // Hot rows: every third id from the end, so the cache is neither a prefix nor sorted.
      const at::Tensor ranked =
          at::cat({at::arange(rows - 1, -1, -3, at::kLong), at::arange(rows - 2, -1, -3, at::kLong),
                   at::arange(rows - 3, -1, -3, at::kLong)});
      store.cache_hot_rows(ranked, cached * row_bytes + row_bytes / 2);  // a half row: no row
      const disk::RowCache& cache = *store.row_cache();
      ASSERT_EQ(cache.rows(), cached);
      EXPECT_EQ(cache.contains(rows - 1), cached > 0);
      EXPECT_EQ(cache.contains(rows - 2), cached > rows / 3);  // the second run of ids
      const disk::RowFile::Counters before = store.row_file()->counters();
      int64_t requested = 0, hits = 0;
      for (const at::ScalarType id_type : {at::kInt, at::kLong}) {
        const at::Tensor ids = awkward_ids(rows, id_type);
        EXPECT_TRUE(store.gather(ids).equal(host.gather(ids))) << cached << " " << id_type;
        requested += ids.numel();
        for (int64_t i = 0; i < ids.numel(); ++i) hits += cache.contains(ids[i].item<int64_t>());
      }
      EXPECT_EQ(cache.counters().rows_requested, requested);
      EXPECT_EQ(cache.counters().rows_hit, hits);
      EXPECT_EQ(store.row_file()->counters().rows_requested - before.rows_requested,
                requested - hits);
    }
  }
}

TEST(DiskCache, RefusesOtherPlacementsAndBadRankings) {
  const at::Tensor table = at::randn({50, 8});
  FeatureStore host(table);
  EXPECT_ERROR_CONTAINS(host.cache_hot_rows(at::arange(50, at::kLong), 1 << 20),
                        "feature_cache_gib: the cache keeps rows of a table read from disk; the "
                        "table is host: set features to disk");
  testing::TempDirectory dir;
  const std::string path = testing::npy_table_file(dir, table, 64);
  FeatureStore store = FeatureStore::on_disk(load_npy(path), path, {});
  EXPECT_ERROR_CONTAINS(store.cache_hot_rows(at::tensor({3, 3}, at::kLong), 1 << 20),
                        "the ranking holds id 3 twice or outside the table's rows");
  EXPECT_ERROR_CONTAINS(store.cache_hot_rows(at::tensor({50}, at::kLong), 1 << 20),
                        "the ranking holds id 50 twice or outside the table's rows");
  EXPECT_EQ(disk::parse_cache_ranking("degree"), disk::CacheRanking::kDegree);
  EXPECT_ERROR_CONTAINS(disk::parse_cache_ranking("lru"),
                        "feature_cache_rank: 'lru' is not a ranking");
}

TEST(DiskGather, BackendNamesParse) {
  EXPECT_EQ(disk::parse_backend("pread"), disk::Backend::kPread);
  EXPECT_EQ(disk::parse_backend("io_uring"), disk::Backend::kIoUring);
  EXPECT_ERROR_CONTAINS(disk::parse_backend("aio"), "disk_io: 'aio' is not a disk reader");
  EXPECT_EQ(parse_placement("disk"), Placement::kDisk);
}

}  // namespace
}  // namespace directgnn
