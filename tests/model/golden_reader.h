// Reader of the `cairn-golden-v1` files in tests/model/golden/ (format in the
// README there): a JSON sidecar naming raw little-endian arrays in a .bin.
#pragma once

#include <cstdint>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/error.h"

namespace cairn::test {

class GoldenFile {
 public:
  GoldenFile(const std::string& dir, const std::string& json_name) {
    std::ifstream in(dir + "/" + json_name);
    if (!in) Fail("cannot open golden sidecar {}/{}", dir, json_name);
    meta_ = nlohmann::json::parse(in);
    std::ifstream bin(dir + "/" + meta_.at("bin").get<std::string>(), std::ios::binary);
    data_.assign(std::istreambuf_iterator<char>(bin), {});
  }
  const nlohmann::json& meta() const { return meta_; }
  bool Has(const std::string& name) const { return meta_.at("arrays").contains(name); }

  template <typename T>
  std::vector<T> Array(const std::string& name) const {
    const nlohmann::json& a = meta_.at("arrays").at(name);
    const size_t offset = a.at("offset").get<size_t>();
    const size_t nbytes = a.at("nbytes").get<size_t>();
    if (offset + nbytes > data_.size()) Fail("golden array {} out of range", name);
    std::vector<T> out(nbytes / sizeof(T));
    std::memcpy(out.data(), data_.data() + offset, nbytes);
    return out;
  }

 private:
  nlohmann::json meta_;
  std::vector<char> data_;
};

}  // namespace cairn::test
