import FuzzHarness

/// libFuzzer over D-Bus message streams (`DBusMessageHarness`); see `FuzzMain`.
@main enum Fuzzer {
    static func main() throws { try FuzzMain.run(.dbusMessage) }
}
