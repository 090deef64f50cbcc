#pragma once
// Helpers shared by the text tests: reading files and printing several kernels as one text.
#include "halfway/ir/kernel.hpp"
#include "halfway/ir/printer.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace halfway::text_test {

inline std::string read(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline std::string print_all(const std::vector<ir::Kernel>& kernels) {
  std::string out;
  for (const ir::Kernel& k : kernels)
    out += ir::print(k);
  return out;
}

// Every .hk file under a folder of the source tree, sorted.
inline std::vector<std::filesystem::path> hk_files(const std::string& folder) {
  std::vector<std::filesystem::path> out;
  for (const auto& e :
       std::filesystem::directory_iterator(std::string(HALFWAY_SOURCE_DIR) + "/" + folder))
    if (e.path().extension() == ".hk")
      out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

} // namespace halfway::text_test
