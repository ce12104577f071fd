// A reader for zip archives held in memory (a memory-mapped file, or a buffer under test):
// central directory with zip64 records and extra fields, STORED and DEFLATE members, CRC-32
// checked. Enough for NumPy .npz files; encrypted and multi-disk archives are refused.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace directgnn {

struct ZipEntry {
  std::string name;
  uint16_t method = 0;  // 0 = STORED, 8 = DEFLATE
  uint32_t crc32 = 0;
  uint64_t compressed_size = 0;
  uint64_t uncompressed_size = 0;
  uint64_t local_header_offset = 0;
};

// The bytes of one member, and what keeps them alive (the archive's mapping for STORED
// members, a fresh buffer for inflated ones).
struct ZipMember {
  std::shared_ptr<const void> owner;
  const uint8_t* data = nullptr;
  size_t size = 0;
};

class ZipArchive {
 public:
  // `where` names the archive in error messages.
  ZipArchive(std::shared_ptr<const void> owner, const uint8_t* data, size_t size,
             std::string where);

  const std::vector<ZipEntry>& entries() const { return entries_; }
  const ZipEntry* find(const std::string& name) const;
  ZipMember read(const ZipEntry& entry) const;
  const std::string& where() const { return where_; }

 private:
  void parse_central_directory();

  std::shared_ptr<const void> owner_;
  const uint8_t* data_;
  size_t size_;
  std::string where_;
  std::vector<ZipEntry> entries_;
};

}  // namespace directgnn
