#include "model/convert/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "core/error.h"
#include "core/half.h"

namespace cairn::model {

struct SafeTensorsSet::Mapping {
  const uint8_t* base = nullptr;
  size_t size = 0;
  ~Mapping() {
    if (base != nullptr) munmap(const_cast<uint8_t*>(base), size);
  }
};

int64_t SafeTensor::elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::vector<float> SafeTensor::ToF32() const {
  const int64_t n = elements();
  const size_t elem = dtype == "F32" ? 4 : 2;
  if (bytes != static_cast<size_t>(n) * elem) Fail("safetensors tensor '{}' has {} bytes for {} elements", name, bytes, n);
  std::vector<float> out(static_cast<size_t>(n));
  if (dtype == "F32") {
    std::memcpy(out.data(), data, static_cast<size_t>(n) * 4);
  } else if (dtype == "F16" || dtype == "BF16") {
    const bool bf16 = dtype == "BF16";
    for (int64_t i = 0; i < n; ++i) {
      uint16_t h;
      std::memcpy(&h, data + 2 * i, 2);
      out[i] = bf16 ? Bf16ToF32(h) : F16ToF32(h);
    }
  } else {
    Fail("safetensors tensor '{}' has dtype {}, expected F32, F16 or BF16", name, dtype);
  }
  return out;
}

void SafeTensorsSet::AddFile(const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY);
  if (fd < 0) Fail("cannot open '{}': {}", path, std::strerror(errno));
  struct stat st {};
  fstat(fd, &st);
  const size_t size = static_cast<size_t>(st.st_size);
  if (size < 8) {
    close(fd);
    Fail("'{}' is not a safetensors file (too small)", path);
  }
  void* base = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (base == MAP_FAILED) Fail("cannot map '{}'", path);
  auto mapping = std::make_shared<Mapping>();
  mapping->base = static_cast<const uint8_t*>(base);
  mapping->size = size;
  mappings_.push_back(mapping);

  uint64_t header_len = 0;
  std::memcpy(&header_len, mapping->base, 8);
  if (header_len > size - 8) Fail("'{}': header length {} exceeds file size", path, header_len);
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(mapping->base + 8, mapping->base + 8 + header_len);
  } catch (const std::exception& e) {
    Fail("'{}': bad safetensors header: {}", path, e.what());
  }
  const uint8_t* data_start = mapping->base + 8 + header_len;
  const size_t data_size = size - 8 - header_len;
  for (auto& [name, info] : header.items()) {
    if (name == "__metadata__") continue;
    SafeTensor t;
    t.name = name;
    t.dtype = info.at("dtype").get<std::string>();
    t.shape = info.at("shape").get<std::vector<int64_t>>();
    const auto offsets = info.at("data_offsets").get<std::vector<uint64_t>>();
    if (offsets.size() != 2 || offsets[0] > offsets[1] || offsets[1] > data_size) {
      Fail("'{}': tensor '{}' has bad data_offsets", path, name);
    }
    t.data = data_start + offsets[0];
    t.bytes = offsets[1] - offsets[0];
    tensors_[name] = std::move(t);
  }
}

SafeTensorsSet SafeTensorsSet::OpenDir(const std::string& dir) {
  namespace fs = std::filesystem;
  SafeTensorsSet set;
  const fs::path single = fs::path(dir) / "model.safetensors";
  const fs::path index = fs::path(dir) / "model.safetensors.index.json";
  if (fs::exists(single)) {
    set.AddFile(single.string());
  } else if (fs::exists(index)) {
    std::ifstream in(index);
    const nlohmann::json j = nlohmann::json::parse(in);
    std::set<std::string> files;
    for (auto& [name, file] : j.at("weight_map").items()) files.insert(file.get<std::string>());
    for (const std::string& f : files) set.AddFile((fs::path(dir) / f).string());
  } else {
    Fail("'{}' has no model.safetensors or model.safetensors.index.json", dir);
  }
  return set;
}

const SafeTensor* SafeTensorsSet::Find(const std::string& name) const {
  auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : &it->second;
}

}  // namespace cairn::model
