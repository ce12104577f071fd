#include "io/npz.h"

#include <ATen/ATen.h>
#include <zlib.h>

#include <algorithm>
#include <fstream>

#include "io/dataset.h"
#include "io/npy.h"
#include "test_util.h"

namespace directgnn {
namespace {

struct Member {
  std::string name;
  std::string data;
  bool deflate = false;
};

void put16(std::string& s, uint32_t v) {
  s += static_cast<char>(v & 0xff);
  s += static_cast<char>((v >> 8) & 0xff);
}
void put32(std::string& s, uint32_t v) {
  put16(s, v & 0xffff);
  put16(s, v >> 16);
}
void put64(std::string& s, uint64_t v) {
  put32(s, static_cast<uint32_t>(v));
  put32(s, static_cast<uint32_t>(v >> 32));
}

std::string raw_deflate(const std::string& in) {
  z_stream z{};
  deflateInit2(&z, 6, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, in.size()), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in = static_cast<uInt>(in.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

// A zip archive built by hand; with `zip64` the sizes live in zip64 extra fields and a
// zip64 end record is written, as numpy's savez_compressed does.
std::string make_zip(const std::vector<Member>& members, bool zip64) {
  std::string body, central;
  for (const Member& m : members) {
    const std::string payload = m.deflate ? raw_deflate(m.data) : m.data;
    const uint32_t crc = crc32(0, reinterpret_cast<const Bytef*>(m.data.data()), m.data.size());
    std::string extra;
    if (zip64) {
      put16(extra, 1);
      put16(extra, 16);
      put64(extra, m.data.size());
      put64(extra, payload.size());
    }
    const uint32_t offset = static_cast<uint32_t>(body.size());
    put32(body, 0x04034b50);
    put16(body, 45);
    put16(body, 0);
    put16(body, m.deflate ? 8 : 0);
    put32(body, 0);
    put32(body, crc);
    put32(body, zip64 ? 0xffffffffu : payload.size());
    put32(body, zip64 ? 0xffffffffu : m.data.size());
    put16(body, m.name.size());
    put16(body, extra.size());
    body += m.name + extra + payload;
    put32(central, 0x02014b50);
    put16(central, 45);
    put16(central, 45);
    put16(central, 0);
    put16(central, m.deflate ? 8 : 0);
    put32(central, 0);
    put32(central, crc);
    put32(central, zip64 ? 0xffffffffu : payload.size());
    put32(central, zip64 ? 0xffffffffu : m.data.size());
    put16(central, m.name.size());
    put16(central, extra.size());
    put16(central, 0);
    put16(central, 0);
    put16(central, 0);
    put32(central, 0);
    put32(central, offset);
    central += m.name + extra;
  }
  std::string out = body + central;
  if (zip64) {
    const uint64_t record = out.size();
    put32(out, 0x06064b50);
    put64(out, 44);
    put16(out, 45);
    put16(out, 45);
    put32(out, 0);
    put32(out, 0);
    put64(out, members.size());
    put64(out, members.size());
    put64(out, central.size());
    put64(out, body.size());
    put32(out, 0x07064b50);
    put32(out, 0);
    put64(out, record);
    put32(out, 1);
  }
  put32(out, 0x06054b50);
  put16(out, 0);
  put16(out, 0);
  put16(out, zip64 ? 0xffff : members.size());
  put16(out, zip64 ? 0xffff : members.size());
  put32(out, zip64 ? 0xffffffffu : central.size());
  put32(out, zip64 ? 0xffffffffu : body.size());
  put16(out, 0);
  return out;
}

std::string npy_bytes(const at::Tensor& t) {
  return npy_header_for(t) + std::string(static_cast<const char*>(t.data_ptr()), t.nbytes());
}

NpzFile open(const std::string& bytes) {
  auto owner = std::make_shared<std::string>(bytes);
  return NpzFile(owner, reinterpret_cast<const uint8_t*>(owner->data()), owner->size(), "mem.npz");
}

class NpzLayouts : public ::testing::TestWithParam<std::tuple<bool, bool>> {};

TEST_P(NpzLayouts, StoredAndDeflatedMembersWithAndWithoutZip64) {
  const auto [deflate, zip64] = GetParam();
  const at::Tensor a = at::arange(100, at::kLong).view({10, 10});
  const at::Tensor b = at::rand({33});
  const NpzFile npz = open(make_zip({{"a.npy", npy_bytes(a), deflate},
                                     {"b.npy", npy_bytes(b), deflate},
                                     {"names.npy", "\x93NUMPY not needed", false}},
                                    zip64));
  EXPECT_EQ(npz.keys(), (std::vector<std::string>{"a", "b", "names"}));
  EXPECT_TRUE(npz.get("a").equal(a));
  EXPECT_TRUE(npz.get("b").equal(b));
}

INSTANTIATE_TEST_SUITE_P(All, NpzLayouts, ::testing::Combine(::testing::Bool(), ::testing::Bool()));

TEST(Npz, CorruptArchivesGiveClearErrors) {
  const std::string good = make_zip({{"a.npy", npy_bytes(at::rand({50})), true}}, false);
  EXPECT_ERROR_CONTAINS(open(good).get("missing"), "has no array 'missing'");
  EXPECT_ERROR_CONTAINS(open(good.substr(0, good.size() - 30)), "end-of-central-directory");
  EXPECT_ERROR_CONTAINS(open("tiny"), "too short");
  std::string flipped = good;
  flipped[40] ^= 0x55;  // inside the DEFLATE stream
  try {
    open(flipped).get("a");
    ADD_FAILURE() << "corrupt member was accepted";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_TRUE(msg.find("CRC-32") != std::string::npos || msg.find("DEFLATE") != std::string::npos)
        << msg;
  }
  std::string stored = make_zip({{"a.npy", npy_bytes(at::rand({50})), false}}, false);
  stored[100] ^= 0x01;
  EXPECT_ERROR_CONTAINS(open(stored).get("a"), "CRC-32");
}

TEST(Npz, ObjectMembersAreRefused) {
  const std::string dict = "{'descr': '|O', 'fortran_order': False, 'shape': (1,), }";
  std::string npy = "\x93NUMPY\x01";
  npy += '\0';
  npy += static_cast<char>(dict.size());
  npy += '\0';
  npy += dict + "12345678";
  EXPECT_ERROR_CONTAINS(open(make_zip({{"o.npy", npy, false}}, false)).get("o"), "pickled");
}

// A 4-node path 0-1-2-3 in the adj_matrix.* variant of the gnn-benchmark layout, with sparse
// attr_matrix.* features unless `dense`, and labels under `label_key`.
std::vector<Member> matrix_layout(bool dense, const std::string& label_key) {
  auto npy = [](const at::Tensor& t) { return npy_bytes(t); };
  std::vector<Member> m = {
      {"adj_matrix.data.npy", npy(at::ones({3}))},
      {"adj_matrix.indices.npy", npy(at::tensor({1, 2, 3}, at::kInt))},
      {"adj_matrix.indptr.npy", npy(at::tensor({0, 1, 2, 3, 3}, at::kInt))},
      {"adj_matrix.shape.npy", npy(at::tensor({int64_t{4}, int64_t{4}}))},
      {label_key + ".npy", npy(at::tensor({0, 1, 1, 0}, at::kLong))},
  };
  if (dense) {
    m.push_back({"attr_matrix.npy", npy(at::eye(4, at::kDouble)), true});
  } else {
    m.push_back({"attr_matrix.data.npy", npy(at::tensor({1.f, 2.f, 3.f}))});
    m.push_back({"attr_matrix.indices.npy", npy(at::tensor({0, 1, 2}, at::kInt))});
    m.push_back({"attr_matrix.indptr.npy", npy(at::tensor({0, 1, 1, 2, 3}, at::kInt))});
    m.push_back({"attr_matrix.shape.npy", npy(at::tensor({int64_t{4}, int64_t{3}}))});
  }
  return m;
}

// A .npy of unicode strings (dtype <U`width`, UTF-32 with NUL padding), as numpy writes them.
std::string unicode_npy(const std::vector<std::u32string>& strings, size_t width) {
  std::string dict = "{'descr': '<U" + std::to_string(width) +
                     "', 'fortran_order': False, 'shape': (" + std::to_string(strings.size()) +
                     ",), }";
  while ((10 + dict.size() + 1) % 64 != 0) dict += ' ';
  dict += '\n';
  std::string out = std::string("\x93NUMPY\x01\x00", 8);
  put16(out, static_cast<uint32_t>(dict.size()));
  out += dict;
  for (const std::u32string& s : strings) {
    for (size_t c = 0; c < width; ++c) put32(out, c < s.size() ? s[c] : 0);
  }
  return out;
}

void write_npz(const std::string& path, const std::vector<Member>& members) {
  std::ofstream(path, std::ios::binary) << make_zip(members, false);
}

TEST(NpzImport, AdjMatrixVariantWithSparseOrDenseFeatures) {
  testing::TempDirectory tmp;
  write_npz(tmp.file("sparse.npz"), matrix_layout(false, "label"));
  const Dataset s = load_dataset(tmp.file("sparse.npz"));
  EXPECT_EQ(s.num_nodes(), 4);
  EXPECT_EQ(s.graph.num_edges(), 6);  // symmetrised
  // Each undirected edge stored once lands in both lists: every node receives from both sides.
  at::Tensor dense = at::zeros({4, 4}, at::kLong);
  const at::Tensor rows = at::repeat_interleave(s.graph.degrees());
  dense.index_put_({rows, s.graph.indices.to(at::kLong)}, at::ones({rows.numel()}, at::kLong));
  EXPECT_TRUE(dense.equal(dense.t())) << dense;
  EXPECT_TRUE(s.features.equal(
      at::tensor({1.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 2.f, 0.f, 0.f, 0.f, 3.f}).view({4, 3})));
  EXPECT_TRUE(s.labels.equal(at::tensor({0, 1, 1, 0}, at::kLong)));
  write_npz(tmp.file("dense.npz"), matrix_layout(true, "labels"));
  const Dataset d = load_dataset(tmp.file("dense.npz"));
  EXPECT_EQ(d.feat_dim(), 4);
  EXPECT_EQ(d.features.scalar_type(), at::kFloat);
  EXPECT_EQ(d.num_classes, 2);
  EXPECT_TRUE(d.class_names.empty());
}

TEST(NpzImport, ClassNamesAreReadWhenThereIsOnePerClass) {
  testing::TempDirectory tmp;
  std::vector<Member> m = matrix_layout(false, "labels");
  m.push_back({"class_names.npy", unicode_npy({U"Theory", U"Zo\u00eb \u56fe"}, 7), true});
  write_npz(tmp.file("g.npz"), m);
  EXPECT_EQ(load_dataset(tmp.file("g.npz")).class_names,
            (std::vector<std::string>{"Theory", "Zo\xC3\xAB \xE5\x9B\xBE"}));
  m.back() = {"class_names.npy", unicode_npy({U"only one"}, 8)};
  write_npz(tmp.file("g.npz"), m);
  EXPECT_TRUE(load_dataset(tmp.file("g.npz")).class_names.empty());
  const std::string npy = unicode_npy({U"a", U"bc"}, 2);
  const auto* bytes = reinterpret_cast<const uint8_t*>(npy.data());
  EXPECT_EQ(npy_strings(bytes, npy.size(), "s.npy"), (std::vector<std::string>{"a", "bc"}));
  EXPECT_ERROR_CONTAINS(npy_strings(bytes, npy.size() - 4, "s.npy"), "s.npy: truncated");
  const std::string numbers = npy_bytes(at::ones({2}));
  EXPECT_ERROR_CONTAINS(
      npy_strings(reinterpret_cast<const uint8_t*>(numbers.data()), numbers.size(), "n.npy"),
      "expected a 1-D array of strings (dtype <U)");
}

TEST(NpzImport, AdjMatrixVariantErrorsNameTheArray) {
  testing::TempDirectory tmp;
  auto without = [&](const std::string& name, std::vector<Member> m) {
    m.erase(std::remove_if(m.begin(), m.end(), [&](const Member& x) { return x.name == name; }),
            m.end());
    write_npz(tmp.file("g.npz"), m);
    return tmp.file("g.npz");
  };
  EXPECT_ERROR_CONTAINS(
      load_dataset(without("adj_matrix.shape.npy", matrix_layout(false, "labels"))),
      "g.npz: gnn-benchmark (adj_matrix.*) layout without 'adj_matrix.shape'");
  EXPECT_ERROR_CONTAINS(
      load_dataset(without("attr_matrix.indices.npy", matrix_layout(false, "labels"))),
      "layout without features: missing 'attr_matrix.indices' (or a dense 'attr_matrix')");
  EXPECT_ERROR_CONTAINS(load_dataset(without("labels.npy", matrix_layout(false, "labels"))),
                        "layout without labels (an array named 'labels' or 'label'");
  std::vector<Member> bad = matrix_layout(false, "labels");
  bad[2] = {"adj_matrix.indptr.npy", npy_bytes(at::tensor({0, 1, 2}, at::kInt))};
  write_npz(tmp.file("g.npz"), bad);
  EXPECT_ERROR_CONTAINS(load_dataset(tmp.file("g.npz")),
                        "adj_matrix.indptr has 3 entries but adj_matrix.shape says 4 rows");
  write_npz(tmp.file("g.npz"), {{"x.npy", npy_bytes(at::ones({2}))}});
  EXPECT_ERROR_CONTAINS(load_dataset(tmp.file("g.npz")), "unrecognised .npz layout (arrays: x)");
}

TEST(Npz, BundledCoraParses) {
  REQUIRE_DATASET(path, "cora.npz");
  const NpzFile npz(path);
  EXPECT_EQ(npz.get("adj_indptr").numel(), 2709);
  EXPECT_EQ(npz.get("adj_indices").numel(), 5429);
  EXPECT_EQ(npz.get("attr_data").numel(), 49216);
  EXPECT_EQ(npz.get("labels").scalar_type(), at::kChar);
  EXPECT_EQ(npz.get_strings("class_names").front(), "Case_Based");
  EXPECT_EQ(load_dataset(path).class_names.back(), "Theory");
}

TEST(Npz, BundledTolokersParses) {
  REQUIRE_DATASET(path, "tolokers.npz");
  const NpzFile npz(path);
  EXPECT_EQ(npz.get("node_features").sizes(), (std::vector<int64_t>{11758, 10}));
  EXPECT_EQ(npz.get("edges").sizes(), (std::vector<int64_t>{519000, 2}));
  EXPECT_EQ(npz.get("train_masks").sizes(), (std::vector<int64_t>{10, 11758}));
  EXPECT_EQ(npz.get("node_labels").sum().item<int64_t>(), 2566);
}

}  // namespace
}  // namespace directgnn
