#include "io/npz.h"

#include "directgnn/error.h"
#include "io/npy.h"

namespace directgnn {
namespace {

std::string member_name(const std::string& key) { return key + ".npy"; }

}  // namespace

NpzFile::NpzFile(const std::string& path) {
  auto file = std::make_shared<MappedFile>(path);
  const uint8_t* data = file->data();
  const size_t size = file->size();
  zip_ = std::make_unique<ZipArchive>(std::move(file), data, size, path);
}

NpzFile::NpzFile(std::shared_ptr<const void> owner, const uint8_t* data, size_t size,
                 const std::string& where)
    : zip_(std::make_unique<ZipArchive>(std::move(owner), data, size, where)) {}

std::vector<std::string> NpzFile::keys() const {
  std::vector<std::string> out;
  for (const auto& entry : zip_->entries()) {
    const std::string& n = entry.name;
    if (n.size() > 4 && n.compare(n.size() - 4, 4, ".npy") == 0)
      out.push_back(n.substr(0, n.size() - 4));
  }
  return out;
}

bool NpzFile::contains(const std::string& key) const {
  return zip_->find(member_name(key)) != nullptr;
}

at::Tensor NpzFile::get(const std::string& key) const {
  const ZipEntry* entry = zip_->find(member_name(key));
  if (entry == nullptr) fail(zip_->where(), ": has no array '", key, "'");
  ZipMember member = zip_->read(*entry);
  return npy_view(std::move(member.owner), member.data, member.size, zip_->where() + ":" + key);
}

std::vector<std::string> NpzFile::get_strings(const std::string& key) const {
  const ZipEntry* entry = zip_->find(member_name(key));
  if (entry == nullptr) fail(zip_->where(), ": has no array '", key, "'");
  const ZipMember member = zip_->read(*entry);
  return npy_strings(member.data, member.size, zip_->where() + ":" + key);
}

}  // namespace directgnn
