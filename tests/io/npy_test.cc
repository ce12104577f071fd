#include "io/npy.h"

#include <ATen/ATen.h>

#include <fstream>

#include "test_util.h"

namespace directgnn {
namespace {

using testing::TempDirectory;

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// A hand-made .npy image: magic, version, header dict, then `data`.
std::string npy_image(int version, const std::string& dict, const std::string& data) {
  std::string out = "\x93NUMPY";
  out += static_cast<char>(version);
  out += '\0';
  const size_t len = dict.size();
  out += static_cast<char>(len & 0xff);
  out += static_cast<char>((len >> 8) & 0xff);
  if (version >= 2) {
    out += static_cast<char>((len >> 16) & 0xff);
    out += static_cast<char>((len >> 24) & 0xff);
  }
  return out + dict + data;
}

std::string floats(std::initializer_list<float> values) {
  return std::string(reinterpret_cast<const char*>(std::data(values)),
                     values.size() * sizeof(float));
}

class NpyRoundTrip : public ::testing::TestWithParam<at::ScalarType> {};

TEST_P(NpyRoundTrip, EveryDtypeSurvivesSaveAndLoad) {
  TempDirectory dir;
  const at::Tensor source = (at::rand({7, 5}) * 100).to(GetParam());
  save_npy(dir.file("a.npy"), source);
  const at::Tensor loaded = load_npy(dir.file("a.npy"));
  EXPECT_EQ(loaded.scalar_type(), GetParam());
  EXPECT_EQ(loaded.sizes(), source.sizes());
  EXPECT_TRUE(loaded.equal(source));
}

INSTANTIATE_TEST_SUITE_P(AllDtypes, NpyRoundTrip,
                         ::testing::Values(at::kFloat, at::kHalf, at::kDouble, at::kInt, at::kLong,
                                           at::kChar, at::kByte, at::kBool));

TEST(Npy, OneDimensionalAndEmptyArraysRoundTrip) {
  TempDirectory dir;
  save_npy(dir.file("a.npy"), at::arange(5, at::kLong));
  EXPECT_TRUE(load_npy(dir.file("a.npy")).equal(at::arange(5, at::kLong)));
  save_npy(dir.file("e.npy"), at::empty({0, 3}, at::kFloat));
  EXPECT_EQ(load_npy(dir.file("e.npy")).sizes(), (std::vector<int64_t>{0, 3}));
}

TEST(Npy, ReadsFormatVersionsTwoAndThree) {
  TempDirectory dir;
  for (int version : {2, 3}) {
    const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }\n";
    write_bytes(dir.file("v.npy"), npy_image(version, dict, floats({1.5f, -2.0f})));
    const at::Tensor t = load_npy(dir.file("v.npy"));
    EXPECT_FLOAT_EQ(t[0].item<float>(), 1.5f);
    EXPECT_FLOAT_EQ(t[1].item<float>(), -2.0f);
  }
}

TEST(Npy, LoadMapsTheFileWithoutCopyingAndWritesNeverReachIt) {
  TempDirectory dir;
  save_npy(dir.file("a.npy"), at::ones({1000}, at::kFloat));
  at::Tensor t = load_npy(dir.file("a.npy"));
  t.fill_(3.0f);  // copy-on-write private mapping
  EXPECT_TRUE(load_npy(dir.file("a.npy")).equal(at::ones({1000}, at::kFloat)));
}

TEST(Npy, LoadIntoFillsTheGivenMemoryAfterCheckingTheShape) {
  TempDirectory dir;
  // Over one 64 MiB chunk, so the pages of the first are handed back before the second is read.
  const at::Tensor saved = at::arange(int64_t{17} << 20, at::kFloat).view({-1, 4});
  save_npy(dir.file("t.npy"), saved);
  at::Tensor into = at::zeros_like(saved);
  const void* where = into.data_ptr();
  load_npy_into(dir.file("t.npy"), into);
  EXPECT_EQ(into.data_ptr(), where);
  EXPECT_TRUE(at::equal(into, saved));
  EXPECT_TRUE(at::equal(load_npy(dir.file("t.npy")), saved));  // the file is untouched
  at::Tensor narrow = at::zeros({saved.size(0), 3});
  EXPECT_ERROR_CONTAINS(load_npy_into(dir.file("t.npy"), narrow), "t.npy: has shape");
  EXPECT_TRUE(at::equal(narrow, at::zeros({saved.size(0), 3})));
}

// The process's resident pages of file mappings (/proc/self/status RssFile), in bytes.
int64_t rss_file_bytes() {
  std::ifstream status("/proc/self/status");
  std::string key;
  int64_t kib = -1;
  while (status >> key) {
    if (key == "RssFile:") {
      status >> kib;
      break;
    }
  }
  return kib * 1024;
}

TEST(Npy, ReleasedPagesOfAMappingLeaveMemoryAndReadBackTheSame) {
  TempDirectory dir;
  const at::Tensor saved = at::arange(int64_t{16} << 20, at::kFloat).view({-1, 64});  // 64 MiB
  save_npy(dir.file("t.npy"), saved);
  const at::Tensor mapped = load_npy(dir.file("t.npy"));
  ASSERT_TRUE(at::equal(mapped, saved));  // every page touched
  const int64_t before = rss_file_bytes();
  release_mapped_pages(mapped.narrow(0, 0, mapped.size(0) / 2));
  release_mapped_pages(mapped.narrow(0, mapped.size(0) / 2, mapped.size(0) / 2));
  const int64_t after = rss_file_bytes();
  EXPECT_LT(after, before - (int64_t{48} << 20)) << "RssFile " << before << " -> " << after;
  EXPECT_TRUE(at::equal(mapped, saved)) << "released pages read back from the file";
  // Memory that is no mapping of load_npy's is left alone (MADV_DONTNEED would zero it).
  const at::Tensor own = saved.clone();
  release_mapped_pages(own);
  EXPECT_TRUE(at::equal(own, saved));
}

TEST(Npy, HeaderDataStartsOnA64ByteBoundary) {
  const std::string header = npy_header_for(at::zeros({3, 4}));
  EXPECT_EQ(header.size() % 64, 0u);
  const NpyHeader parsed =
      parse_npy_header(reinterpret_cast<const uint8_t*>(header.data()), header.size(), "x");
  EXPECT_EQ(parsed.descr, "<f4");
  EXPECT_EQ(parsed.shape, (std::vector<int64_t>{3, 4}));
}

// Feature tables: the header is padded with spaces to 4 KiB (numpy loads such files; the
// format allows the padding), and still parses.
TEST(Npy, HeaderCanPadTheDataTo4KiB) {
  const std::string header = npy_header_for(at::kHalf, {1000, 1024}, kNpyDiskAlign);
  EXPECT_EQ(header.size(), 4096u);
  EXPECT_EQ(header.back(), '\n');
  const NpyHeader parsed =
      parse_npy_header(reinterpret_cast<const uint8_t*>(header.data()), header.size(), "x");
  EXPECT_EQ(parsed.descr, "<f2");
  EXPECT_EQ(parsed.shape, (std::vector<int64_t>{1000, 1024}));
  EXPECT_EQ(parsed.data_offset, 4096u);
}

// Inside an uncompressed .npz an array may start at an odd offset: it is copied, and an empty
// one (shape (0, 5)) has nothing to copy (memcpy into an empty tensor's null data was undefined
// behaviour, found by fuzz_npy).
TEST(Npy, AnArrayAtAnOddOffsetIsCopiedAndAnEmptyOneTooWithoutData) {
  for (const auto& [shape, data] : {std::pair{std::string("(0, 5)"), std::string()},
                                    std::pair{std::string("(2,)"), floats({1.5f, -2.0f})}}) {
    const std::string image =
        npy_image(1, "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }\n", data);
    // Placed so that the data (after the header) starts at an address no multiple of 4.
    const size_t header = image.size() - data.size();
    std::string buffer(image.size() + 1, '\0');
    const size_t prefix = (reinterpret_cast<uintptr_t>(buffer.data()) + header) % 4 == 0 ? 1 : 0;
    std::copy(image.begin(), image.end(), buffer.begin() + static_cast<std::ptrdiff_t>(prefix));
    const auto* odd = reinterpret_cast<const uint8_t*>(buffer.data()) + prefix;
    const at::Tensor t = npy_view(nullptr, odd, image.size(), "odd.npy");
    EXPECT_EQ(t.numel(), static_cast<int64_t>(data.size() / 4));
    if (!data.empty()) {
      EXPECT_EQ(t[1].item<float>(), -2.0f);
    }
  }
}

TEST(Npy, BadFilesGiveClearErrors) {
  TempDirectory dir;
  const std::string ok_dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }\n";
  EXPECT_ERROR_CONTAINS(load_npy(dir.file("missing.npy")), "cannot open");
  write_bytes(dir.file("empty.npy"), "");
  EXPECT_ERROR_CONTAINS(load_npy(dir.file("empty.npy")), "empty");
  write_bytes(dir.file("magic.npy"), "PK\x03\x04 not numpy at all");
  EXPECT_ERROR_CONTAINS(load_npy(dir.file("magic.npy")), "not a .npy file");
  write_bytes(dir.file("short.npy"), npy_image(1, ok_dict, floats({1, 2})));
  EXPECT_ERROR_CONTAINS(load_npy(dir.file("short.npy")), "truncated");
  write_bytes(dir.file("header.npy"), npy_image(1, ok_dict, "").substr(0, 30));
  EXPECT_ERROR_CONTAINS(load_npy(dir.file("header.npy")), "truncated .npy header");
  write_bytes(dir.file("obj.npy"),
              npy_image(1, "{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", "12345678"));
  EXPECT_ERROR_CONTAINS(load_npy(dir.file("obj.npy")), "pickled Python objects");
  write_bytes(dir.file("str.npy"),
              npy_image(1, "{'descr': '<U7', 'fortran_order': False, 'shape': (1,), }",
                        std::string(28, 'a')));
  EXPECT_ERROR_CONTAINS(load_npy(dir.file("str.npy")), "strings");
  write_bytes(dir.file("be.npy"),
              npy_image(1, "{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", "abcd"));
  EXPECT_ERROR_CONTAINS(load_npy(dir.file("be.npy")), "big-endian");
  write_bytes(dir.file("f.npy"),
              npy_image(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }",
                        floats({1, 2, 3, 4})));
  EXPECT_ERROR_CONTAINS(load_npy(dir.file("f.npy")), "Fortran order");
  write_bytes(
      dir.file("c.npy"),
      npy_image(1, "{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", "12345678"));
  EXPECT_ERROR_CONTAINS(load_npy(dir.file("c.npy")), "unsupported dtype");
  write_bytes(dir.file("v9.npy"), npy_image(9, ok_dict, floats({1, 2, 3, 4})));
  EXPECT_ERROR_CONTAINS(load_npy(dir.file("v9.npy")), "version 9");
  write_bytes(dir.file("dict.npy"),
              npy_image(1, "{'descr': '<f4', 'shape': (4,) }", floats({1, 2, 3, 4})));
  EXPECT_ERROR_CONTAINS(load_npy(dir.file("dict.npy")), "lacks");
  write_bytes(
      dir.file("huge.npy"),
      npy_image(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904, 8), }",
                ""));
  EXPECT_ERROR_CONTAINS(load_npy(dir.file("huge.npy")), "too large");
}

}  // namespace
}  // namespace directgnn
