#include "train/checkpoint.h"

#include <torch/optim/optimizer.h>
#include <torch/serialize/input-archive.h>
#include <torch/serialize/output-archive.h>

#include <filesystem>
#include <sstream>

#include "core/atomic_file.h"
#include "directgnn/error.h"
#include "nn/model.h"

namespace directgnn {
namespace {

std::string archive_path(const std::string& dir) { return dir + "/checkpoint.pt"; }

torch::serialize::InputArchive open_archive(const std::string& dir) {
  const std::string path = archive_path(dir);
  if (!std::filesystem::exists(path)) {
    fail(path, ": no checkpoint here (train with --checkpoint ", dir, " first)");
  }
  torch::serialize::InputArchive archive;
  try {
    archive.load_from(path);
  } catch (const std::exception& e) {
    fail(path, ": cannot read the checkpoint (corrupt or from another program): ",
         std::string(e.what()).substr(0, 200));
  }
  return archive;
}

}  // namespace

void save_checkpoint(const std::string& dir, GnnModel& model, torch::optim::Optimizer& optimizer,
                     const nlohmann::json& meta) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) fail("cannot create checkpoint directory ", dir, ": ", ec.message());
  torch::serialize::OutputArchive archive, model_archive, optimizer_archive;
  model.save(model_archive);
  optimizer.save(optimizer_archive);
  archive.write("model", model_archive);
  archive.write("optimizer", optimizer_archive);
  archive.write("meta", c10::IValue(meta.dump()));
  std::ostringstream buffer;
  archive.save_to(buffer);
  write_file_atomic(archive_path(dir), buffer.str());
  write_file_atomic(dir + "/meta.json", meta.dump(2) + "\n");
}

nlohmann::json read_checkpoint_meta(const std::string& dir) {
  torch::serialize::InputArchive archive = open_archive(dir);
  c10::IValue meta;
  if (!archive.try_read("meta", meta) || !meta.isString()) {
    fail(archive_path(dir), ": checkpoint has no description (not written by directgnn)");
  }
  try {
    return nlohmann::json::parse(meta.toStringRef());
  } catch (const nlohmann::json::exception& e) {
    fail(archive_path(dir), ": checkpoint description is not valid JSON: ", e.what());
  }
}

void load_checkpoint(const std::string& dir, GnnModel& model, torch::optim::Optimizer* optimizer) {
  torch::serialize::InputArchive archive = open_archive(dir);
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
      DGNN_CHECK(loaded == shape, archive_path(dir),
                 ": checkpoint does not match the model it "
                 "describes: parameter ",
                 name, " has shape ", c10::IntArrayRef(loaded), ", the model needs ",
                 c10::IntArrayRef(shape));
    }
    if (optimizer != nullptr) {
      torch::serialize::InputArchive optimizer_archive;
      archive.read("optimizer", optimizer_archive);
      optimizer->load(optimizer_archive);
    }
  } catch (const c10::Error& e) {
    fail(archive_path(dir), ": checkpoint does not match the model it describes: ",
         std::string(e.what_without_backtrace()).substr(0, 300));
  }
}

}  // namespace directgnn
