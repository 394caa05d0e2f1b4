// libFuzzer's driver entry point (compiler-rt's FuzzerInterface.h), declared for Swift.
// SwiftPM gives every executable its own `main`, so the fuzz executables start the driver
// themselves instead of linking libFuzzer's `main`. The symbol comes with -sanitize=fuzzer;
// nothing else links against it.
#ifndef COFFER_LIBFUZZER_H
#define COFFER_LIBFUZZER_H
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*test_one_input)(const uint8_t *data, size_t size));

#endif
