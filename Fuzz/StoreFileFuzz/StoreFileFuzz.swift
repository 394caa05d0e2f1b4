import FuzzHarness

/// libFuzzer over collection files, item payloads and attribute indexes (`StoreFileHarness`);
/// see `FuzzMain`.
@main enum Fuzzer {
    static func main() throws { try FuzzMain.run(.storeFile) }
}
