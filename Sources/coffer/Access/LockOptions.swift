import ArgumentParser
import CofferCore
import CofferStore

/// `coffer policy`'s options for when a collection locks by itself (kept in the settings file,
/// not in the collection: no password is needed to change them).
struct LockOptions: ParsableArguments {
    @Option(name: .customLong("lock-after-idle"),
            help: ArgumentHelp("Lock after this long without a secret read or written: 15m, 2h, 1h30m, or never.", valueName: "duration"))
    var lockAfterIdle: String?

    @Option(name: .customLong("lock-on-screen-lock"), help: ArgumentHelp("Lock when the screen locks: yes or no.", valueName: "yes|no"))
    var lockOnScreenLock: String?

    @Option(name: .customLong("lock-on-suspend"), help: ArgumentHelp("Lock before the computer suspends or hibernates: yes or no.", valueName: "yes|no"))
    var lockOnSuspend: String?

    @Option(name: .customLong("fingerprint-window"),
            help: ArgumentHelp("For this long after the password, a collection that locked by itself unlocks with a fingerprint too: 4h, 30m, or never.",
                               valueName: "duration"))
    var fingerprintWindow: String?

    @Flag(name: .customLong("every-collection"),
          help: "Change the lock settings of every collection that has none of its own, instead of one collection's.")
    var everyCollection = false

    /// The settings named on the command line, with their new values.
    var changes: [(LockSettings.Key, String)] {
        [(LockSettings.Key.lockAfterIdle, lockAfterIdle), (.lockOnScreenLock, lockOnScreenLock),
         (.lockOnSuspend, lockOnSuspend), (.fingerprintWindow, fingerprintWindow)]
            .compactMap { key, value in value.map { (key, $0) } }
    }

    func validate() throws {
        var probe = LockSettings.standard
        for (key, value) in changes where !probe.set(key, from: value) {
            throw ValidationError("--\(key.rawValue) takes \(key.accepts), not '\(value)'")
        }
        if everyCollection && changes.isEmpty {
            throw ValidationError("--every-collection says where lock settings go; add the settings to change (e.g. --lock-after-idle 30m)")
        }
    }

    /// Writes the changes for `id` (nil: every collection) to the settings file.
    func apply(to id: CollectionID?, in file: LockConfigurationFile) throws {
        var configuration = try file.read()
        for (key, value) in changes { try configuration.set(key, to: value, for: id) }
        try file.write(configuration)
    }

    /// What `settings` say, one line each, as `coffer policy` prints them.
    static func describe(_ settings: LockSettings) -> [String] {
        [
            "locks after \(settings.idleSeconds.map(DurationText.describe) ?? "never (no idle time limit)") without use",
            "locks when the screen locks: \(settings.text(of: .lockOnScreenLock))",
            "locks before suspend and hibernate: \(settings.text(of: .lockOnSuspend))",
            "fingerprint unlock within \(settings.fingerprintWindowSeconds.map(DurationText.describe).map { "\($0) of the password" } ?? "never (only the password unlocks)")",
        ]
    }
}
