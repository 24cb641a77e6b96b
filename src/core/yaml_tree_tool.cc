// headroom_yaml_tree IN OUT NAME: writes the TreeText of the YAML file IN to OUT
// (core/yaml_reader.h), for the build to embed beside the file; NAME names it in errors, which fail
// the build. Build-time only; not installed.
#include <cstdio>
#include <fstream>
#include <string>

#include "core/files.h"
#include "core/yaml_reader.h"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: headroom_yaml_tree IN OUT NAME\n");
    return 2;
  }
  auto text = headroom::core::ReadFile(argv[1]);
  if (!text) {
    std::fprintf(stderr, "%s\n", text.error().message().c_str());
    return 1;
  }
  auto tree = headroom::core::YamlReader::TreeText(*text, argv[3]);
  if (!tree) {
    std::fprintf(stderr, "%s\n", tree.error().message().c_str());
    return 1;
  }
  std::ofstream out(argv[2], std::ios::binary | std::ios::trunc);
  out << *tree;
  out.close();
  if (!out) {
    std::fprintf(stderr, "%s: cannot write\n", argv[2]);
    return 1;
  }
  return 0;
}
