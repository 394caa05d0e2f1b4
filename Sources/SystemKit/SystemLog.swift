import Synchronization

/// Lines to the system log (the journal, or a syslog daemon) through its socket, as syslog(3)
/// sends them: `<priority>identifier[pid]: message`, facility "user". Written here rather than
/// with syslog(3), which Swift cannot call (it is variadic), and so that a test can read what
/// is sent at a socket of its own.
///
/// Never throws and never blocks: with no system log listening, a line is lost, as with syslog(3).
public final class SystemLog: Sendable {
    /// How much a line matters (syslog's severities).
    public enum Severity: UInt8, Sendable {
        case error = 3, warning = 4, info = 6
    }

    public static let defaultSocket = "/dev/log"

    private let identifier: String
    private let path: String
    private let socket = Mutex<DatagramSocket?>(nil)

    public init(identifier: String, socketPath: String = SystemLog.defaultSocket) {
        self.identifier = identifier
        self.path = socketPath
    }

    public func write(_ message: String, severity: Severity = .info) {
        let facilityUser: UInt8 = 1
        let line = Array("<\(facilityUser * 8 + severity.rawValue)>\(identifier)[\(ProcessControl.currentID)]: \(message)".utf8)
        socket.withLock { socket in
            // Connected on first use, and again after the log daemon restarted.
            for _ in 0..<2 {
                if socket == nil { socket = try? DatagramSocket.connected(to: path) }
                guard let connected = socket else { return }
                do {
                    try connected.send(line)
                    return
                } catch Errno.wouldBlock {
                    return   // the log is behind: this line is lost rather than the daemon stalled
                } catch {
                    connected.close()
                    socket = nil
                }
            }
        }
    }

    deinit { socket.withLock { $0?.close() } }
}
