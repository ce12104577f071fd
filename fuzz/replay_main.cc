// fuzz_replay TARGET FILE...: runs one fuzz target on each file, as libFuzzer runs an input,
// without libFuzzer (the main build compiles every target into this program; g++ has no
// libFuzzer). Under the sanitizer preset, a finding replays with the sanitizers watching.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz_targets.h"

// DIRECTGNN_FUZZ_EACH(X) lists the targets (fuzz_targets.h, generated); each is compiled with its
// LLVMFuzzerTestOneInput renamed fuzz_NAME_input.
#define DIRECTGNN_DECLARE(name) \
  extern "C" int fuzz_##name##_input(const uint8_t* data, size_t size);
DIRECTGNN_FUZZ_EACH(DIRECTGNN_DECLARE)
#undef DIRECTGNN_DECLARE

namespace {

using Target = int (*)(const uint8_t*, size_t);

struct Named {
  const char* name;
  Target run;
};

#define DIRECTGNN_NAMED(name) Named{#name, fuzz_##name##_input},
constexpr Named kTargets[] = {DIRECTGNN_FUZZ_EACH(DIRECTGNN_NAMED)};
#undef DIRECTGNN_NAMED

}  // namespace

int main(int argc, char** argv) {
  Target run = nullptr;
  for (const Named& t : kTargets) {
    if (argc > 1 && std::strcmp(argv[1], t.name) == 0) run = t.run;
  }
  if (run == nullptr) {
    std::fprintf(stderr, "usage: fuzz_replay TARGET FILE...   (targets:");
    for (const Named& t : kTargets) std::fprintf(stderr, " %s", t.name);
    std::fprintf(stderr, ")\n");
    return 2;
  }
  for (int i = 2; i < argc; ++i) {
    std::ifstream in(argv[i], std::ios::binary);
    if (!in) {
      std::fprintf(stderr, "fuzz_replay: cannot read %s\n", argv[i]);
      return 1;
    }
    const std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                                  std::istreambuf_iterator<char>());
    run(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    std::printf("%s: ran %s (%zu bytes)\n", argv[1], argv[i], bytes.size());
  }
  return 0;
}
