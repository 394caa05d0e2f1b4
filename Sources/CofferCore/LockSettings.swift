/// When an unlocked collection locks by itself, and how it may be unlocked again.
///
/// The model is an authorization with a lifetime: a password unlocks a collection until it
/// has not been used for `idleSeconds`, the screen locks, or the system sleeps. Within
/// `fingerprintWindowSeconds` of the password, a collection locked that way may be unlocked
/// again with a fingerprint instead.
public struct LockSettings: Equatable, Sendable {
    /// Lock after this many seconds without a secret read or written (nil: never).
    public var idleSeconds: UInt64?
    /// Lock when the screen locks (logind's `Lock`, the screensaver's `ActiveChanged`).
    public var onScreenLock: Bool
    /// Lock before the system suspends or hibernates (logind's `PrepareForSleep`).
    public var onSuspend: Bool
    /// How long after the password a collection locked by itself may be unlocked with a
    /// fingerprint (nil: never; only the password unlocks).
    public var fingerprintWindowSeconds: UInt64?

    public init(idleSeconds: UInt64?, onScreenLock: Bool, onSuspend: Bool, fingerprintWindowSeconds: UInt64?) {
        self.idleSeconds = idleSeconds
        self.onScreenLock = onScreenLock
        self.onSuspend = onSuspend
        self.fingerprintWindowSeconds = fingerprintWindowSeconds
    }

    /// What applies where the settings file says nothing: 15 minutes idle, screen lock and
    /// suspend lock, 4 hours of fingerprint re-unlock.
    public static let standard = LockSettings(idleSeconds: 15 * 60, onScreenLock: true, onSuspend: true,
                                              fingerprintWindowSeconds: 4 * 3600)

    /// One setting, as the settings file and `coffer policy` name it.
    public enum Key: String, CaseIterable, Sendable {
        case lockAfterIdle = "lock-after-idle"
        case lockOnScreenLock = "lock-on-screen-lock"
        case lockOnSuspend = "lock-on-suspend"
        case fingerprintWindow = "fingerprint-window"

        /// What it takes, for error messages and help.
        public var accepts: String {
            switch self {
            case .lockAfterIdle, .fingerprintWindow: "a duration such as 15m, 2h or 1h30m, or never"
            case .lockOnScreenLock, .lockOnSuspend: "yes or no"
            }
        }
    }

    /// The value of `key` as text (`15m`, `never`, `yes`).
    public func text(of key: Key) -> String {
        switch key {
        case .lockAfterIdle: Self.durationText(idleSeconds)
        case .lockOnScreenLock: onScreenLock ? "yes" : "no"
        case .lockOnSuspend: onSuspend ? "yes" : "no"
        case .fingerprintWindow: Self.durationText(fingerprintWindowSeconds)
        }
    }

    /// Sets `key` from `text`; false (nothing changed) when `text` is not what it accepts.
    public mutating func set(_ key: Key, from text: String) -> Bool {
        switch key {
        case .lockAfterIdle:
            guard let value = Self.duration(text) else { return false }
            idleSeconds = value
        case .fingerprintWindow:
            guard let value = Self.duration(text) else { return false }
            fingerprintWindowSeconds = value
        case .lockOnScreenLock:
            guard let value = Self.flag(text) else { return false }
            onScreenLock = value
        case .lockOnSuspend:
            guard let value = Self.flag(text) else { return false }
            onSuspend = value
        }
        return true
    }

    private static func durationText(_ seconds: UInt64?) -> String {
        seconds.map(DurationText.describe) ?? "never"
    }

    /// `never` or `0` is nil; otherwise a duration of at most a year.
    private static func duration(_ text: String) -> UInt64?? {
        if text == "never" || text == "0" { return .some(nil) }
        guard let seconds = DurationText.seconds(text), seconds > 0, seconds <= 366 * 86_400 else { return nil }
        return .some(seconds)
    }

    private static func flag(_ text: String) -> Bool? {
        switch text {
        case "yes", "true", "on": true
        case "no", "false", "off": false
        default: nil
        }
    }
}
