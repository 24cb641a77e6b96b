// A data file compiled into the binary (see cmake/EmbedFiles.cmake). Plain value type.
#ifndef HEADROOM_CORE_EMBEDDED_FILE_H_
#define HEADROOM_CORE_EMBEDDED_FILE_H_

#include <string_view>

namespace headroom::core {

struct EmbeddedFile {
  std::string_view path;  // relative to the source tree, e.g. "data/hardware/a100-80gb-sxm.yaml"
  std::string_view content;
};

}  // namespace headroom::core

#endif  // HEADROOM_CORE_EMBEDDED_FILE_H_
