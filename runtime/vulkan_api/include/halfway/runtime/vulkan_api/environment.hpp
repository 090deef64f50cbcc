#pragma once
// Environment variables that change what the Vulkan runtime measures.
//
// halfway's own: HALFWAY_VK_VALIDATION=1 turns on the validation layer (instance.hpp), and
// HALFWAY_VK_DEVICE=<index or name substring> picks the device (selection.hpp).
//
// Mesa's shader cache: lavapipe (and RADV, ANV) compile a pipeline lazily at its first dispatch,
// 15-38 ms cold on lavapipe, and about 0.5 ms when the result comes from Mesa's on-disk cache in
// ~/.cache/mesa_shader_cache. A benchmark that reads that cache reports warm numbers as cold ones,
// and one that shares it with other runs is not reproducible. So benchmarks either
//   - set MESA_SHADER_CACHE_DISABLE=true for cold first-dispatch numbers, or
//   - set MESA_SHADER_CACHE_DIR to a directory of their own (fresh for cold numbers, reused for
//     warm ones).
// Mesa reads both when the driver initialises, so set them before the first Instance in the
// process; the helpers below do it and say so.

#include <string>

namespace halfway::vk {

enum class ShaderCache {
  Inherit,   // leave the environment alone
  Disabled,  // MESA_SHADER_CACHE_DISABLE=true
  Directory, // MESA_SHADER_CACHE_DIR=<dir>, MESA_SHADER_CACHE_DISABLE unset
};

// Sets the Mesa variables for `mode`. Call before the first Instance of the process: Mesa reads
// them when the driver initialises, and a later change does nothing.
void configure_mesa_shader_cache(ShaderCache mode, const std::string& directory = {});

} // namespace halfway::vk
