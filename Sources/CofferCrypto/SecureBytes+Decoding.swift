import SystemKit

/// Decoding an escaped secret (a PIN in Assuan `D` lines) from one secure buffer into another:
/// no decoded or escaped byte passes through ordinary memory.
extension SecureBytes {
    /// Appends `source[range]` decoded by `encoding`.
    public func append(decoding range: Range<Int>, of source: SecureBytes, with encoding: PercentEncoding) throws {
        precondition(source !== self, "SecureBytes cannot decode into itself")
        precondition(range.lowerBound >= 0 && range.upperBound <= source.count, "SecureBytes range out of bounds")
        try source.withUnsafeBytes { bytes in
            try encoding.decode(bytes[range]) { try append($0) }
        }
    }
}
