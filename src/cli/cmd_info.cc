// `cairn info FILE.gguf`: header, metadata (abbreviated), tensor table, totals.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "core/dtype.h"
#include "core/error.h"
#include "gguf/gguf_file.h"

namespace cairn::cli {
namespace {

using gguf::Value;
using gguf::ValueType;

constexpr size_t kMaxStringBytes = 64;       // long strings are cut here (abbreviated view)
constexpr size_t kMaxElementStringBytes = 24;
constexpr size_t kMaxArrayElements = 8;

struct InfoArgs {
  std::string path;
  bool no_tensors = false;
  std::string key;
};

std::string HumanBytes(uint64_t n) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(n);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  return u == 0 ? fmt::format("{} B", n) : fmt::format("{:.2f} {}", v, units[u]);
}

// Length of the longest prefix of s, at most max bytes, that does not split a
// UTF-8 sequence.
size_t Utf8Cut(std::string_view s, size_t max) {
  if (s.size() <= max) return s.size();
  size_t n = max;
  while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80) --n;
  return n;
}

std::string Escape(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  for (char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20 || c == 0x7f) {
          out += fmt::format("\\x{:02x}", c);
        } else {
          out += ch;
        }
    }
  }
  return out;
}

// Quoted string, cut to `max` bytes (0 = never) with its full length noted.
std::string QuoteString(const std::string& s, size_t max) {
  if (max == 0 || s.size() <= max) return "\"" + Escape(s) + "\"";
  return fmt::format("\"{}\"... ({} bytes)", Escape(std::string_view(s).substr(0, Utf8Cut(s, max))), s.size());
}

std::string FormatInt(ValueType t, int64_t stored) {
  if (t == ValueType::kU64) return fmt::format("{}", static_cast<uint64_t>(stored));
  return fmt::format("{}", stored);
}

std::string FormatFloat(ValueType t, double v) {
  if (t == ValueType::kF32) return fmt::format("{}", static_cast<float>(v));
  return fmt::format("{}", v);
}

std::string TypeLabel(const Value& v) {
  if (!v.is_array()) return std::string(gguf::ValueTypeName(v.type()));
  return fmt::format("array<{}>[{}]", gguf::ValueTypeName(v.array_type()), v.size());
}

// Renders one value; `abbreviate` cuts strings and arrays.
std::string FormatValue(const Value& v, bool abbreviate) {
  const size_t max_string = abbreviate ? kMaxStringBytes : 0;
  switch (v.type()) {
    case ValueType::kU8: case ValueType::kU16: case ValueType::kU32: case ValueType::kU64:
      return fmt::format("{}", v.u64_);
    case ValueType::kI8: case ValueType::kI16: case ValueType::kI32: case ValueType::kI64:
      return fmt::format("{}", v.i64_);
    case ValueType::kF32: case ValueType::kF64:
      return FormatFloat(v.type(), v.f64_);
    case ValueType::kBool:
      return v.u64_ ? "true" : "false";
    case ValueType::kString:
      return QuoteString(v.str_, max_string);
    case ValueType::kArray:
      break;
  }
  const size_t n = v.size();
  const size_t shown = abbreviate ? std::min(n, kMaxArrayElements) : n;
  const size_t max_element = abbreviate ? kMaxElementStringBytes : 0;
  const ValueType et = v.array_type();
  std::string out = "[";
  for (size_t i = 0; i < shown; ++i) {
    if (i) out += ", ";
    switch (et) {
      case ValueType::kString: out += QuoteString(v.strings_[i], max_element); break;
      case ValueType::kBool: out += v.bools_[i] ? "true" : "false"; break;
      case ValueType::kF32: case ValueType::kF64: out += FormatFloat(et, v.floats_[i]); break;
      case ValueType::kArray: out += FormatValue(v.arrays_[i], abbreviate); break;
      default: out += FormatInt(et, v.ints_[i]); break;
    }
  }
  if (shown < n) out += fmt::format(", ... {} more", n - shown);
  out += "]";
  return out;
}

// --key: the full value. Strings print raw; arrays print one element per line.
void PrintFullValue(const Value& v) {
  if (v.type() == ValueType::kString) {
    std::fwrite(v.str_.data(), 1, v.str_.size(), stdout);
    std::fputc('\n', stdout);
    return;
  }
  if (!v.is_array()) {
    fmt::print("{}\n", FormatValue(v, false));
    return;
  }
  const ValueType et = v.array_type();
  for (size_t i = 0; i < v.size(); ++i) {
    switch (et) {
      case ValueType::kString: fmt::print("{}\n", QuoteString(v.strings_[i], 0)); break;
      case ValueType::kBool: fmt::print("{}\n", v.bools_[i] ? "true" : "false"); break;
      case ValueType::kF32: case ValueType::kF64: fmt::print("{}\n", FormatFloat(et, v.floats_[i])); break;
      case ValueType::kArray: fmt::print("{}\n", FormatValue(v.arrays_[i], false)); break;
      default: fmt::print("{}\n", FormatInt(et, v.ints_[i])); break;
    }
  }
}

std::string FormatShape(const std::vector<int64_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

void RunInfo(const InfoArgs& args) {
  auto file = gguf::GgufFile::Open(args.path);
  if (!args.key.empty()) {
    const Value* v = file->Find(args.key);
    if (v == nullptr) Fail("{}: no metadata key '{}'", args.path, args.key);
    PrintFullValue(*v);
    return;
  }

  const Value* arch_value = file->Find("general.architecture");
  const std::string arch =
      arch_value != nullptr && arch_value->type() == ValueType::kString ? arch_value->AsString() : "(none)";
  fmt::print("file:         {}\n", args.path);
  fmt::print("architecture: {}\n", arch);
  fmt::print("size:         {} ({} bytes)\n", HumanBytes(file->file_size()), file->file_size());
  fmt::print("version:      {}\n", file->version());
  fmt::print("alignment:    {}\n", file->alignment());
  fmt::print("data offset:  {}\n", file->data_offset());

  const auto& metadata = file->metadata();
  fmt::print("\nmetadata: {} keys\n", metadata.size());
  size_t key_width = 0, type_width = 0;
  for (const auto& [key, value] : metadata) {
    key_width = std::max(key_width, key.size());
    type_width = std::max(type_width, TypeLabel(value).size());
  }
  key_width = std::min<size_t>(key_width, 48);
  for (const auto& [key, value] : metadata) {
    fmt::print("  {:<{}}  {:<{}}  {}\n", Escape(key), key_width, TypeLabel(value), type_width,
               FormatValue(value, true));
  }

  const auto& tensors = file->tensors();
  if (!args.no_tensors) {
    fmt::print("\ntensors: {}\n", tensors.size());
    if (!tensors.empty()) {
      size_t name_width = 4, type_width_t = 4, shape_width = 5;
      for (const auto& t : tensors) {
        name_width = std::max(name_width, t.name.size());
        type_width_t = std::max(type_width_t, GetDTypeInfo(t.type).name.size());
        shape_width = std::max(shape_width, FormatShape(t.shape).size());
      }
      const size_t index_width = std::max<size_t>(1, fmt::format("{}", tensors.size() - 1).size());
      fmt::print("  {:>{}}  {:<{}}  {:<{}}  {:<{}}  {:>12}\n", "#", index_width, "name", name_width, "type",
                 type_width_t, "shape", shape_width, "bytes");
      for (size_t i = 0; i < tensors.size(); ++i) {
        const auto& t = tensors[i];
        fmt::print("  {:>{}}  {:<{}}  {:<{}}  {:<{}}  {:>12}\n", i, index_width, Escape(t.name), name_width,
                   GetDTypeInfo(t.type).name, type_width_t, FormatShape(t.shape), shape_width, t.bytes);
      }
    }
  }

  struct TypeTotal {
    size_t count = 0;
    uint64_t bytes = 0;
    int64_t elements = 0;
  };
  std::map<uint32_t, TypeTotal> by_type;
  uint64_t total_bytes = 0;
  int64_t total_elements = 0;
  for (const auto& t : tensors) {
    TypeTotal& tt = by_type[static_cast<uint32_t>(t.type)];
    ++tt.count;
    tt.bytes += t.bytes;
    tt.elements += t.elements();
    total_bytes += t.bytes;
    total_elements += t.elements();
  }
  fmt::print("\ntotals:\n");
  fmt::print("  tensors:  {}\n", tensors.size());
  fmt::print("  elements: {}\n", total_elements);
  fmt::print("  bytes:    {} ({} bytes)\n", HumanBytes(total_bytes), total_bytes);
  if (!by_type.empty()) {
    fmt::print("  by type:\n");
    for (const auto& [id, tt] : by_type) {
      const DTypeInfo& info = GetDTypeInfo(static_cast<DType>(id));
      fmt::print("    {:<5}  {:>6} tensors  {:>12} bytes  ({}){}\n", info.name, tt.count, tt.bytes,
                 HumanBytes(tt.bytes), info.supported ? "" : "  [not supported by Cairn's kernels]");
    }
  }
}

const CommandRegistration kRegistration{"info", 300, [](CLI::App& app) {
  auto args = std::make_shared<InfoArgs>();
  CLI::App* cmd = app.add_subcommand("info", "Print a GGUF file's header, metadata and tensors");
  cmd->add_option("file", args->path, "GGUF file")->required();
  cmd->add_flag("--no-tensors", args->no_tensors, "Omit the tensor table (totals are still printed)");
  cmd->add_option("--key", args->key, "Print only this metadata key's full value (strings raw, arrays one "
                                      "element per line)");
  cmd->callback([args] { RunInfo(*args); });
}};

}  // namespace
}  // namespace cairn::cli
