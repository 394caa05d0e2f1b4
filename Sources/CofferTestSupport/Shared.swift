import Foundation

/// A thread-safe box for values written by loop-thread callbacks and read by the test.
public final class Shared<T>: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: T

    public init(_ value: T) { stored = value }

    public var value: T {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }

    @discardableResult
    public func mutate<R>(_ body: (inout T) -> R) -> R { lock.withLock { body(&stored) } }
}
