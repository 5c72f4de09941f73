// libFuzzer target: the SpecForge log parser (see fuzz_readers.h). Run through scripts/fuzz.
#include <unistd.h>

#include "fuzz_readers.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static const std::string dir = "/dev/shm/wavelab-fuzz-" + std::to_string(::getpid());
    wl::fuzz::runReader(wl::fuzz::fuzzReader("specforge_log"), data, size, dir);
    return 0;
}
