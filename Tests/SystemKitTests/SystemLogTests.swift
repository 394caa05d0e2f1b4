import Foundation
import SystemKit
import Testing

/// `SystemLog` sends syslog(3)'s lines to the log socket, and finds it again when the log
/// daemon comes back.
struct SystemLogTests {
    @Test func linesArriveAsSyslogSendsThemEvenAfterTheLogRestarted() throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.path + "/log"
        let log = SystemLog(identifier: "coffer-test", socketPath: path)
        log.write("lost: nobody listens")   // neither throws nor blocks

        var receiver = try DatagramSocket.bound(at: path)
        log.write("first", severity: .warning)
        let pid = ProcessControl.currentID
        #expect(try receiver.receive(waitingAtMost: 2000).map { String(decoding: $0, as: UTF8.self) } == "<12>coffer-test[\(pid)]: first")

        // The log daemon restarts: a new socket at the same path.
        receiver.close()
        try FileSystem.remove(path)
        receiver = try DatagramSocket.bound(at: path)
        defer { receiver.close() }
        log.write("second")
        #expect(try receiver.receive(waitingAtMost: 2000).map { String(decoding: $0, as: UTF8.self) } == "<14>coffer-test[\(pid)]: second")
    }
}
