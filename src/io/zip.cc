#include "io/zip.h"

#include <zlib.h>

#include <algorithm>
#include <cstring>
#include <limits>

#include "directgnn/error.h"

namespace directgnn {
namespace {

constexpr uint32_t kEndOfCentralDir = 0x06054b50;
constexpr uint32_t kZip64Locator = 0x07064b50;
constexpr uint32_t kZip64EndOfCentralDir = 0x06064b50;
constexpr uint32_t kCentralHeader = 0x02014b50;
constexpr uint32_t kLocalHeader = 0x04034b50;
constexpr size_t kCentralHeaderSize = 46;
constexpr size_t kLocalHeaderSize = 30;
constexpr size_t kEndRecordSize = 22;

uint16_t u16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
uint32_t u32(const uint8_t* p) { return u16(p) | (static_cast<uint32_t>(u16(p + 2)) << 16); }
uint64_t u64(const uint8_t* p) { return u32(p) | (static_cast<uint64_t>(u32(p + 4)) << 32); }

}  // namespace

ZipArchive::ZipArchive(std::shared_ptr<const void> owner, const uint8_t* data, size_t size,
                       std::string where)
    : owner_(std::move(owner)), data_(data), size_(size), where_(std::move(where)) {
  parse_central_directory();
}

void ZipArchive::parse_central_directory() {
  auto corrupt = [&](const std::string& what) {
    fail(where_, ": not a valid zip/.npz archive: ", what,
         " (the file may be truncated; re-create it with numpy.savez)");
  };
  if (size_ < kEndRecordSize) corrupt("file is too short for a zip end record");
  // The end record sits at the very end, followed only by a comment of at most 64 KiB.
  const size_t lowest = size_ > kEndRecordSize + 0xffff ? size_ - kEndRecordSize - 0xffff : 0;
  size_t eocd = std::numeric_limits<size_t>::max();
  for (size_t pos = size_ - kEndRecordSize + 1; pos-- > lowest;) {
    if (u32(data_ + pos) == kEndOfCentralDir) {
      eocd = pos;
      break;
    }
  }
  if (eocd == std::numeric_limits<size_t>::max()) corrupt("no end-of-central-directory record");
  if (u16(data_ + eocd + 4) != 0 || u16(data_ + eocd + 6) != 0) {
    fail(where_, ": multi-disk zip archives are not supported");
  }
  uint64_t count = u16(data_ + eocd + 10);
  uint64_t cd_size = u32(data_ + eocd + 12);
  uint64_t cd_offset = u32(data_ + eocd + 16);
  if (eocd >= 20 && u32(data_ + eocd - 20) == kZip64Locator) {
    const uint64_t record = u64(data_ + eocd - 20 + 8);
    if (record > size_ || size_ - record < 56 || u32(data_ + record) != kZip64EndOfCentralDir) {
      corrupt("bad zip64 end-of-central-directory record");
    }
    count = u64(data_ + record + 32);
    cd_size = u64(data_ + record + 40);
    cd_offset = u64(data_ + record + 48);
  }
  if (cd_offset > size_ || cd_size > size_ - cd_offset) corrupt("central directory out of bounds");
  // Each central header takes at least 46 bytes, which bounds a lying entry count.
  if (count > cd_size / kCentralHeaderSize) corrupt("entry count does not fit the directory");
  entries_.reserve(count);
  size_t pos = cd_offset;
  const size_t end = cd_offset + cd_size;
  for (uint64_t i = 0; i < count; ++i) {
    if (end - pos < kCentralHeaderSize || u32(data_ + pos) != kCentralHeader) {
      corrupt("bad central directory header for entry " + std::to_string(i));
    }
    const uint8_t* h = data_ + pos;
    ZipEntry entry;
    const uint16_t flags = u16(h + 8);
    entry.method = u16(h + 10);
    entry.crc32 = u32(h + 16);
    entry.compressed_size = u32(h + 20);
    entry.uncompressed_size = u32(h + 24);
    const size_t name_len = u16(h + 28), extra_len = u16(h + 30), comment_len = u16(h + 32);
    entry.local_header_offset = u32(h + 42);
    if (end - pos - kCentralHeaderSize < name_len + extra_len + comment_len) {
      corrupt("central directory entry " + std::to_string(i) + " overruns the directory");
    }
    entry.name.assign(reinterpret_cast<const char*>(h + kCentralHeaderSize), name_len);
    if (flags & 1)
      fail(where_, ": member '", entry.name, "' is encrypted; encryption is not supported");
    // Zip64 extra field: the 64-bit values appear only for the fields saturated above.
    const uint8_t* extra = h + kCentralHeaderSize + name_len;
    for (size_t off = 0; off + 4 <= extra_len;) {
      const uint16_t id = u16(extra + off);
      const uint16_t len = u16(extra + off + 2);
      if (off + 4 + len > extra_len) corrupt("extra field of '" + entry.name + "' overruns");
      if (id == 0x0001) {
        const uint8_t* field = extra + off + 4;
        size_t used = 0;
        auto take = [&](uint64_t& value) {
          if (used + 8 > len) corrupt("short zip64 extra field in '" + entry.name + "'");
          value = u64(field + used);
          used += 8;
        };
        if (entry.uncompressed_size == 0xffffffffu) take(entry.uncompressed_size);
        if (entry.compressed_size == 0xffffffffu) take(entry.compressed_size);
        if (entry.local_header_offset == 0xffffffffu) take(entry.local_header_offset);
      }
      off += 4 + len;
    }
    entries_.push_back(std::move(entry));
    pos += kCentralHeaderSize + name_len + extra_len + comment_len;
  }
}

const ZipEntry* ZipArchive::find(const std::string& name) const {
  for (const auto& entry : entries_) {
    if (entry.name == name) return &entry;
  }
  return nullptr;
}

ZipMember ZipArchive::read(const ZipEntry& entry) const {
  const std::string what = where_ + ": member '" + entry.name + "'";
  const uint64_t off = entry.local_header_offset;
  if (off > size_ || size_ - off < kLocalHeaderSize || u32(data_ + off) != kLocalHeader) {
    fail(what, ": bad local header (the archive is corrupt or truncated)");
  }
  const uint64_t start = off + kLocalHeaderSize + u16(data_ + off + 26) + u16(data_ + off + 28);
  if (start > size_ || entry.compressed_size > size_ - start) {
    fail(what, ": data runs past the end of the file (the archive is truncated)");
  }
  const uint8_t* src = data_ + start;
  ZipMember member;
  if (entry.method == 0) {
    if (entry.compressed_size != entry.uncompressed_size) {
      fail(what, ": stored member with differing sizes (the archive is corrupt)");
    }
    member.owner = owner_;
    member.data = src;
    member.size = entry.compressed_size;
  } else if (entry.method == 8) {
    if (entry.uncompressed_size > (uint64_t{1} << 46)) fail(what, ": implausible size");
    // Inflated data is bounded by the DEFLATE limit of ~1032:1; refuse sizes beyond it.
    if (entry.uncompressed_size / 1032 > entry.compressed_size + 1) {
      fail(what, ": uncompressed size is impossible for its compressed size (corrupt archive)");
    }
    std::shared_ptr<uint8_t[]> buffer(new uint8_t[std::max<uint64_t>(entry.uncompressed_size, 1)]);
    z_stream stream{};
    if (inflateInit2(&stream, -MAX_WBITS) != Z_OK) fail(what, ": cannot initialise zlib");
    // avail_in/avail_out are 32-bit: feed at most 1 GiB at a time. Z_BUF_ERROR (no progress
    // possible) ends the loop: the input is truncated or the output would overrun.
    int status = Z_OK;
    while (status == Z_OK) {
      stream.next_in = const_cast<Bytef*>(src + stream.total_in);
      stream.avail_in =
          static_cast<uInt>(std::min<uint64_t>(entry.compressed_size - stream.total_in, 1u << 30));
      stream.next_out = buffer.get() + stream.total_out;
      stream.avail_out = static_cast<uInt>(
          std::min<uint64_t>(entry.uncompressed_size - stream.total_out, 1u << 30));
      status = inflate(&stream, Z_NO_FLUSH);
    }
    const uint64_t out_done = stream.total_out;
    inflateEnd(&stream);
    if (status != Z_STREAM_END || out_done != entry.uncompressed_size) {
      fail(what, ": DEFLATE data is corrupt or truncated (inflated ", out_done, " of ",
           entry.uncompressed_size, " bytes)");
    }
    member.data = buffer.get();
    member.size = entry.uncompressed_size;
    member.owner = std::shared_ptr<const void>(buffer, buffer.get());
  } else {
    fail(what, ": compression method ", entry.method,
         " is not supported (only STORED and DEFLATE; save with numpy.savez or savez_compressed)");
  }
  uLong crc = crc32(0L, Z_NULL, 0);
  for (size_t done = 0; done < member.size;) {
    const size_t chunk = std::min<size_t>(member.size - done, 1u << 30);
    crc = crc32(crc, member.data + done, static_cast<uInt>(chunk));
    done += chunk;
  }
  if (crc != entry.crc32) fail(what, ": CRC-32 mismatch (the archive is corrupt)");
  return member;
}

}  // namespace directgnn
