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

#define DIRECTGNN_TARGET(name) extern "C" int fuzz_##name##_input(const uint8_t* data, size_t size);
DIRECTGNN_TARGET(npy)
DIRECTGNN_TARGET(npz)
DIRECTGNN_TARGET(text)
DIRECTGNN_TARGET(meta)
DIRECTGNN_TARGET(csv)
#undef DIRECTGNN_TARGET

namespace {

using Target = int (*)(const uint8_t*, size_t);

struct Named {
  const char* name;
  Target run;
};

constexpr Named kTargets[] = {{"npy", fuzz_npy_input},
                              {"npz", fuzz_npz_input},
                              {"text", fuzz_text_input},
                              {"meta", fuzz_meta_input},
                              {"csv", fuzz_csv_input}};

}  // namespace

int main(int argc, char** argv) {
  Target run = nullptr;
  for (const Named& t : kTargets) {
    if (argc > 1 && std::strcmp(argv[1], t.name) == 0) run = t.run;
  }
  if (run == nullptr) {
    std::fprintf(stderr, "usage: fuzz_replay TARGET FILE...   (targets: %s)\n",
                 DIRECTGNN_FUZZ_TARGETS);
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
