import FuzzHarness

#if FUZZING
/// libFuzzer's entry point: one input, read as a D-Bus message stream (`DBusMessageHarness`).
/// Built by `scripts/fuzz` with `-sanitize=fuzzer`, which supplies `main`.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FuzzTarget.dbusMessage.run(data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? [])
    return 0
}
#else
/// Without the fuzzer: writes the seed corpus or replays inputs (see `FuzzReplayer`).
@main enum Replayer {
    static func main() throws { try FuzzReplayer.main(.dbusMessage) }
}
#endif
