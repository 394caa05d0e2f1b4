import Foundation
import SystemKit

/// What `readUntilEnd(timeout:)` found on a pipe.
public struct PipeContents: Sendable, CustomStringConvertible {
    /// The bytes read.
    public let bytes: [UInt8]
    /// Whether the pipe reached end of file, i.e. every write end was closed (false: the time
    /// ran out first, some write end is still open somewhere).
    public let reachedEnd: Bool

    public var description: String { "\(bytes.count) bytes, \(reachedEnd ? "then end of file" : "no end of file yet")" }
}

extension FileDescriptor {
    /// Reads until end of file or until `timeout` seconds have passed, whichever comes first;
    /// never blocks past the deadline.
    public func readUntilEnd(timeout: TimeInterval) throws -> PipeContents {
        let deadline = Date().addingTimeInterval(timeout)
        var bytes: [UInt8] = []
        while true {
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else { return PipeContents(bytes: bytes, reachedEnd: false) }
            let events = try poll(for: .readable, timeoutMilliseconds: Int32(min(left, 3600) * 1000) + 1)
            if events.isEmpty { continue }
            let chunk = try read(upTo: 65536)
            if chunk.isEmpty { return PipeContents(bytes: bytes, reachedEnd: true) }
            bytes += chunk
        }
    }
}
