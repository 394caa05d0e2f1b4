import Foundation
import Synchronization

/// TCP ports on 127.0.0.1 for the servers tests start (swtpm, Syncthing).
public enum LoopbackPorts {
    /// Whether a socket listens on 127.0.0.1:`port` (from /proc/net/tcp: local address
    /// 0100007F:PORT in hex, state 0A).
    public static func isListening(_ port: Int) -> Bool {
        guard let table = try? String(contentsOfFile: "/proc/net/tcp", encoding: .utf8) else { return false }
        let address = "0100007F:" + String(format: "%04X", port)
        return table.split(separator: "\n").contains { line in
            let fields = line.split(separator: " ")
            return fields.count > 3 && fields[1] == address && fields[3] == "0A"
        }
    }

    /// Ports handed out by this process: a server given one may not listen on it yet, and
    /// tests run side by side, so none is handed out twice.
    private static let handedOut = Mutex<Set<Int>>([])

    /// A port no one listens on now, with the `count - 1` above it free too, none of them
    /// handed out before by this process. Drawn below Linux's ephemeral ports (32768 and up by
    /// default), which outgoing connections take: a server could not listen on one in use so.
    public static func free(count: Int = 1) -> Int {
        while true {
            let port = Int.random(in: 15_000...32_000)
            let range = port..<port + count
            guard range.allSatisfy({ !isListening($0) }) else { continue }
            let taken = handedOut.withLock { handed in
                guard handed.isDisjoint(with: range) else { return false }
                handed.formUnion(range)
                return true
            }
            if taken { return port }
        }
    }
}
