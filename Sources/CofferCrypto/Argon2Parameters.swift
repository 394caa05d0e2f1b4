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

    /// Whether a file (a store, a backup) may ask for these: anything else is damage or an
    /// attack (deriving would otherwise allocate whatever the file says, or run practically
    /// for ever), and libgcrypt refuses less than 8 KiB per lane.
    public var isAcceptableFromFile: Bool {
        (1...64).contains(iterations) && (1...16).contains(parallelism) && (8 * parallelism...(2 << 20)).contains(memoryKiB)
    }

    /// t=1, m=64 KiB, p=1 - fast, for unit tests only.
    public static let testing = Argon2Parameters(iterations: 1, memoryKiB: 64, parallelism: 1)
}
