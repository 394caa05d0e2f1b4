/// One file of a seed corpus.
public struct Seed: Sendable {
    public let name: String
    public let bytes: [UInt8]
}

/// A fuzz target: the harness an input runs through, and how its seed corpus is made.
public struct FuzzTarget: Sendable {
    /// The executable's name, also the folder of its corpus and regressions under `Fuzz/`.
    public let name: String
    public let run: @Sendable ([UInt8]) -> Void
    public let seeds: @Sendable () throws -> [Seed]

    public static let dbusMessage = FuzzTarget(name: "DBusMessageFuzz", run: DBusMessageHarness.run,
                                               seeds: DBusMessageSeeds.all)
    public static let storeFile = FuzzTarget(name: "StoreFileFuzz", run: StoreFileHarness.run,
                                             seeds: StoreFileSeeds.all)
    public static let all = [dbusMessage, storeFile]
}
