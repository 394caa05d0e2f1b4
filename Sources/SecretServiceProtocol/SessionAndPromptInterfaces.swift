import DBusKit

/// `org.freedesktop.Secret.Session` at `…/session/s<n>`: a transfer session, closed by its client.
public enum SessionInterface {
    public static let name = "org.freedesktop.Secret.Session"

    public static let description = InterfaceDescription(name, methods: [Close.description])

    /// Closes the session.
    public enum Close: DBusMethod {
        public static let interface = SessionInterface.name
        public static let name = "Close"
        public typealias Input = NoArguments
        public typealias Output = NoArguments
    }
}

/// `org.freedesktop.Secret.Prompt` at `…/prompt/p<n>`: an operation waiting for the user.
/// `Prompt` shows it; the client then waits for `Completed(dismissed, result)`.
public enum PromptInterface {
    public static let name = "org.freedesktop.Secret.Prompt"

    public static let description = InterfaceDescription(name, methods: [
        Prompt.description, Dismiss.description,
    ], signals: [
        SignalDescription(Signal.completed, [.init("dismissed", .boolean), .init("result", .variant)]),
    ])

    public enum Signal {
        public static let completed = "Completed"
    }

    /// Shows the prompt; `windowID` is the client's window to attach a dialog to ("" for none).
    public enum Prompt: DBusMethod {
        public static let interface = PromptInterface.name
        public static let name = "Prompt"

        public struct Input: DBusArguments {
            public var windowID: String
            public init(windowID: String) { self.windowID = windowID }
            public static var argumentDescriptions: [ArgumentDescription] { [.init("window-id", String.self)] }
            public init(decoding d: inout ArgumentDecoder) throws(DBusError) { windowID = try d.next() }
            public var argumentValues: [DBusValue] { [windowID.dbusValue] }
        }

        public typealias Output = NoArguments
    }

    /// Dismisses the prompt: `Completed(true, …)` follows.
    public enum Dismiss: DBusMethod {
        public static let interface = PromptInterface.name
        public static let name = "Dismiss"
        public typealias Input = NoArguments
        public typealias Output = NoArguments
    }
}
