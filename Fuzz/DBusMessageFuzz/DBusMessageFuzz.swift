#if FUZZING
import CLibFuzzer
import Foundation
#endif
import FuzzHarness

/// Built by `scripts/fuzz` with `-sanitize=fuzzer -DFUZZING`: libFuzzer's driver (it takes
/// libFuzzer's flags and corpus folders), each input read as a D-Bus message stream (`DBusMessageHarness`).
/// Otherwise: writes the seed corpus or replays inputs without sanitizers (see `FuzzReplayer`).
@main enum Fuzzer {
    static func main() throws {
        #if FUZZING
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv) { data, size in
            FuzzTarget.dbusMessage.run(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
            return 0
        })
        #else
        try FuzzReplayer.main(.dbusMessage)
        #endif
    }
}
