import DBusKit
import Dispatch
import Foundation

extension PrivateBus {
    /// Waits until `name` has an owner other than `previousOwner` (a daemon started as `child`
    /// took it) and returns that owner. Throws, stopping the child, if it exits first or
    /// `timeout` passes.
    @discardableResult
    public func waitForOwner(of name: String, startedBy child: ChildProcess, previousOwner: String? = nil,
                             timeout: TimeInterval = 30) throws -> String {
        let probe = try DBusConnection(address: address)
        defer { probe.close() }
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let owner = try? probe.nameOwner(name), owner != previousOwner { return owner }
            if !child.isRunning {
                throw ChildProcessError.timedOut("\(child.executable) exited before owning \(name): \(child.wait(timeout: 1))")
            }
            if Date() >= deadline {
                throw ChildProcessError.timedOut("\(child.executable) did not own \(name) within \(Int(timeout)) s: \(child.terminate(grace: 1))")
            }
            usleep(10_000)
        }
    }
}
