import Foundation

/// Waits (at most `timeout` seconds) until `condition` holds, looking every 5 ms; whether it did.
public func eventually(timeout: TimeInterval = 5, _ condition: () -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if condition() { return true }
        usleep(5_000)
    }
    return condition()
}
