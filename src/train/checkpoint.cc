#include "train/checkpoint.h"

#include <ATen/ATen.h>
#include <ATen/CPUGeneratorImpl.h>
#include <torch/optim/optimizer.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>
#include <zlib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include "core/atomic_file.h"
#include "directgnn/error.h"
#include "nn/model.h"

namespace directgnn {
namespace fs = std::filesystem;
namespace {

constexpr char kMagic[8] = {'D', 'G', 'N', 'N', 'C', 'K', 'P', 'T'};
constexpr uint32_t kContainerVersion = 1;

std::string checkpoint_path(const std::string& dir) { return dir + "/checkpoint.pt"; }

uint32_t crc_of(std::string_view bytes) {
  uLong crc = crc32(0L, Z_NULL, 0);
  for (size_t done = 0; done < bytes.size();) {
    const size_t chunk = std::min<size_t>(bytes.size() - done, size_t{1} << 30);
    crc = crc32(crc, reinterpret_cast<const Bytef*>(bytes.data() + done), static_cast<uInt>(chunk));
    done += chunk;
  }
  return static_cast<uint32_t>(crc);
}

void put_le(std::string& out, uint64_t value, int bytes) {
  for (int i = 0; i < bytes; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

uint64_t get_le(const char* p, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; ++i) value |= uint64_t{static_cast<uint8_t>(p[i])} << (8 * i);
  return value;
}

void ensure_directory(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) fail("cannot create checkpoint directory ", dir, ": ", ec.message());
}

// Temporaries left by a process killed mid-write (AtomicFile removes its own otherwise).
void remove_stale_temporaries(const std::string& dir) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    for (const char* base : {"checkpoint.pt.tmp-", "state.pt.tmp-", "meta.json.tmp-"}) {
      if (name.rfind(base, 0) == 0) fs::remove(entry.path(), ec);
    }
  }
}

void write_archive(const std::string& path, torch::serialize::OutputArchive& archive) {
  std::ostringstream buffer;
  archive.save_to(buffer);
  write_checksummed_file(path, buffer.str());
}

// Tensors are loaded onto `device` (checkpoints of GPU runs load on the CPU, and back).
torch::serialize::InputArchive open_archive(const std::string& path, const std::string& hint,
                                            c10::Device device = c10::Device(c10::kCPU)) {
  if (!fs::exists(path)) fail_io(path, ": no checkpoint here (", hint, ")");
  const std::string payload = read_checksummed_file(path);
  torch::serialize::InputArchive archive;
  try {
    archive.load_from(payload.data(), payload.size(), device);
  } catch (const std::exception& e) {
    fail_io(path, ": cannot read the checkpoint (corrupt or from another program): ",
            std::string(e.what()).substr(0, 200));
  }
  return archive;
}

nlohmann::json read_meta(torch::serialize::InputArchive& archive, const std::string& path) {
  c10::IValue meta;
  if (!archive.try_read("meta", meta) || !meta.isString()) {
    fail(path, ": checkpoint has no description (not written by directgnn)");
  }
  try {
    return nlohmann::json::parse(meta.toStringRef());
  } catch (const nlohmann::json::exception& e) {
    fail(path, ": checkpoint description is not valid JSON: ", e.what());
  }
}

torch::serialize::OutputArchive archive_of(torch::nn::Module& model,
                                           torch::optim::Optimizer& optimizer,
                                           const nlohmann::json& meta) {
  torch::serialize::OutputArchive archive, model_archive, optimizer_archive;
  model.save(model_archive);
  optimizer.save(optimizer_archive);
  archive.write("model", model_archive);
  archive.write("optimizer", optimizer_archive);
  archive.write("meta", c10::IValue(meta.dump()));
  return archive;
}

void load_model_and_optimizer(torch::serialize::InputArchive& archive, const std::string& path,
                              torch::nn::Module& model, torch::optim::Optimizer* optimizer) {
  // Module::load replaces tensors whatever their shape, so shapes are compared here.
  std::vector<std::pair<std::string, std::vector<int64_t>>> expected;
  for (const auto& item : model.named_parameters()) {
    expected.emplace_back(item.key(), item.value().sizes().vec());
  }
  try {
    torch::serialize::InputArchive model_archive;
    archive.read("model", model_archive);
    model.load(model_archive);
    for (const auto& [name, shape] : expected) {
      const auto loaded = model.named_parameters()[name].sizes().vec();
      DGNN_CHECK(loaded == shape, path,
                 ": checkpoint does not match the model it describes: parameter ", name,
                 " has shape ", c10::IntArrayRef(loaded), ", the model needs ",
                 c10::IntArrayRef(shape));
    }
    if (optimizer != nullptr) {
      torch::serialize::InputArchive optimizer_archive;
      archive.read("optimizer", optimizer_archive);
      optimizer->load(optimizer_archive);
    }
  } catch (const c10::Error& e) {
    fail(path, ": checkpoint does not match the model it describes: ",
         std::string(e.what_without_backtrace()).substr(0, 300));
  }
}

}  // namespace

std::string parameter_digest(const std::vector<at::Tensor>& params) {
  uLong crc = crc32(0L, Z_NULL, 0);
  for (const at::Tensor& p : params) {
    // Parameters trained on a GPU live there: the host reads a CPU copy.
    const at::Tensor c = p.detach().cpu().contiguous();
    crc = crc32(crc, static_cast<const Bytef*>(c.data_ptr()), static_cast<uInt>(c.nbytes()));
  }
  char text[16];
  std::snprintf(text, sizeof text, "%08lx", static_cast<unsigned long>(crc));
  return text;
}

void write_checksummed_file(const std::string& path, std::string_view payload) {
  std::string header(kMagic, sizeof kMagic);
  put_le(header, kContainerVersion, 4);
  put_le(header, crc_of(payload), 4);
  put_le(header, payload.size(), 8);
  write_file_atomic(path, {header, payload});
}

std::string read_checksummed_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail_io(path, ": cannot open (", std::strerror(errno), ")");
  std::string header(kCheckpointHeaderBytes, '\0');
  in.read(header.data(), static_cast<std::streamsize>(header.size()));
  if (in.gcount() != static_cast<std::streamsize>(header.size()) ||
      header.compare(0, sizeof kMagic, kMagic, sizeof kMagic) != 0) {
    fail(path,
         ": not a directgnn checkpoint (no DGNNCKPT header; files from before checksums "
         "were added cannot be read: train again)");
  }
  const uint64_t version = get_le(header.data() + 8, 4);
  DGNN_CHECK(version == kContainerVersion, path, ": checkpoint format version ", version,
             " is not supported (this build reads version ", kContainerVersion, ")");
  const auto crc = static_cast<uint32_t>(get_le(header.data() + 12, 4));
  const uint64_t size = get_le(header.data() + 16, 8);
  std::error_code ec;
  const uint64_t file_size = fs::file_size(path, ec);
  DGNN_CHECK(!ec && file_size == size + kCheckpointHeaderBytes, path, ": checkpoint is ",
             ec ? 0 : file_size, " bytes but its header says ", size + kCheckpointHeaderBytes,
             " (truncated or damaged); use an earlier copy or train again");
  std::string payload(size, '\0');
  in.read(payload.data(), static_cast<std::streamsize>(size));
  DGNN_CHECK(static_cast<uint64_t>(in.gcount()) == size, path, ": read failed");
  DGNN_CHECK(crc_of(payload) == crc, path,
             ": checksum mismatch (the file is damaged); use an earlier copy or train again");
  return payload;
}

void save_checkpoint(const std::string& dir, torch::nn::Module& model,
                     torch::optim::Optimizer& optimizer, const nlohmann::json& meta) {
  ensure_directory(dir);
  remove_stale_temporaries(dir);
  torch::serialize::OutputArchive archive = archive_of(model, optimizer, meta);
  write_archive(checkpoint_path(dir), archive);
  write_file_atomic(dir + "/meta.json", meta.dump(2) + "\n");
}

nlohmann::json read_checkpoint_meta(const std::string& dir) {
  const std::string path = checkpoint_path(dir);
  torch::serialize::InputArchive archive =
      open_archive(path, "train with this checkpoint directory first");
  return read_meta(archive, path);
}

void load_checkpoint(const std::string& dir, torch::nn::Module& model,
                     torch::optim::Optimizer* optimizer) {
  const std::string path = checkpoint_path(dir);
  torch::serialize::InputArchive archive =
      open_archive(path, "train with this checkpoint directory first");
  load_model_and_optimizer(archive, path, model, optimizer);
}

std::string training_state_path(const std::string& dir) { return dir + "/state.pt"; }

bool has_training_state(const std::string& dir) { return fs::exists(training_state_path(dir)); }

void save_training_state(const std::string& dir, torch::nn::Module& model,
                         torch::optim::Optimizer& optimizer, const nlohmann::json& state) {
  ensure_directory(dir);
  remove_stale_temporaries(dir);
  torch::serialize::OutputArchive archive = archive_of(model, optimizer, state);
  at::Generator generator = at::detail::getDefaultCPUGenerator();
  {
    std::lock_guard<std::mutex> lock(generator.mutex());
    archive.write("rng_cpu", generator.get_state());
  }
  write_archive(training_state_path(dir), archive);
}

nlohmann::json read_training_state(const std::string& dir) {
  const std::string path = training_state_path(dir);
  torch::serialize::InputArchive archive = open_archive(
      path, "a run saves its state here when interrupted, or every checkpoint_every steps");
  return read_meta(archive, path);
}

void load_training_state(const std::string& dir, torch::nn::Module& model,
                         torch::optim::Optimizer& optimizer) {
  const std::string path = training_state_path(dir);
  const std::vector<at::Tensor> params = model.parameters();
  const c10::Device device = params.empty() ? c10::Device(c10::kCPU) : params[0].device();
  torch::serialize::InputArchive archive =
      open_archive(path, "no training state to resume", device);
  load_model_and_optimizer(archive, path, model, &optimizer);
  at::Tensor rng;
  DGNN_CHECK(archive.try_read("rng_cpu", rng, /*is_buffer=*/false), path,
             ": the training state has no random generator state");
  at::Generator generator = at::detail::getDefaultCPUGenerator();
  std::lock_guard<std::mutex> lock(generator.mutex());
  try {
    generator.set_state(rng.cpu());
  } catch (const c10::Error& e) {
    fail(path, ": the random generator state is invalid: ",
         std::string(e.what_without_backtrace()).substr(0, 200));
  }
}

}  // namespace directgnn
