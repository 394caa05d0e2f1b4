import SystemKit
import Testing

/// The parsers of /proc files and of `/.flatpak-info`, on sample text.
@Suite struct ProcFileParsingTests {
    // MARK: /proc/PID/stat

    /// Field 22 of a real line from this kernel (a `sleep`), with everything after it.
    static let sleepStat = "4242 (sleep) S 4200 4242 4200 34816 4242 4194304 97 0 0 0 0 0 0 0 20 0 1 0 3512345 5566464 224 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 0 0 0\n"

    @Test func startTimeIsField22() {
        let stat = ProcessStat(parsing: Self.sleepStat)
        #expect(stat?.startTime == 3512345)
        #expect(stat?.state == "S")
        #expect(stat?.hasExited == false)
    }

    /// The command name is the process's to choose: `)`, spaces and numbers in it do not shift
    /// the fields after it.
    @Test func aCommandNameWithParenthesesAndSpacesDoesNotShiftTheFields() {
        for name in ["a) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 99", ") (", "x)", "((", " ", "))) Z 0"] {
            let line = Self.sleepStat.replacingFirst("(sleep)", with: "(\(name))")
            #expect(ProcessStat(parsing: line)?.startTime == 3512345, "comm \(name.debugDescription)")
            #expect(ProcessStat(parsing: line)?.state == "S", "comm \(name.debugDescription)")
        }
    }

    @Test func zombiesAndDeadProcessesHaveExited() {
        #expect(ProcessStat(parsing: Self.sleepStat.replacingFirst(") S ", with: ") Z "))?.hasExited == true)
        #expect(ProcessStat(parsing: Self.sleepStat.replacingFirst(") S ", with: ") X "))?.hasExited == true)
        #expect(ProcessStat(parsing: Self.sleepStat.replacingFirst(") S ", with: ") D "))?.hasExited == false)
    }

    @Test func malformedStatLinesAreRejected() {
        let truncated = String(Self.sleepStat.prefix(60))
        for text in ["", "garbage", "4242 sleep S 1 2 3", truncated, "4242 (sleep)",
                     Self.sleepStat.replacingFirst(" 3512345 ", with: " -3512345 "),
                     Self.sleepStat.replacingFirst(" 3512345 ", with: " 35x2345 "),
                     Self.sleepStat.replacingFirst(" 3512345 ", with: " 99999999999999999999999 "),
                     Self.sleepStat.replacingFirst(") S ", with: ") SS "),
                     Self.sleepStat.replacingFirst(") S ", with: ") 7 ")] {
            #expect(ProcessStat(parsing: text) == nil, "\(text.debugDescription)")
        }
    }

    // MARK: /.flatpak-info

    /// What Flatpak writes (trimmed).
    static let flatpakInfo = """
        [Application]
        name=org.gnome.Maps
        runtime=runtime/org.gnome.Platform/x86_64/45

        [Instance]
        instance-id=1234567890
        app-path=/var/lib/flatpak/app/org.gnome.Maps/x86_64/stable/active/files
        branch=stable
        flatpak-version=1.14.4
        session-bus-proxy=true

        [Context]
        shared=network;ipc;
        sockets=x11;wayland;pulseaudio;

        """

    @Test func theApplicationGroupNamesTheApp() {
        #expect(FlatpakInfo.applicationID(in: Array(Self.flatpakInfo.utf8)) == "org.gnome.Maps")
        let spaced = "# a comment\n\n  [Application]  \n  name =  org.example.App-1 \r\n"
        #expect(FlatpakInfo.applicationID(in: Array(spaced.utf8)) == "org.example.App-1")
        let twice = "[Application]\nname=org.example.First\n[Instance]\nname=org.example.Other\n[Application]\nname=org.example.Last\n"
        #expect(FlatpakInfo.applicationID(in: Array(twice.utf8)) == "org.example.Last")   // as GKeyFile reads it
    }

    @Test func aRuntimeOnlySandboxOrAnotherGroupNamesNoApp() {
        let runtime = "[Runtime]\nname=org.gnome.Platform\nruntime=runtime/org.gnome.Platform/x86_64/45\n"
        #expect(FlatpakInfo.applicationID(in: Array(runtime.utf8)) == nil)
        let elsewhere = "[Instance]\nname=org.example.App\n[Application]\nruntime=x\nname[de]=org.example.Localized\n"
        #expect(FlatpakInfo.applicationID(in: Array(elsewhere.utf8)) == nil)
        #expect(FlatpakInfo.applicationID(in: []) == nil)
    }

    @Test func filesThatAreNotKeyFilesNameNoApp() {
        let good = Array("[Application]\nname=org.example.App\n".utf8)
        #expect(FlatpakInfo.applicationID(in: good) == "org.example.App")
        #expect(FlatpakInfo.applicationID(in: good + [0]) == nil)                       // NUL
        #expect(FlatpakInfo.applicationID(in: good + [0xFF, 0xFE, 0x0A]) == nil)        // not UTF-8
        #expect(FlatpakInfo.applicationID(in: good + Array("no equals sign\n".utf8)) == nil)
        #expect(FlatpakInfo.applicationID(in: Array("name=org.example.App\n[Application]\n".utf8)) == nil)   // key before any group
        #expect(FlatpakInfo.applicationID(in: Array("[Application\nname=org.example.App\n".utf8)) == nil)
        let padded = good + Array(repeating: UInt8(ascii: "#"), count: FlatpakInfo.sizeLimit)
        #expect(FlatpakInfo.applicationID(in: padded) == nil)                           // huge
        var random = SystemRandomNumberGenerator()
        let binary = (0..<4096).map { _ in UInt8.random(in: 0...255, using: &random) }
        #expect(FlatpakInfo.applicationID(in: good + binary) == nil)
    }

    @Test func appIDsFollowFlatpaksRule() {
        for id in ["org.example.App", "org.example.My-App", "com.example_1.x", "io.github.A_b.C"] {
            #expect(FlatpakInfo.isValidApplicationID(id), "\(id)")
        }
        for id in ["", "org.example", "org..App", ".org.example.App", "org.example.App.", "org.1example.App",
                   "org.ex-ample.App", "org.example.App/x", "org.example.Äpp", "org.example.a b",
                   "org.example." + String(repeating: "a", count: 250)] {
            #expect(!FlatpakInfo.isValidApplicationID(id), "\(id)")
            #expect(FlatpakInfo.applicationID(in: Array("[Application]\nname=\(id)\n".utf8)) == nil, "\(id)")
        }
    }

    // MARK: Snaps

    @Test func appArmorLabelsOfSnaps() {
        #expect(SnapLabel.securityLabel("snap.firefox.firefox (enforce)\n") == .snap("firefox"))
        #expect(SnapLabel.securityLabel("snap.firefox.geckodriver (complain)") == .snap("firefox"))
        #expect(SnapLabel.securityLabel("snap.firefox_beta.hook.configure (enforce)\n") == .snap("firefox_beta"))
        #expect(SnapLabel.securityLabel("snap.code.code (complain)\0") == .snap("code"))
    }

    @Test func appArmorLabelsOfOtherProcesses() {
        for label in ["unconfined\n", "unconfined", "/usr/bin/man (enforce)\n", "snap-update-ns.firefox (enforce)\n",
                      "snap.firefox (enforce)", "snap..firefox (enforce)", "snap.Firefox.firefox (enforce)",
                      "snap.fire fox.firefox (enforce)", "snap.firefox. (enforce)", "firefox (enforce)"] {
            #expect(SnapLabel.securityLabel(label) == .notSnap, "\(label.debugDescription)")
        }
        // Not AppArmor: no label at all, or another module's.
        for label in ["", "\n", "unconfined_u:unconfined_r:unconfined_t:s0-s0:c0.c1023\n", "kernel",
                      "snap.firefox.firefox", "snap.firefox.firefox (Enforce)", "\u{1}\u{2}garbage(("] {
            #expect(SnapLabel.securityLabel(label) == .unknown, "\(label.debugDescription)")
        }
    }

    @Test func snapScopesAndServicesInTheCgroupFile() {
        let v2 = "0::/user.slice/user-1000.slice/user@1000.service/app.slice/snap.firefox.firefox-2c6a1bd4-9f2e-4b0c-a1e3-0c5c1d2e3f4a.scope\n"
        #expect(SnapLabel.snapName(fromCgroups: v2) == "firefox")
        let old = "0::/user.slice/user-1000.slice/user@1000.service/snap.firefox.firefox.1234-5678.scope\n"
        #expect(SnapLabel.snapName(fromCgroups: old) == "firefox")
        #expect(SnapLabel.snapName(fromCgroups: "0::/system.slice/snap.lxd.daemon.service\n") == "lxd")
        #expect(SnapLabel.snapName(fromCgroups: "0::/user.slice/snap.foo_dev.hook.configure-2c6a1bd4.scope\n") == "foo_dev")
        let v1 = """
            12:pids:/user.slice/user-1000.slice/user@1000.service
            4:memory:/user.slice/user-1000.slice/user@1000.service
            1:name=systemd:/user.slice/user-1000.slice/user@1000.service/app.slice/snap.spotify.spotify-7a1b.scope
            0::/user.slice/user-1000.slice/user@1000.service/app.slice/snap.spotify.spotify-7a1b.scope

            """
        #expect(SnapLabel.snapName(fromCgroups: v1) == "spotify")
    }

    @Test func cgroupsOfOtherProcesses() {
        for text in ["0::/user.slice/user-1000.slice/user@1000.service/app.slice/app-gnome-firefox-4242.scope\n",
                     "0::/\n", "", "garbage", "0::/snap.firefox.firefox-1.scope/extra\n",
                     "0::/user.slice/snap.firefox.scope\n", "0::/user.slice/snap..x.scope\n",
                     "0::/user.slice/snap.Firefox.x.scope\n", "0::/user.slice/snap.firefox..scope\n",
                     "0::/user.slice/snap.firefox.firefox.slice\n",
                     "4:memory:/user.slice/snap.firefox.firefox-1.scope\n",   // a v1 controller, not systemd's
                     "0::/user.slice/notsnap.firefox.firefox-1.scope\n"] {
            #expect(SnapLabel.snapName(fromCgroups: text) == nil, "\(text.debugDescription)")
        }
    }

    @Test func snapInstanceNames() {
        for name in ["firefox", "lxd", "code-insiders", "a", "0ad", "foo_dev", "foo_1", "x_abcdefghij"] {
            #expect(SnapLabel.isValidInstanceName(name), "\(name)")
        }
        for name in ["", "Firefox", "-foo", "foo-", "foo--bar", "123", "foo_", "foo_ABC", "foo_abcdefghijk",
                     "foo_bar_baz", "fo o", String(repeating: "a", count: 41)] {
            #expect(!SnapLabel.isValidInstanceName(name), "\(name)")
        }
    }
}

extension String {
    /// This string with the first `target` replaced (the test fails loudly if there is none).
    func replacingFirst(_ target: String, with replacement: String) -> String {
        guard let range = firstRange(of: target) else {
            Issue.record("\(target.debugDescription) not in \(debugDescription)")
            return self
        }
        var replaced = self
        replaced.replaceSubrange(range, with: replacement)
        return replaced
    }
}
