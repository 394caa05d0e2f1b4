import CofferCore
import Testing

/// The settings file's text: read, resolved per collection, changed one line at a time.
struct LockConfigurationTests {
    @Test func durationsReadAndWrittenAsPeopleTypeThem() {
        #expect(DurationText.seconds("15m") == 900)
        #expect(DurationText.seconds("1h30m") == 5400)
        #expect(DurationText.seconds("2w1d") == 15 * 86_400)
        for bad in ["", "15", "m", "1x", "1.5h", "-1m", "99999999999999999999s"] { #expect(DurationText.seconds(bad) == nil, "\(bad)") }
        for seconds: UInt64 in [0, 1, 59, 60, 900, 5400, 4 * 3600, 86_400 + 1, 604_800 * 3 + 7] {
            #expect(DurationText.seconds(DurationText.describe(seconds)) == seconds)
        }
        #expect(DurationText.describe(5400) == "1h30m")
        #expect(DurationText.describe(0) == "0s")
    }

    @Test func withoutAFileTheStandardSettingsApply() {
        let settings = LockConfiguration().settings(for: .login)
        #expect(settings == .standard)
        #expect(settings.idleSeconds == 900 && settings.onScreenLock && settings.onSuspend && settings.fingerprintWindowSeconds == 4 * 3600)
    }

    @Test func aCollectionsSectionBeatsEveryCollectionsWhichBeatsTheStandard() throws {
        let configuration = LockConfiguration(text: """
        # comment
        [every collection]
        lock-after-idle = 1h
        lock-on-suspend = no

        [collection work]
        lock-after-idle = never
        fingerprint-window = 0
        """)
        #expect(configuration.problems.isEmpty)
        let work = configuration.settings(for: try #require(CollectionID("work")))
        #expect(work == LockSettings(idleSeconds: nil, onScreenLock: true, onSuspend: false, fingerprintWindowSeconds: nil))
        let login = configuration.settings(for: .login)
        #expect(login == LockSettings(idleSeconds: 3600, onScreenLock: true, onSuspend: false, fingerprintWindowSeconds: 4 * 3600))
        #expect(configuration.everyCollectionSettings == login)
    }

    @Test func linesItCannotReadAreIgnoredAndNamed() throws {
        let configuration = LockConfiguration(text: """
        lock-after-idle = 1m
        [every collection]
        lock-after-idle = soon
        lock-on-screen-lock = perhaps
        lock-on-suspend = no
        colour = blue
        just words
        [collection not-an-id]
        lock-after-idle = 1m
        [other]
        lock-on-suspend = yes
        """)
        #expect(configuration.problems.count == 7, "\(configuration.problems)")
        #expect(configuration.problems[0].hasPrefix("line 1: 'lock-after-idle' comes before any [section]"))
        #expect(configuration.problems[1] == "line 3: lock-after-idle takes a duration such as 15m, 2h or 1h30m, or never, not 'soon'; ignored")
        #expect(configuration.problems[3].hasPrefix("line 6: unknown setting 'colour'"))
        #expect(configuration.problems[4].hasPrefix("line 7: not 'name = value'"))
        #expect(configuration.problems[5].hasPrefix("line 8: unknown section [collection not-an-id]"))
        // What could be read still counts; nothing else does.
        #expect(configuration.settings(for: .login) == LockSettings(idleSeconds: 900, onScreenLock: true, onSuspend: false,
                                                                      fingerprintWindowSeconds: 4 * 3600))
    }

    @Test func aChangeRewritesOneLineAndKeepsTheRest() throws {
        var configuration = LockConfiguration(text: "# mine\n[every collection]\nlock-after-idle = 1h  \n\n# work is special\n[collection work]\nlock-on-suspend = no\n")
        let work = try #require(CollectionID("work"))
        try configuration.set(.lockAfterIdle, to: "30m", for: nil)
        try configuration.set(.lockAfterIdle, to: "never", for: work)
        try configuration.set(.lockOnScreenLock, to: "no", for: .login)
        #expect(configuration.text == """
        # mine
        [every collection]
        lock-after-idle = 30m

        # work is special
        [collection work]
        lock-on-suspend = no
        lock-after-idle = never

        [collection login]
        lock-on-screen-lock = no

        """)
        #expect(configuration.settings(for: work).idleSeconds == nil)
        #expect(configuration.settings(for: .login).idleSeconds == 1800)
        #expect(throws: CofferError.invalidArgument("lock-on-suspend takes yes or no, not 'maybe'")) {
            try configuration.set(.lockOnSuspend, to: "maybe", for: nil)
        }
        #expect(!configuration.text.contains("maybe"))
        // A setting written twice by hand: the last counts, so that one changes and the other goes.
        var twice = LockConfiguration(text: "[every collection]\nlock-after-idle = 1h\nlock-on-suspend = no\nlock-after-idle = 2h\n")
        #expect(twice.settings(for: .login).idleSeconds == 7200)
        try twice.set(.lockAfterIdle, to: "5m", for: nil)
        #expect(twice.text == "[every collection]\nlock-on-suspend = no\nlock-after-idle = 5m\n")
        #expect(twice.settings(for: .login).idleSeconds == 300)
        // Into an empty file.
        var empty = LockConfiguration()
        try empty.set(.fingerprintWindow, to: "1h", for: nil)
        #expect(empty.text == "[every collection]\nfingerprint-window = 1h\n")
    }
}
