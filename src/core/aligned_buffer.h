// Owning, 64-byte aligned, uninitialised heap buffer of trivially copyable T.
// Used for activations, scratch and state so SIMD loads are aligned and no
// hidden zero-fill happens on hot paths (call Zero() when it is wanted).
#pragma once

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

namespace cairn {

inline constexpr size_t kCacheLineBytes = 64;

template <typename T>
class AlignedBuffer {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  AlignedBuffer() = default;
  explicit AlignedBuffer(size_t count) { Resize(count); }
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  AlignedBuffer(AlignedBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  AlignedBuffer& operator=(AlignedBuffer&& other) noexcept {
    if (this != &other) {
      std::free(data_);
      data_ = std::exchange(other.data_, nullptr);
      size_ = std::exchange(other.size_, 0);
    }
    return *this;
  }
  ~AlignedBuffer() { std::free(data_); }

  // Discards contents unless the size is unchanged.
  void Resize(size_t count) {
    if (count == size_) return;
    std::free(data_);
    data_ = nullptr;
    size_ = 0;
    if (count == 0) return;
    const size_t bytes = (count * sizeof(T) + kCacheLineBytes - 1) / kCacheLineBytes * kCacheLineBytes;
    data_ = static_cast<T*>(std::aligned_alloc(kCacheLineBytes, bytes));
    if (data_ == nullptr) throw std::bad_alloc();
    size_ = count;
  }

  // Explicit deep copy (copies are never implicit).
  AlignedBuffer Clone() const {
    AlignedBuffer copy(size_);
    if (size_) std::memcpy(copy.data_, data_, size_ * sizeof(T));
    return copy;
  }

  void Zero() {
    if (size_) std::memset(data_, 0, size_ * sizeof(T));
  }

  T* data() { return data_; }
  const T* data() const { return data_; }
  size_t size() const { return size_; }
  size_t bytes() const { return size_ * sizeof(T); }
  bool empty() const { return size_ == 0; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }

 private:
  T* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace cairn
