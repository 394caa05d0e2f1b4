import CofferTestSupport
import Foundation
import SecretServiceClient
import Testing

/// A world for `coffer doctor`: a temporary home with XDG data, config and portal trees of its
/// own (so that what this machine has installed decides nothing but the standard
/// /usr/share/dbus-1/services), gnome-keyring's user units masked, and a way to run the built
/// `coffer doctor` in it, in a session of its own (no terminal).
final class DoctorWorld {
    let root: String
    var home: String { root + "/home" }
    var dataHome: String { root + "/data" }
    var configHome: String { root + "/config" }
    /// Two $XDG_DATA_DIRS entries and one $XDG_CONFIG_DIRS entry.
    var dataDirs: [String] { [root + "/share1", root + "/share2"] }
    var configDir: String { root + "/etc-xdg" }
    var portalDir: String { root + "/portals" }
    /// Extra variables (DISPLAY, XDG_CURRENT_DESKTOP, the bus ...).
    var extra: [String: String] = [:]

    static let secretsService = "org.freedesktop.secrets"

    init() throws {
        root = NSTemporaryDirectory() + "coffer-doctor-" + UUID().uuidString
        for directory in [home, dataHome, configHome, configDir, portalDir] + dataDirs {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        }
        for unit in ["gnome-keyring-daemon.service", "gnome-keyring-daemon.socket"] {
            try FileManager.default.createDirectory(atPath: configHome + "/systemd/user", withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(atPath: configHome + "/systemd/user/" + unit, withDestinationPath: "/dev/null")
        }
    }

    deinit { try? FileManager.default.removeItem(atPath: root) }

    var environment: [String: String] {
        ["HOME": home, "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8",
         "XDG_DATA_HOME": dataHome, "XDG_DATA_DIRS": dataDirs.joined(separator: ":"),
         "XDG_CONFIG_HOME": configHome, "XDG_CONFIG_DIRS": configDir, "XDG_DESKTOP_PORTAL_DIR": portalDir]
            .merging(extra) { _, new in new }
    }

    /// Writes `text` to `path`, creating its directory.
    func write(_ path: String, _ text: String) throws {
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    func writeActivationFile(in directory: String, named name: String = "org.freedesktop.secrets.service",
                             busName: String = DoctorWorld.secretsService, exec: String) throws {
        try write(directory + "/dbus-1/services/" + name, "[D-BUS Service]\nName=\(busName)\nExec=\(exec)\n")
    }

    /// `coffer doctor arguments...` as text and as --json, checked to say the same.
    func doctor(_ arguments: [String] = [], sourceLocation: SourceLocation = #_sourceLocation) throws -> DoctorReport {
        let text = try CLIFixture.runCoffer(["doctor"] + arguments, environment: environment)
        let json = try CLIFixture.runCoffer(["doctor", "--json"] + arguments, environment: environment)
        #expect(!text.timedOut && !json.timedOut, "coffer doctor timed out", sourceLocation: sourceLocation)
        #expect(text.status == json.status, "text and --json exit differently", sourceLocation: sourceLocation)
        let findings = try CLIFixture.jsonArray(json)
        let lines = text.stdout.split(separator: "\n").map(String.init)
        // The same findings, in the same order: one line each, status first, then check: finding.
        #expect(lines.count == findings.count, "\(text.stdout)", sourceLocation: sourceLocation)
        for (line, finding) in zip(lines, findings) {
            let status = finding["status"] as? String ?? "?", check = finding["check"] as? String ?? "?"
            let what = finding["finding"] as? String ?? "?"
            #expect(line.hasPrefix(status) && line.contains("\(check): \(what)"), "\(line) vs \(finding)", sourceLocation: sourceLocation)
            if let fix = finding["fix"] as? String { #expect(line.hasSuffix("; fix: " + fix), sourceLocation: sourceLocation) }
            #expect(["ok", "warning", "problem"].contains(status), sourceLocation: sourceLocation)
        }
        return DoctorReport(result: text, findings: findings)
    }
}

extension DoctorWorld {
    /// The findings of `check` in one `coffer doctor`.
    func doctorFindings(check: String) -> [(status: String, finding: String, fix: String?)] {
        (try? doctor().of(check)) ?? []
    }
}

/// What one `coffer doctor` said.
struct DoctorReport: CustomStringConvertible {
    let result: ChildResult
    let findings: [[String: Any]]

    /// The findings of one check, as (status, finding, fix).
    func of(_ check: String) -> [(status: String, finding: String, fix: String?)] {
        findings.filter { $0["check"] as? String == check }.map {
            ($0["status"] as? String ?? "", $0["finding"] as? String ?? "", $0["fix"] as? String)
        }
    }

    /// The one finding of `check` (the first when there are more).
    func one(_ check: String) -> (status: String, finding: String, fix: String?) {
        of(check).first ?? ("missing", "no \(check) finding in: \(result.stdout)", nil)
    }

    var description: String { result.stdout + result.stderr }
}

@Suite("coffer doctor", .serialized)
struct DoctorTests {
    /// The built cofferd serving `dataDir` on `bus`, login unlocked, asking with FakePinentry.
    private static func startCofferd(on bus: PrivateBus, dataDir: String, home: String) throws -> ChildProcess {
        let cofferd = try #require(Executables.built("cofferd"), "cofferd is not built next to the tests")
        let pinentry = try #require(Executables.built("FakePinentry"), "FakePinentry is not built next to the tests")
        let daemon = try ChildProcess(cofferd, arguments: ["--unlock", "--foreground", "--data-dir", dataDir, "--pinentry", pinentry],
                                      environment: bus.environment(["HOME": home]),
                                      stdin: Array("login password".utf8))
        try bus.waitForOwner(of: DoctorWorld.secretsService, startedBy: daemon)
        return daemon
    }

    @Test("with cofferd serving: bus ok with its PID and executable, collections with their state, exit 0")
    func servedByCofferd() throws {
        let world = try DoctorWorld()
        let bus = try PrivateBus()
        defer { bus.stop() }
        let dataDir = world.root + "/daemon-data"
        let daemon = try Self.startCofferd(on: bus, dataDir: dataDir, home: world.home)
        defer { daemon.terminate(grace: 5) }
        world.extra = ["DBUS_SESSION_BUS_ADDRESS": bus.address, "XDG_CURRENT_DESKTOP": "GNOME"]
        try world.writeActivationFile(in: world.dataHome, exec: "/opt/coffer/bin/cofferd --foreground")
        try world.write(world.portalDir + "/gnome-keyring.portal",
                        "[portal]\nDBusName=org.freedesktop.secrets\nInterfaces=org.freedesktop.impl.portal.Secret\nUseIn=gnome\n")
        // A second collection, created and then locked through the daemon.
        let created = try CLIFixture.runCoffer(["create-collection", "work", "--password-stdin"], stdin: Array("work password\n".utf8),
                                               environment: world.environment)
        #expect(created.status == 0, "\(created)")
        #expect(try CLIFixture.runCoffer(["lock", "work"], environment: world.environment).status == 0)

        let report = try world.doctor()
        let bus1 = report.one("bus")
        #expect(bus1.status == "ok", "\(report)")
        let executable = URL(fileURLWithPath: daemon.executable).resolvingSymlinksInPath().path
        #expect(bus1.finding.contains("served by cofferd (PID \(daemon.pid), \(executable))"), "\(report)")
        #expect(report.one("activation").status == "ok" && report.one("activation").finding.contains("/opt/coffer/bin/cofferd"), "\(report)")
        // gnome-keyring's portal names org.freedesktop.secrets, which is cofferd's now: cofferd serves the portal.
        let portal = report.one("portal")
        #expect(portal.status == "ok" && portal.finding.contains("gnome-keyring.portal"), "\(report)")
        #expect(portal.finding.contains("that name is cofferd's (PID \(daemon.pid))"), "\(report)")
        #expect(report.one("store").status == "ok" && report.one("store").finding.contains(dataDir), "\(report)")
        let collections = report.of("collection").map(\.finding)
        #expect(collections.contains { $0.hasPrefix("'login' is unlocked in cofferd") }, "\(report)")
        #expect(collections.contains { $0.hasPrefix("'work' is locked") }, "\(report)")
        #expect(report.one("default").finding.contains("'login'"), "\(report)")
        #expect(report.one("pinentry").status == "ok" && report.one("pinentry").finding.contains("FakePinentry"), "\(report)")
        #expect(report.one("units").status == "ok" && report.one("units").finding.contains("masked"), "\(report)")
        #expect(report.findings.allSatisfy { $0["status"] as? String != "problem" }, "\(report)")
        #expect(report.result.status == 0, "\(report)")
    }

    /// An item no application owns (here: made by a process that hid its executable, which
    /// root would read anyway, hence not as root) under ask, in a cofferd that cannot show a
    /// dialog: every application is refused it, and the doctor says what to do.
    @Test("items nobody owns under ask without a dialog: an access warning with the fix",
          .enabled(if: getuid() != 0, "root reads every process's executable: scripts/test runs the tests as a normal user"))
    func unownedItemsWithoutADialog() throws {
        let world = try DoctorWorld()
        let bus = try PrivateBus()
        defer { bus.stop() }
        let cofferd = try #require(Executables.built("cofferd"), "cofferd is not built next to the tests")
        let daemon = try ChildProcess(cofferd, arguments: ["--unlock", "--foreground", "--data-dir", world.root + "/daemon-data",
                                                           "--pinentry", world.root + "/no-pinentry"],
                                      environment: bus.environment(["HOME": world.home, "LANG": "C.UTF-8"]),
                                      stdin: Array("login password".utf8))
        defer { daemon.terminate(grace: 5) }
        try bus.waitForOwner(of: DoctorWorld.secretsService, startedBy: daemon)
        world.extra = ["DBUS_SESSION_BUS_ADDRESS": bus.address]
        #expect(world.doctorFindings(check: "access").isEmpty)

        let script = """
            import ctypes, dbus
            assert ctypes.CDLL(None).prctl(4, 0, 0, 0, 0) == 0
            bus = dbus.SessionBus()
            api = dbus.Interface(bus.get_object("org.freedesktop.secrets", "/org/freedesktop/secrets"), "org.freedesktop.Secret.Service")
            _, session = api.OpenSession("plain", dbus.String("", variant_level=1))
            login = dbus.Interface(bus.get_object("org.freedesktop.secrets", "/org/freedesktop/secrets/aliases/default"),
                                   "org.freedesktop.Secret.Collection")
            login.CreateItem({"org.freedesktop.Secret.Item.Label": "Hidden",
                              "org.freedesktop.Secret.Item.Attributes": dbus.Dictionary({"made": "hidden"}, signature="ss")},
                             dbus.Struct((session, dbus.ByteArray(b""), dbus.ByteArray(b"x"), "text/plain")), False)
            """
        let made = try ChildProcess("/usr/bin/python3", arguments: ["-c", script], environment: bus.environment()).wait(timeout: 30)
        #expect(made.exitCode == 0, "\(made)")
        let access = world.doctorFindings(check: "access")
        #expect(access.count == 1 && access.first?.status == "warning", "\(access)")
        #expect(access.first?.finding.contains("collection 'login' holds 1 item that no application owns") == true, "\(access)")
        #expect(access.first?.fix?.contains("coffer policy open --collection login") == true, "\(access)")
    }

    @Test("no session bus, or nobody owning the name: a bus problem and exit status 6")
    func nothingOnTheBus() throws {
        let world = try DoctorWorld()
        let noBus = try world.doctor()
        #expect(noBus.one("bus").status == "problem" && noBus.one("bus").finding.contains("no session bus"), "\(noBus)")
        #expect(noBus.result.status == 6, "\(noBus)")

        let bus = try PrivateBus()
        defer { bus.stop() }
        world.extra = ["DBUS_SESSION_BUS_ADDRESS": bus.address]
        let unowned = try world.doctor()
        #expect(unowned.one("bus").status == "problem" && unowned.one("bus").finding.contains("nobody owns org.freedesktop.secrets"), "\(unowned)")
        #expect(unowned.one("bus").fix?.contains("cofferd") == true)
        #expect(unowned.result.status == 6)
        #expect(unowned.result.stderr.contains("problem"), "\(unowned)")
        // This machine's activation file (gnome-keyring's, in /usr/share) is the only one: not Coffer.
        if FileManager.default.fileExists(atPath: "/usr/share/dbus-1/services/org.freedesktop.secrets.service") {
            #expect(unowned.one("activation").status == "problem", "\(unowned)")
        }
        // With Coffer's activation file first, the bus starts cofferd on demand: only a warning.
        try world.writeActivationFile(in: world.dataHome, exec: "/usr/local/bin/cofferd --foreground")
        let onDemand = try world.doctor().one("bus")
        #expect(onDemand.status == "warning" && onDemand.finding.contains("starts cofferd when an application first asks"), "\(onDemand)")
    }

    @Test("the real gnome-keyring-daemon owning the name: named, with the way to switch",
          .enabled(if: GnomeKeyringDaemon.executable != nil, "gnome-keyring-daemon is not installed"))
    func gnomeKeyringOwnsTheName() throws {
        let world = try DoctorWorld()
        let keyring = try GnomeKeyringDaemon(password: "gk password")
        defer { keyring.remove() }
        world.extra = ["DBUS_SESSION_BUS_ADDRESS": keyring.bus.address]
        let report = try world.doctor()
        let bus = report.one("bus")
        #expect(bus.status == "problem", "\(report)")
        #expect(bus.finding.contains("served by gnome-keyring-daemon (PID ") && bus.finding.contains("not by Coffer"), "\(report)")
        #expect(bus.fix?.contains("coffer import --from-bus") == true, "\(report)")
        #expect(bus.fix?.contains("systemctl --user mask --now gnome-keyring-daemon.service") == true, "\(report)")
        #expect(report.result.status == 6)
    }

    @Test("activation: files matched by their Name= line, the first directory in precedence order wins")
    func activationWinner() throws {
        let world = try DoctorWorld()
        // Not the recommended file name, but Name= says it: it counts, and XDG_DATA_HOME comes first.
        try world.writeActivationFile(in: world.dataHome, named: "coffer.service", exec: "/home/me/bin/cofferd --foreground")
        // The recommended file name with another bus name: ignored.
        try world.writeActivationFile(in: world.dataHome, busName: "org.example.Other", exec: "/usr/bin/other")
        try world.writeActivationFile(in: world.dataDirs[0], exec: "/usr/bin/gnome-keyring-daemon --start --foreground --components=secrets")
        // In $XDG_RUNTIME_DIR only the recommended file name counts.
        let runtime = world.root + "/runtime"
        try world.writeActivationFile(in: runtime, named: "wrong-name.service", exec: "/usr/bin/gnome-keyring-daemon")
        world.extra = ["XDG_RUNTIME_DIR": runtime]
        let coffer = try world.doctor().one("activation")
        #expect(coffer.status == "ok", "\(coffer)")
        #expect(coffer.finding.contains("starts cofferd (/home/me/bin/cofferd, from \(world.dataHome)/dbus-1/services/coffer.service)"), "\(coffer)")
        #expect(coffer.finding.contains("takes precedence over gnome-keyring-daemon (/usr/bin/gnome-keyring-daemon, from \(world.dataDirs[0])/"), "\(coffer)")

        // Without it, the first XDG_DATA_DIRS entry beats the second.
        try FileManager.default.removeItem(atPath: world.dataHome + "/dbus-1/services/coffer.service")
        try world.writeActivationFile(in: world.dataDirs[1], exec: "/usr/local/bin/cofferd --foreground")
        let keyring = try world.doctor().one("activation")
        #expect(keyring.status == "problem", "\(keyring)")
        #expect(keyring.finding.contains("starts gnome-keyring-daemon (/usr/bin/gnome-keyring-daemon, from \(world.dataDirs[0])/dbus-1/services/org.freedesktop.secrets.service), not Coffer"), "\(keyring)")
        #expect(keyring.fix?.contains("make install PREFIX=~/.local") == true)

        // A runtime file with the recommended name comes before everything.
        try world.writeActivationFile(in: runtime, exec: "/run/cofferd")
        let runtimeWins = try world.doctor().one("activation")
        #expect(runtimeWins.status == "ok" && runtimeWins.finding.contains("starts cofferd (/run/cofferd, from \(runtime)/dbus-1/services/"), "\(runtimeWins)")
    }

    @Test("portal: portals.conf for the desktop, then UseIn; none when configured so")
    func portalWinner() throws {
        let world = try DoctorWorld()
        let secret = "org.freedesktop.impl.portal.Secret"
        try world.write(world.portalDir + "/gnome-keyring.portal", "[portal]\nDBusName=org.freedesktop.secrets\nInterfaces=\(secret)\nUseIn=gnome\n")
        try world.write(world.portalDir + "/kwallet.portal", "[portal]\nDBusName=org.freedesktop.impl.portal.desktop.kwallet\nInterfaces=\(secret);\n")
        world.extra = ["XDG_CURRENT_DESKTOP": "GNOME"]
        let useIn = try world.doctor().one("portal")
        #expect(useIn.status == "ok" && useIn.finding.contains("gnome-keyring.portal") && useIn.finding.contains("UseIn"), "\(useIn)")

        try world.write(world.portalDir + "/kde-portals.conf", "[preferred]\ndefault=gtk\n\(secret)=kwallet\n")
        world.extra = ["XDG_CURRENT_DESKTOP": "KDE"]
        let kde = try world.doctor().one("portal")
        #expect(kde.finding.contains("kwallet.portal") && kde.finding.contains("kde-portals.conf"), "\(kde)")

        try world.write(world.portalDir + "/portals.conf", "[preferred]\ndefault=*\n\(secret)=none\n")
        world.extra = ["XDG_CURRENT_DESKTOP": "GNOME"]
        let none = try world.doctor().one("portal")
        #expect(none.finding.contains("no backend would serve") && none.finding.contains("sets it to none"), "\(none)")

        // Coffer's own file: chosen by name, and suggested where nothing is chosen.
        try world.write(world.portalDir + "/coffer.portal", "[portal]\nDBusName=org.freedesktop.secrets\nInterfaces=\(secret)\n")
        try world.write(world.portalDir + "/portals.conf", "[preferred]\n\(secret)=coffer\n")
        world.extra = ["XDG_CURRENT_DESKTOP": "XFCE"]
        let coffer = try world.doctor().one("portal")
        #expect(coffer.status == "ok" && coffer.finding.contains("coffer.portal (Coffer's own)") && coffer.finding.contains("portals.conf"), "\(coffer)")
        try FileManager.default.removeItem(atPath: world.portalDir + "/portals.conf")
        let unchosen = try world.doctor().one("portal")
        #expect(unchosen.finding.contains("no backend would serve") && unchosen.finding.contains("coffer.portal"), "\(unchosen)")
        #expect(unchosen.finding.contains("add \(secret)=coffer under [preferred]"), "\(unchosen)")
    }

    @Test("portal: a portals.conf in $XDG_CONFIG_HOME beats a desktop-specific one further down",
          .enabled(if: FileManager.default.fileExists(atPath: "/usr/share/xdg-desktop-portal/portals/gnome-keyring.portal"),
                   "gnome-keyring's portal file is not installed"))
    func portalConfigurationPrecedence() throws {
        let world = try DoctorWorld()
        world.extra = ["XDG_CURRENT_DESKTOP": "GNOME"]
        try world.write(world.dataDirs[0] + "/xdg-desktop-portal/gnome-portals.conf",
                        "[preferred]\norg.freedesktop.impl.portal.Secret=gnome-keyring\n")
        var environment = world.environment
        environment["XDG_DESKTOP_PORTAL_DIR"] = nil
        let chosen = try CLIFixture.runCoffer(["doctor", "--json"], environment: environment)
        #expect(try Self.portal(chosen).contains("chosen in \(world.dataDirs[0])/xdg-desktop-portal/gnome-portals.conf"), "\(chosen)")
        try world.write(world.configHome + "/xdg-desktop-portal/portals.conf", "[preferred]\norg.freedesktop.impl.portal.Secret=none\n")
        let none = try CLIFixture.runCoffer(["doctor", "--json"], environment: environment)
        #expect(try Self.portal(none).contains("\(world.configHome)/xdg-desktop-portal/portals.conf sets it to none"), "\(none)")
    }

    private static func portal(_ result: ChildResult) throws -> String {
        try CLIFixture.jsonArray(result).first { $0["check"] as? String == "portal" }?["finding"] as? String ?? ""
    }

    @Test("autostart: gnome-keyring's file starts it in its desktops unless hidden by the user's copy")
    func autostart() throws {
        let world = try DoctorWorld()
        let system = world.configDir + "/autostart/gnome-keyring-secrets.desktop"
        try world.write(system, "[Desktop Entry]\nType=Application\nName=Secret Storage Service\nExec=/usr/bin/gnome-keyring-daemon --start --components=secrets\nOnlyShowIn=GNOME;Unity;MATE;\n")
        world.extra = ["XDG_CURRENT_DESKTOP": "ubuntu:GNOME"]
        let starts = try world.doctor()
        #expect(starts.one("autostart").status == "problem" && starts.one("autostart").finding.contains(system), "\(starts)")
        let override = world.configHome + "/autostart/gnome-keyring-secrets.desktop"
        #expect(starts.one("autostart").fix?.contains("echo Hidden=true >> \(override)") == true, "\(starts)")
        #expect(starts.result.status == 6)

        world.extra = ["XDG_CURRENT_DESKTOP": "KDE"]
        #expect(try world.doctor().one("autostart").status == "ok")

        world.extra = ["XDG_CURRENT_DESKTOP": "GNOME"]
        try world.write(override, "[Desktop Entry]\nType=Application\nName=Secret Storage Service\nHidden=true\n")
        let hidden = try world.doctor().one("autostart")
        #expect(hidden.status == "ok" && hidden.finding.contains("hidden by \(override)"), "\(hidden)")
    }

    @Test("store: a directory others can read is a problem with the chmod fix, and doctor changes nothing")
    func storePermissions() throws {
        let world = try DoctorWorld()
        let store = world.root + "/store"
        let created = try CLIFixture.runCoffer(["--data-dir", store, "create-collection", "login", "--password-stdin"],
                                               stdin: Array("pw\n".utf8), environment: world.environment)
        #expect(created.status == 0, "\(created)")
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: store)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: store + "/login.coffer")
        let report = try world.doctor(["--data-dir", store])
        let findings = report.of("store")
        #expect(findings.contains { $0.status == "problem" && $0.finding.contains("mode 0755") && $0.fix == "chmod 700 \(store)" }, "\(report)")
        #expect(findings.contains { $0.status == "problem" && $0.finding.contains("login.coffer") && $0.fix == "chmod 600 \(store)/login.coffer" }, "\(report)")
        #expect(report.result.status == 6)
        let mode = try FileManager.default.attributesOfItem(atPath: store)[.posixPermissions] as? Int
        #expect(mode == 0o755, "doctor changed the store's mode")
    }

    @Test("collections: a damaged file is reported damaged, one with set-aside bytes as recovered with losses")
    func damagedCollections() throws {
        let world = try DoctorWorld()
        let store = world.root + "/store"
        for id in ["login", "work"] {
            let created = try CLIFixture.runCoffer(["--data-dir", store, "create-collection", id, "--password-stdin"],
                                                   stdin: Array("pw\n".utf8), environment: world.environment)
            #expect(created.status == 0, "\(created)")
        }
        let damaged = store + "/work.coffer"
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: damaged)))
        bytes[0] ^= 0xFF
        try Data(bytes).write(to: URL(fileURLWithPath: damaged))
        let before = bytes
        try world.write(store + "/login.coffer.quarantine", "coffer set-aside: 0 offset 100 length 3\nabc\n")

        let report = try world.doctor(["--data-dir", store])
        let collections = report.of("collection")
        #expect(collections.contains { $0.status == "problem" && $0.finding.hasPrefix("'work' is damaged") && $0.fix?.contains("coffer import backup") == true }, "\(report)")
        #expect(collections.contains { $0.status == "warning" && $0.finding.hasPrefix("'login' is locked") && $0.finding.contains("recovered with losses") && $0.finding.contains("login.coffer.quarantine") }, "\(report)")
        #expect(report.result.status == 6)
        #expect(try [UInt8](Data(contentsOf: URL(fileURLWithPath: damaged))) == before, "doctor changed the damaged file")
    }

    @Test("pinentry: no display and no terminal is a problem; with a display, the graphical program found is named")
    func pinentry() throws {
        let world = try DoctorWorld()
        let nowhere = try world.doctor().one("pinentry")
        #expect(nowhere.status == "problem" && nowhere.finding.contains("no display") && nowhere.finding.contains("no terminal"), "\(nowhere)")
        #expect(nowhere.fix?.contains("GPG_TTY") == true)

        let bin = world.root + "/bin"
        try world.write(bin + "/pinentry-gnome3", "#!/bin/sh\nexit 0\n")
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: bin + "/pinentry-gnome3")
        world.extra = ["DISPLAY": ":7", "PATH": bin + ":/usr/bin:/bin"]
        let shown = try world.doctor().one("pinentry")
        #expect(shown.status == "ok" && shown.finding.contains("\(bin)/pinentry-gnome3 (on display :7)"), "\(shown)")

        world.extra = ["COFFER_PINENTRY": world.root + "/missing-pinentry"]
        let missing = try world.doctor().one("pinentry")
        #expect(missing.status == "problem" && missing.finding.contains("missing-pinentry"), "\(missing)")
    }
}
