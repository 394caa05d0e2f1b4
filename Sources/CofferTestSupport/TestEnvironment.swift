/// Environment variables every test gives the Coffer programs it starts.
public enum TestEnvironment {
    /// Asks a debug build of `cofferd` or `coffer` for cheap Argon2id parameters when it creates a
    /// collection, changes a password or writes a backup (`CofferStore.TestKeyDerivation`): each
    /// fixture would otherwise spend a third of a second of CPU per password. Release builds
    /// refuse to start with it, so a test that runs an installed binary leaves it out.
    public static let fastKeyDerivation = ["COFFER_TEST_FAST_KDF": "1"]
}

extension TestEnvironment {
    /// Asks a debug build of `cofferd` for a manual clock standing at `milliseconds` since 1970
    /// (`CofferCore.TestClock`), which the test moves over the bus; release builds refuse it.
    public static func clock(at milliseconds: UInt64) -> [String: String] {
        ["COFFER_TEST_CLOCK": String(milliseconds)]
    }
}
