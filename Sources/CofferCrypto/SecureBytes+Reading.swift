import SystemKit

/// Reading a descriptor straight into secure memory: what is read never passes through
/// ordinary memory.
extension SecureBytes {
    /// Appends what one `read` of `descriptor` returns, at most `maxCount` bytes, and returns
    /// how many that was (0 at end of file). Throws `Errno` (`.wouldBlock` from a non-blocking
    /// descriptor with nothing to read) or `CryptoError`.
    @discardableResult
    public func append(readingFrom descriptor: FileDescriptor, upTo maxCount: Int) throws -> Int {
        try reserve(additional: maxCount)
        var room = UnsafeMutableRawBufferPointer(start: storage + count, count: maxCount).mutableBytes
        let n = try descriptor.read(into: &room)
        count += n
        return n
    }

    /// All that is left on `descriptor` up to end of file; nil if that is more than `limit`
    /// bytes (what was read is wiped).
    public static func read(toEndOf descriptor: FileDescriptor, limit: Int) throws -> SecureBytes? {
        let all = try SecureBytes(capacity: min(limit + 1, 256))
        while true {
            // Fill the room there is; when there is none, grow (doubling) by as much again.
            let room = all.capacity > all.count ? all.capacity - all.count : all.capacity
            guard try all.append(readingFrom: descriptor, upTo: min(room, limit + 1 - all.count)) > 0 else { return all }
            if all.count > limit {
                all.removeAll()
                return nil
            }
        }
    }

    /// The next line of `descriptor`, without its "\n" and a "\r" before that, read a byte at
    /// a time so that nothing after it is consumed, and whether a "\n" ended it (false: end of
    /// input); nil if it is longer than `limit` bytes (what was read is wiped).
    public static func readLine(from descriptor: FileDescriptor, limit: Int) throws -> (line: SecureBytes, sawNewline: Bool)? {
        let line = try SecureBytes(capacity: 64)
        var sawNewline = false
        while try line.append(readingFrom: descriptor, upTo: 1) == 1 {
            if line[line.count - 1] == UInt8(ascii: "\n") {
                line.truncate(to: line.count - 1)
                sawNewline = true
                break
            }
            guard line.count <= limit else {
                line.removeAll()
                return nil
            }
        }
        if line.count > 0, line[line.count - 1] == UInt8(ascii: "\r") { line.truncate(to: line.count - 1) }
        return (line, sawNewline)
    }
}
