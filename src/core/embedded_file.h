// A data file compiled into the binary (see cmake/EmbedFiles.cmake). Plain value type.
#ifndef HEADROOM_CORE_EMBEDDED_FILE_H_
#define HEADROOM_CORE_EMBEDDED_FILE_H_

#include <string_view>

namespace headroom::core {

struct EmbeddedFile {
  std::string_view path;  // relative to the source tree, e.g. "data/hardware/a100-80gb-sxm.yaml"
  std::string_view content;
  // A YAML file's tree, made at build time (core/yaml_reader.h's TreeText); empty for others.
  std::string_view tree = {};

  // What to parse: the tree where there is one (the same document, parsed faster), else the
  // bytes.
  std::string_view parse_text() const { return tree.empty() ? content : tree; }
};

}  // namespace headroom::core

#endif  // HEADROOM_CORE_EMBEDDED_FILE_H_
