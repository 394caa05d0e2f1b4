/// Argon2id parameters recorded in store headers.
public struct Argon2Parameters: Sendable, Equatable, Hashable {
    /// Number of passes over memory (t).
    public var iterations: UInt32
    /// Memory size in KiB (m).
    public var memoryKiB: UInt32
    /// Number of lanes (p).
    public var parallelism: UInt32

    public init(iterations: UInt32, memoryKiB: UInt32, parallelism: UInt32) {
        self.iterations = iterations
        self.memoryKiB = memoryKiB
        self.parallelism = parallelism
    }

    /// t=3, m=65536 KiB (64 MiB), p=1: about 180 ms on the project's machines.
    public static let `default` = Argon2Parameters(iterations: 3, memoryKiB: 65536, parallelism: 1)

    /// t=1, m=64 KiB, p=1 - fast, for unit tests only.
    public static let testing = Argon2Parameters(iterations: 1, memoryKiB: 64, parallelism: 1)
}
