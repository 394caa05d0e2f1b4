import CofferCrypto
import CofferTestSupport
import DBusKit
import Foundation
import SecretServiceClient
import SecretServiceProtocol
import Testing

/// Which application may read which secret, with the real cofferd and real programs as the
/// applications: `secret-tool`, a copy of it at another path (a different program to the
/// service), `/usr/bin/python3` with dbus-python, and this test process itself.
@Suite(.timeLimit(.minutes(10))) struct AuthorizationTests {
    static let attributes = ["service": "authz", "account": "me"]

    /// Starts cofferd and makes `other-secret-tool`, a copy of secret-tool at another path.
    struct World {
        let f: DaemonFixture
        let otherTool: String

        init(pinentry: [String]? = [], pinentryProgram: String? = nil, daemonEnvironment: [String: String] = [:],
             lockSettings: String? = nil) throws {
            f = try DaemonFixture(pinentry: pinentry, pinentryProgram: pinentryProgram, daemonEnvironment: daemonEnvironment,
                                  lockSettings: lockSettings)
            otherTool = f.root + "/bin/other-secret-tool"
            try FileManager.default.createDirectory(atPath: f.root + "/bin", withIntermediateDirectories: true)
            try Executables.copy(try #require(Executables.inPath("secret-tool")), to: otherTool)
        }

        /// `program lookup attributes…`, as secret-tool's command line.
        func lookup(with program: String, argv0: String? = nil) throws -> ChildResult {
            let arguments = ["lookup"] + DaemonFixture.flatten(AuthorizationTests.attributes)
            let child: ChildProcess
            if let argv0 {
                // The program runs under another name: what a process says about itself.
                child = try ChildProcess("/bin/bash", arguments: ["-c", "exec -a \"$0\" \"$@\"", argv0, program] + arguments,
                                         environment: f.environment())
            } else {
                child = try ChildProcess(program, arguments: arguments, environment: f.environment())
            }
            let result = child.wait(timeout: 30)
            #expect(!result.timedOut, "\(program) timed out; cofferd log:\n\(f.daemonLog)")
            return result
        }

        @discardableResult
        func coffer(_ arguments: [String], password: Bool = true) throws -> ChildResult { try f.coffer(arguments, password: password) }

        func auditLog(unsealing: Bool = false) throws -> [[String: Any]] { try f.auditLog(unsealing: unsealing) }

        /// How many consent dialogs pinentry was asked to show.
        var dialogs: Int { f.pinentryLogText.split(separator: "\n").count { $0 == "CONFIRM" } }

        func storeWithSecretTool() throws {
            try f.store(label: "Authz token", AuthorizationTests.attributes, secret: Array("s3cret".utf8))
        }
    }

    @Test func theCreatorReadsFreelyAndAnotherApplicationIsAskedEachTimeItIsAllowedOnce() throws {
        let w = try World()
        defer { w.f.shutdown() }
        try w.storeWithSecretTool()
        let own = try w.lookup(with: try #require(Executables.inPath("secret-tool")))
        #expect(own.stdout == "s3cret", "\(own)")
        #expect(w.dialogs == 0)

        try w.f.setPinentryScript(["ONCE"])
        let once = try w.lookup(with: w.otherTool)
        #expect(once.stdout == "s3cret", "\(once)\n\(w.f.daemonLog)")
        #expect(w.dialogs == 1)
        // The dialog names the application (its path) and the item, with the three buttons.
        let shown = w.f.pinentryLogText
        #expect(shown.contains("SETDESC \(w.otherTool) wants to read the secret 'Authz token'"), "\(shown)")
        #expect(shown.contains("SETOK Allow once") && shown.contains("SETNOTOK Always allow") && shown.contains("SETCANCEL Deny"))

        // Once is once: the next lookup asks again, and this time the answer is no.
        try w.f.setPinentryScript(["DENY"])
        let denied = try w.lookup(with: w.otherTool)
        #expect(denied.exitCode != 0 && denied.stdout.isEmpty, "\(denied)")
        #expect(w.dialogs == 2)

        // The audit log has each read: who, which item, how it ended, and why.
        let reads = try w.auditLog(unsealing: true).filter { $0["action"] as? String == "read" }
        let summary = reads.map { "\($0["app"] as? String ?? "-") \($0["outcome"] as? String ?? "-") \($0["detail"] as? String ?? "-")" }
        #expect(summary == [
            "exe:/usr/bin/secret-tool ok creator",
            "exe:\(w.otherTool) ok allowed once by the user",
            "exe:\(w.otherTool) denied the user denied it access to this item (asked again in at most 10 minutes)",
        ], "\(summary)")
        #expect(reads.allSatisfy { $0["label"] as? String == "Authz token" && $0["collection"] as? String == "login" })
        let writes = try w.auditLog().filter { $0["action"] as? String == "write" }
        #expect(writes.map { $0["app"] as? String } == ["exe:/usr/bin/secret-tool"])
    }

    /// secret-tool leaves the bus as soon as it has its reply, before cofferd writes the audit
    /// line: the line still names it (it is found before the write, while secret-tool waits).
    @Test func theWritesOfAClientThatLeavesAtOnceNameItsApplication() throws {
        let w = try World()
        defer { w.f.shutdown() }
        for round in 0..<6 {
            let attributes = ["service": "authz", "account": "leaver \(round)"]
            try w.f.store(label: "Leaver", attributes, secret: Array("first".utf8))
            try w.f.store(label: "Leaver", attributes, secret: Array("second".utf8))
            #expect(try w.f.secretTool(["clear"] + DaemonFixture.flatten(attributes)).exitCode == 0)
        }
        let changes = try w.auditLog(unsealing: true).filter { ["write", "delete"].contains($0["action"] as? String) }
        let summary = changes.map { "\($0["action"] as? String ?? "-") \($0["app"] as? String ?? "-") \($0["detail"] as? String ?? "-")" }
        let round = ["write exe:/usr/bin/secret-tool created", "write exe:/usr/bin/secret-tool replaced", "delete exe:/usr/bin/secret-tool -"]
        #expect(summary == Array(repeating: round, count: 6).flatMap { $0 }, "\(summary)")
        // Each line names the item by its label, a deleted item's being the one it had.
        #expect(changes.allSatisfy { $0["label"] as? String == "Leaver" }, "\(changes)")
    }

    /// What follows a write (its audit line, its signals) waits for the client's next call, so
    /// that it runs while that call is being flushed; it is still logged before that call.
    @Test func aWriteIsLoggedBeforeTheReadThatFollowsItAtOnce() throws {
        let w = try World()
        defer { w.f.shutdown() }
        let c = w.f.client!
        let session = try c.library.openSession()
        let item = try c.createItem(label: "Order", attributes: ["order": "1"], secret: "0", session: session)
        let rounds = 20
        for round in 1...rounds {
            try c.library.setSecret(of: item, to: SecureBytes(Array("\(round)".utf8)), session: session)
            #expect(try c.secretBytes(of: item, session: session) == Array("\(round)".utf8))
        }
        let events = try w.auditLog(unsealing: true).filter { $0["label"] as? String == "Order" }
        let summary = events.map { "\($0["action"] as? String ?? "-") \($0["detail"] as? String ?? "-")" }
        #expect(summary == ["write created"] + Array(repeating: ["write secret changed", "read creator"], count: rounds).flatMap { $0 },
                "\(summary)")
        #expect(c.waitForSignals { $0.count { $0.member == CollectionInterface.Signal.itemChanged } == rounds }, "\(w.f.daemonLog)")
    }

    @Test func alwaysAllowIsRememberedAcrossARestartAndListed() throws {
        let w = try World()
        defer { w.f.shutdown() }
        try w.storeWithSecretTool()
        try w.f.setPinentryScript(["ALWAYS"])
        #expect(try w.lookup(with: w.otherTool).stdout == "s3cret")
        #expect(w.dialogs == 1)
        try w.f.setPinentryScript([])   // a dialog now would deny
        #expect(try w.lookup(with: w.otherTool).stdout == "s3cret")
        #expect(w.dialogs == 1)

        let listed = try w.coffer(["access", "list", "--json"])
        #expect(listed.stdout.contains("\"application\": \"exe:\(w.otherTool)\", \"rights\": \"read\", \"item\": 1, \"label\": \"Authz token\""), "\(listed)")

        _ = w.f.stopDaemon()
        try w.f.startDaemon(unlock: true)
        #expect(try w.lookup(with: w.otherTool).stdout == "s3cret")
        #expect(w.dialogs == 1)

        // Revoked, it is asked again.
        try w.coffer(["access", "revoke", w.otherTool])
        #expect(try w.lookup(with: w.otherTool).stdout.isEmpty)
        #expect(w.dialogs == 2)
    }

    /// This test process is a third application. A denial holds for it (on any connection)
    /// without asking again; GetSecrets leaves the item out beside one it may read, and fails
    /// saying why when it may read none; a grant ends it.
    @Test func denyIsRememberedForTheApplicationAndTheErrorSaysHowToAllow() throws {
        let w = try World()
        defer { w.f.shutdown() }
        try w.storeWithSecretTool()
        let item = try #require(try w.f.client.items(of: SecretPath.login).first)
        let session = try w.f.client.library.openSession()
        try w.f.setPinentryScript(["DENY"])
        do {
            _ = try w.f.client.secretBytes(of: item, session: session)
            Issue.record("the secret was handed out after the user denied it")
        } catch let error as DBusError {
            #expect(error.name == DBusError.Name.accessDenied)
            #expect(error.message.contains("coffer access grant exe:"), "\(error.message)")
        }
        #expect(w.dialogs == 1)
        try w.f.setPinentryScript(["ONCE"])
        let refused = expectDBusError(DBusError.Name.accessDenied) { _ = try w.f.client.secrets(of: [item], session: session) }
        #expect(refused?.message.contains("the user denied it access to this item") == true, "\(String(describing: refused))")
        let own = try w.f.client.createItem(label: "Own", attributes: ["service": "own"], secret: "mine", session: session)
        #expect(Array(try w.f.client.secrets(of: [item, own], session: session).keys) == [own])
        #expect(w.dialogs == 1)
        // A new connection of the same application is not asked again either (the denial is
        // the application's, for ten minutes): opening connections does not buy dialogs.
        let second = try w.f.newClient()
        _ = expectDBusError(DBusError.Name.accessDenied) {
            _ = try second.secretBytes(of: item, session: second.library.openSession())
        }
        #expect(w.dialogs == 1)
        // Granted, it reads at once.
        try w.f.grant()
        #expect(try second.secretBytes(of: item, session: second.library.openSession()) == Array("s3cret".utf8))
        #expect(w.dialogs == 1)
    }

    /// Under `strict` nobody is asked; what a process says about itself (its argv[0], an
    /// attribute or a property claiming a creator) changes nothing; a grant opens the door.
    @Test func strictNeverAsksAndForgedIdentitiesGetNothing() throws {
        let w = try World()
        defer { w.f.shutdown() }
        try w.coffer(["policy", "strict"])
        try w.storeWithSecretTool()
        let secretTool = try #require(Executables.inPath("secret-tool"))
        #expect(try w.lookup(with: secretTool).stdout == "s3cret")

        // The copy calls itself secret-tool: it is still the copy.
        let forged = try w.lookup(with: w.otherTool, argv0: secretTool)
        #expect(forged.exitCode != 0 && forged.stdout.isEmpty, "\(forged)")
        // This process creates an item claiming secret-tool made it: in properties a provider
        // might trust (refused: CreateItem takes none such), then in attributes (stored as
        // attributes, nothing more); secret-tool still cannot read it.
        let claims = ["service": "forged", "creator": "exe:\(secretTool)", "xdg:creator": secretTool]
        let session = try w.f.client.library.openSession(.plain)
        let wire = try session.encode(try SecureBytes(Array("mine".utf8)))
        for property in ["org.freedesktop.Secret.Item.Creator", "org.freedesktop.Secret.Item.Application"] {
            let properties: [String: DBusValue] = [ItemProperties.labelKey: .string("Forged"),
                                                   ItemProperties.attributesKey: .stringDictionary(claims),
                                                   property: .string("exe:\(secretTool)")]
            _ = expectDBusError(DBusError.Name.invalidArgs) {
                _ = try w.f.client.call(CollectionInterface.CreateItem.self, on: SecretPath.login,
                                        arguments: [.variantDictionary(properties), wire.dbusValue, .boolean(false)])
            }
        }
        try w.f.client.createItem(label: "Forged", attributes: claims, secret: "mine", session: session)
        let claimed = try w.f.secretTool(["lookup", "service", "forged"])
        #expect(claimed.exitCode != 0 && claimed.stdout.isEmpty, "\(claimed)")
        #expect(w.dialogs == 0)

        // python3 is a fourth application: refused, until granted the one item.
        let python = try PythonReader(w.f)
        #expect(try python.read(Self.attributes) == "org.freedesktop.DBus.Error.AccessDenied")
        try w.coffer(["access", "grant", python.executable, "--service", "authz"])
        #expect(try python.read(Self.attributes) == "s3cret")
        #expect(try python.read(["service": "forged"]) == "org.freedesktop.DBus.Error.AccessDenied")
        #expect(w.dialogs == 0)
        // The second refusal within a minute of the first is counted, and written as it stops.
        #expect(w.f.stopDaemon()?.exitCode == 0)
        let log = try w.auditLog()
        #expect(log.contains { $0["action"] as? String == "policy" && $0["detail"] as? String == "ask -> strict" })
        #expect(log.contains { $0["action"] as? String == "grant" && $0["app"] as? String == "exe:\(python.executable)" })
        let pythonReads = log.filter { $0["action"] as? String == "read" && $0["app"] as? String == "exe:\(python.executable)" }
        #expect(pythonReads.map { $0["outcome"] as? String } == ["denied", "ok", "denied"], "\(pythonReads)")
        #expect(pythonReads.map { $0["repeated"] as? Int } == [nil, nil, 1], "\(pythonReads)")
    }

    /// A program refused in a loop cannot push older lines out of the audit log: its refusals
    /// within a minute of the first are written as that line and one line with the count.
    @Test func aProgramRefusedInALoopLeavesALineAndACount() throws {
        let w = try World()
        defer { w.f.shutdown() }
        try w.coffer(["policy", "strict"])
        try w.storeWithSecretTool()
        let python = try PythonReader(w.f)
        let script = """
        import sys, dbus
        bus = dbus.SessionBus()
        api = dbus.Interface(bus.get_object("org.freedesktop.secrets", "/org/freedesktop/secrets"), "org.freedesktop.Secret.Service")
        _, session = api.OpenSession("plain", dbus.String("", variant_level=1))
        unlocked, _ = api.SearchItems({"service": "authz"})
        refused = 0
        for _ in range(int(sys.argv[1])):
            try:
                api.GetSecrets(unlocked, session)
            except dbus.exceptions.DBusException as error:
                refused += error.get_dbus_name() == "org.freedesktop.DBus.Error.AccessDenied"
        print(refused, end="")
        """
        let flood = try ChildProcess("/usr/bin/python3", arguments: ["-c", script, "2000"], environment: w.f.environment()).wait(timeout: 120)
        #expect(flood.stdout == "2000", "\(flood)")
        #expect(w.f.stopDaemon()?.exitCode == 0)
        let log = try w.auditLog()
        #expect(log.first?["detail"] as? String == "created by cofferd --unlock", "the oldest line is gone: \(log.prefix(3))")
        let refusals = log.filter { $0["app"] as? String == "exe:\(python.executable)" }
        #expect(refusals.map { "\($0["action"] ?? "-") \($0["outcome"] ?? "-") \($0["repeated"] as? Int ?? 0)" } == ["read denied 0", "read denied 1999"],
                "\(refusals.count) lines: \(refusals.prefix(3))")
    }

    /// `--same-binary` ties a grant to the program file as it was: the same path with other
    /// contents (an update, or a swap) is refused.
    @Test func aGrantForOneBinaryEndsWhenTheFileChanges() throws {
        let w = try World()
        defer { w.f.shutdown() }
        try w.coffer(["policy", "strict"])
        try w.storeWithSecretTool()
        try w.coffer(["access", "grant", w.otherTool, "--same-binary"])
        #expect(try w.lookup(with: w.otherTool).stdout == "s3cret")
        // One more byte at the end: still a working program, no longer the same file.
        try Executables.appendZeroByte(to: w.otherTool)
        let changed = try w.lookup(with: w.otherTool)
        #expect(changed.exitCode != 0 && changed.stdout.isEmpty, "\(changed)")
        #expect(w.dialogs == 0)
    }

    /// `--for` ends a grant by cofferd's clock (here a test clock, an hour on in a moment).
    @Test func aGrantForAnHourEndsAfterTheHour() throws {
        let w = try World(daemonEnvironment: DaemonFixture.testClock, lockSettings: "[every collection]\nlock-after-idle = never\n")
        defer { w.f.shutdown() }
        try w.coffer(["policy", "strict"])
        try w.storeWithSecretTool()
        try w.coffer(["access", "grant", w.otherTool, "--for", "1h"])
        try w.f.advanceClock(seconds: 3540)
        #expect(try w.lookup(with: w.otherTool).stdout == "s3cret", "the grant ended before its hour: \(w.f.daemonLog)")
        try w.f.advanceClock(seconds: 120)
        let expired = try w.lookup(with: w.otherTool)
        #expect(expired.exitCode != 0 && expired.stdout.isEmpty, "read an hour and a minute into a grant for an hour: \(expired)")
        #expect(w.dialogs == 0)
    }

    @Test func openLetsEveryoneReadAndNoDialogMeansDeny() throws {
        let w = try World(pinentryProgram: "/nonexistent/pinentry")
        defer { w.f.shutdown() }
        try w.storeWithSecretTool()
        let refused = try w.lookup(with: w.otherTool)
        #expect(refused.exitCode != 0 && refused.stdout.isEmpty, "\(refused)")
        #expect(eventually { w.f.daemonLog.contains("the user could not be asked") }, "\(w.f.daemonLog)")
        try w.coffer(["policy", "open"])
        #expect(try w.lookup(with: w.otherTool).stdout == "s3cret")
        #expect(try PythonReader(w.f).read(Self.attributes) == "s3cret")
    }
}

/// `/usr/bin/python3` with dbus-python as a client: finds an item by attributes and prints its
/// secret, or the D-Bus error's name.
struct PythonReader {
    let f: DaemonFixture
    /// The executable the kernel runs for it (the service's name for this application).
    let executable: String

    init(_ f: DaemonFixture) throws {
        self.f = f
        executable = URL(fileURLWithPath: "/usr/bin/python3").resolvingSymlinksInPath().path
    }

    static let script = """
    import sys, dbus
    bus = dbus.SessionBus()
    service = bus.get_object("org.freedesktop.secrets", "/org/freedesktop/secrets")
    api = dbus.Interface(service, "org.freedesktop.Secret.Service")
    _, session = api.OpenSession("plain", dbus.String("", variant_level=1))
    attributes = dict(arg.split("=", 1) for arg in sys.argv[1:])
    unlocked, _ = api.SearchItems(attributes)
    if not unlocked:
        print("not found", end="")
        sys.exit(1)
    item = dbus.Interface(bus.get_object("org.freedesktop.secrets", unlocked[0]), "org.freedesktop.Secret.Item")
    try:
        secret = item.GetSecret(session)
        sys.stdout.write(bytes(secret[2]).decode())
    except dbus.exceptions.DBusException as error:
        sys.stdout.write(error.get_dbus_name())
    """

    func read(_ attributes: [String: String]) throws -> String {
        let child = try ChildProcess("/usr/bin/python3", arguments: ["-c", Self.script] + attributes.map { "\($0.key)=\($0.value)" },
                                     environment: f.environment())
        let result = child.wait(timeout: 30)
        #expect(!result.timedOut && result.stderr.isEmpty, "\(result)")
        return result.stdout
    }
}
