import CofferTestSupport
import DBusKit
import Foundation
import SecretServiceProtocol
import Testing

extension DaemonFixture {
    /// cofferd's environment for a manual clock that starts at the wall clock's time now, so
    /// that times other programs write (grants, the throttle's file) read the same to it.
    static var testClock: [String: String] {
        TestEnvironment.clock(at: UInt64(Date().timeIntervalSince1970 * 1000))
    }

    /// Moves cofferd's test clock `seconds` forward; returns, once cofferd has done what the time
    /// passed asks of it (the idle locks and ended windows it reached), what it logged until then.
    @discardableResult
    func advanceClock(seconds: Double) throws -> String {
        let reply = try client.call(TestClockInterface.path, TestClockInterface.name, TestClockInterface.advance,
                                    [.uint64(UInt64(seconds * 1000))])
        let now = try #require(reply.first?.uint64, "Advance answered \(reply)")
        let marker = TestClockInterface.logLine(at: now)
        try #require(eventually { daemonLog.contains(marker) }, "cofferd did not log \"\(marker)\": \(daemonLog)")
        return daemonLog.components(separatedBy: marker).first ?? ""
    }
}
