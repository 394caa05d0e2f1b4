/// Which of the TPM's SHA-256 PCRs (0–23) a sealed object is bound to: it unseals only while
/// each holds the value it held at sealing.
public struct PCRSelection: Sendable, Equatable, Hashable {
    /// Bit `i` selects PCR `i`.
    public let mask: UInt32

    public static let none = PCRSelection(unchecked: 0)

    /// The selection of `mask`; nil when it names a PCR above 23.
    public init?(mask: UInt32) {
        guard mask >> 24 == 0 else { return nil }
        self.mask = mask
    }

    /// The selection of `indices`; nil when one is above 23.
    public init?(_ indices: [Int]) {
        guard indices.allSatisfy({ (0...23).contains($0) }) else { return nil }
        self.init(unchecked: indices.reduce(0) { $0 | 1 << UInt32($1) })
    }

    private init(unchecked mask: UInt32) { self.mask = mask }

    public var indices: [Int] { (0..<24).filter { mask & 1 << UInt32($0) != 0 } }
    public var isEmpty: Bool { mask == 0 }
}
