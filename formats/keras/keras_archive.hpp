#pragma once
// Keras 3 `.keras` archives (keras/src/saving/saving_lib.py): a zip file holding exactly
//
//   metadata.json      {"keras_version": "3.x", "date_saved": "..."}     small JSON object
//   config.json        the model's architecture (serialize_keras_object)  JSON, kept verbatim
//   model.weights.h5   the weights, Keras 3 layout (layers/NAME/vars/I)  read and written by the HDF5 codec
//
// Keras stores the entries uncompressed; wavg reads stored or deflated entries. A zip's sizes are declarations
// the reader does not trust (a zip bomb declares small and inflates huge, or declares absurd sizes): before
// extracting anything it refuses entries other than these three, JSON entries over 64 MiB, weights over 1 TiB,
// and a compression ratio over 1000:1; while extracting it stops at the declared size and fails on any
// difference. model.weights.h5 is extracted to a private temporary file under $TMPDIR, opened with the HDF5
// reader and removed when the reader is destroyed, or by the signal handlers (temp_file.hpp).
//
// The writer needs a .keras input 1: it keeps that input's config.json byte for byte and its metadata.json with
// the provenance entries added, and writes model.weights.h5 with the HDF5 writer (input 1's weights file as the
// template, so the Keras 3 tree is kept), then zips the three entries, stored, in Keras's order.

#include <memory>
#include <optional>
#include <string>

#include "hdf5/hdf5_reader.hpp"
#include "listed_reader.hpp"
#include "wavg/format.hpp"
#include "wavg/temp_file.hpp"

namespace wavg {

class KerasArchiveReader final : public ListedReader {
 public:
  explicit KerasArchiveReader(std::string path);
  ~KerasArchiveReader() override;

  std::string layout() const override { return "Keras 3 .keras (" + m_weights->layout() + ")"; }
  const std::vector<TensorInfo>& tensors() const override { return m_weights->tensors(); }
  void read(std::size_t index, std::uint64_t offset, std::uint64_t count, void* dst) override {
    m_weights->read(index, offset, count, dst);
  }
  const void* view(std::size_t index, std::uint64_t offset, std::uint64_t count) override {
    return m_weights->view(index, offset, count);
  }
  void release(std::size_t index, std::uint64_t offset, std::uint64_t count) override {
    m_weights->release(index, offset, count);
  }
  void prefetch(std::size_t index, std::uint64_t offset, std::uint64_t count) override {
    m_weights->prefetch(index, offset, count);
  }
  // Returns the weights' layers in config.json's model order.
  ModelLayers model_layers() const override { return m_layers; }
  // Returns metadata.json's string members (keras_version, date_saved, wavg_*).
  std::map<std::string, std::string> metadata() const override;
  std::string model_config() const override { return m_config; }

  Hdf5Reader& weights() { return *m_weights; }
  const std::string& config_json() const { return m_config; }
  const std::string& metadata_json() const { return m_metadata_json; }

 private:
  std::optional<TempFile> m_tmp;  // the extracted model.weights.h5; removed after m_weights, declared later
  std::string m_config;
  std::string m_metadata_json;
  std::unique_ptr<Hdf5Reader> m_weights;
  ModelLayers m_layers;
};

// Tells whether an input is a zip archive holding any of a .keras archive's entries (a PyTorch zip is not one).
bool looks_like_keras(const SniffInput& input);

std::unique_ptr<Writer> create_keras_writer(const std::string& tmp_path, const std::string& display_path,
                                            const OutputSpec& spec);

}  // namespace wavg
