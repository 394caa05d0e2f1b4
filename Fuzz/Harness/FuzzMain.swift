#if FUZZING
import CLibFuzzer
import Foundation
#endif

/// What a fuzz executable does. Built by `scripts/fuzz` with `-sanitize=fuzzer -DFUZZING`: it
/// starts libFuzzer's driver (which takes libFuzzer's flags and corpus folders) on `target`.
/// Otherwise it writes the seed corpus or replays inputs without sanitizers (`FuzzReplayer`).
public enum FuzzMain {
    #if FUZZING
    /// The target the driver's C callback runs (a C function pointer cannot capture it).
    nonisolated(unsafe) private static var current: FuzzTarget?
    #endif

    public static func run(_ target: FuzzTarget) throws {
        #if FUZZING
        current = target
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in
            FuzzMain.current!.run(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
            return 0
        })
        #else
        try FuzzReplayer.main(target)
        #endif
    }
}
