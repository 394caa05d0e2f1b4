/// A seedable random number generator (SplitMix64) for randomized tests and tools: the same
/// seed gives the same sequence, so a failure can be replayed from the seed it printed.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    /// A generator for one part of a run (a writer, a round) derived from the run's seed, so
    /// that parts do not share a sequence.
    public init(seed: UInt64, stream: UInt64) {
        var mixer = SeededGenerator(seed: seed ^ (stream &* 0xD1B5_4A32_D192_ED03))
        state = mixer.next()
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// `count` random bytes.
    public mutating func bytes(_ count: Int) -> [UInt8] {
        (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &self) }
    }

    /// True with probability `probability`.
    public mutating func chance(_ probability: Double) -> Bool {
        Double.random(in: 0..<1, using: &self) < probability
    }

    /// A string of up to `maxLength` characters mixing ASCII, accented letters, CJK, emoji and
    /// control characters, never NUL (D-Bus strings cannot hold it).
    public mutating func text(maxLength: Int) -> String {
        let length = Int.random(in: 0...maxLength, using: &self)
        var scalars = String.UnicodeScalarView()
        for _ in 0..<length {
            let value: UInt32 = switch UInt8.random(in: 0..<8, using: &self) {
            case 0: UInt32.random(in: 1...0x1F, using: &self)
            case 1: UInt32.random(in: 0xA0...0x24F, using: &self)
            case 2: UInt32.random(in: 0x4E00...0x9FFF, using: &self)
            case 3: UInt32.random(in: 0x1F300...0x1F64F, using: &self)
            default: UInt32.random(in: 0x20...0x7E, using: &self)
            }
            scalars.append(Unicode.Scalar(value)!)
        }
        return String(scalars)
    }
}
