// The identity of a model's weights for the disk tier: a content hash of the
// GGUF's tensors (names, types, shapes and every data byte), so a pack written
// by another model, another quantization of the same model, or a re-converted
// file never matches, whatever the file is called or when it was written.
#pragma once

#include <string>

#include "gguf/gguf_file.h"

namespace cairn::cache::disk {

// 32 hex digits of XXH3-128 over the tensor table and data, in file order.
// Reads every tensor byte (about 0.1 s per GB from the page cache).
std::string ModelContentId(const gguf::GgufFile& file);

// ModelContentId, remembered in `memo_path` (JSON, keyed by the file's path,
// size, inode and mtime) so that a restart of the same file does not hash it
// again. A missing, unreadable or stale memo is recomputed and rewritten.
std::string CachedModelContentId(const gguf::GgufFile& file, const std::string& memo_path);

}  // namespace cairn::cache::disk
