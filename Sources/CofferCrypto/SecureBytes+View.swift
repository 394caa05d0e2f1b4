/// The bytes of a `SecureBytes`, read in place as a collection (for parsers that take
/// `some Collection<UInt8>`): nothing is copied out of secure memory but what the reader keeps.
public struct SecureBytesView: RandomAccessCollection, Sendable {
    private let base: SecureBytes

    init(_ base: SecureBytes) { self.base = base }

    public var startIndex: Int { 0 }
    public var endIndex: Int { base.count }
    public subscript(position: Int) -> UInt8 { base[position] }
}

extension SecureBytes {
    /// These bytes as a collection, read in place.
    public var view: SecureBytesView { SecureBytesView(self) }
}
