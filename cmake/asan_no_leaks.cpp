// Linked into Vulkan test programs in sanitizer builds only. The leaks LeakSanitizer reports there
// come from Mesa's lavapipe and the validation layer (libraries unloaded before the report is
// written, so they cannot be suppressed by name), not from halfway.
extern "C" const char* __asan_default_options() {
  return "detect_leaks=0";
}
