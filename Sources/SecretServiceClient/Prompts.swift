import DBusKit
import Dispatch
import SecretServiceProtocol
import Synchronization

/// What became of a prompt the user was shown.
public enum PromptError: Error, Equatable, CustomStringConvertible {
    /// The user (or the provider) dismissed it: nothing was done.
    case dismissed
    /// No answer within the time allowed; the prompt was dismissed.
    case timedOut(Duration)

    public var description: String {
        switch self {
        case .dismissed: "the prompt was dismissed; nothing was done"
        case .timedOut(let limit): "nobody answered the prompt within \(limit); it was dismissed"
        }
    }
}

extension SecretServiceClient {
    /// Shows `prompt` (for the window `windowID`, "" for none) and waits for its `Completed`
    /// signal; returns the result. Throws `PromptError.dismissed` when dismissed, and dismisses
    /// it and throws `.timedOut` after `timeout`.
    public func complete(prompt: ObjectPath, windowID: String = "",
                         timeout: Duration = SecretServiceClient.slowCallTimeout) throws -> DBusValue {
        let rule = SignalRule(interface: PromptInterface.name, member: PromptInterface.Signal.completed, path: prompt)
        let outcome = Mutex<(dismissed: Bool, result: DBusValue)?>(nil)
        let completed = DispatchSemaphore(value: 0)
        let token = connection.addSignalHandler(rule) { message in
            guard let arguments = try? message.arguments(), arguments.count == 2,
                  case .boolean(let dismissed) = arguments[0], case .variant(let result) = arguments[1] else { return }
            outcome.withLock { $0 = (dismissed, result) }
            completed.signal()
        }
        defer { connection.removeHandler(token) }
        // gnome-keyring broadcasts Completed; cofferd sends it to the caller only.
        try connection.addMatch(rule.matchRule)
        defer { try? connection.removeMatch(rule.matchRule) }
        startLoop()
        defer { stopLoop() }

        _ = try call(PromptInterface.Prompt.self, on: prompt, .init(windowID: windowID))
        guard completed.wait(timeout: .now() + .milliseconds(Int(timeout.components.seconds) * 1000)) == .success,
              let (dismissed, result) = outcome.withLock({ $0 }) else {
            _ = try? call(PromptInterface.Dismiss.self, on: prompt, NoArguments())
            throw PromptError.timedOut(timeout)
        }
        if dismissed { throw PromptError.dismissed }
        return result
    }

    /// Completes `prompt` unless it is `/` (nothing to ask); the result, or nil.
    func completeIfNeeded(_ prompt: ObjectPath) throws -> DBusValue? {
        prompt == SecretPath.none ? nil : try complete(prompt: prompt)
    }
}
