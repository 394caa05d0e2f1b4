import CofferTestSupport
import Foundation
import Testing

/// A client that hides its executable (it calls `prctl(PR_SET_DUMPABLE, 0)`, as ssh-agent and
/// gpg-agent do) is served as an *unverified process*: by the `open` policy like anyone, under
/// `ask` after a dialog that says so and offers no "Always allow", under `strict` not at all,
/// with an error that says why. What it creates is recorded as made by an unverified process,
/// and owned by nobody. Run as a normal user: root reads every process's executable, so to
/// root nothing is unverified.
@Suite(.timeLimit(.minutes(10)), .enabled(if: getuid() != 0, "root reads every process's /proc/PID/exe; scripts/test runs the suite as a normal user"))
struct UnverifiedClientTests {
    static let attributes = ["service": "hidden", "account": "me"]

    /// `/usr/bin/python3` with dbus-python, made non-dumpable first (`hidden`) or not.
    struct HiddenPython {
        let f: DaemonFixture

        static let script = """
        import ctypes, sys, dbus
        mode, operation = sys.argv[1], sys.argv[2]
        if mode.startswith("hidden"):
            assert ctypes.CDLL(None).prctl(4, 0, 0, 0, 0) == 0   # PR_SET_DUMPABLE, 0
        if mode.startswith("hidden:"):
            assert ctypes.CDLL(None).prctl(15, mode[7:].encode(), 0, 0, 0) == 0   # PR_SET_NAME
        bus = dbus.SessionBus()
        service = bus.get_object("org.freedesktop.secrets", "/org/freedesktop/secrets")
        api = dbus.Interface(service, "org.freedesktop.Secret.Service")
        _, session = api.OpenSession("plain", dbus.String("", variant_level=1))
        attributes = dict(arg.split("=", 1) for arg in sys.argv[3:])
        try:
            if operation == "create":
                collection = dbus.Interface(bus.get_object("org.freedesktop.secrets", "/org/freedesktop/secrets/aliases/default"),
                                            "org.freedesktop.Secret.Collection")
                properties = {"org.freedesktop.Secret.Item.Label": "Hidden token",
                              "org.freedesktop.Secret.Item.Attributes": dbus.Dictionary(attributes, signature="ss")}
                secret = dbus.Struct((session, dbus.ByteArray(b""), dbus.ByteArray(b"hidden s3cret"), "text/plain"))
                collection.CreateItem(properties, secret, False)
                sys.stdout.write("created")
            else:
                unlocked, _ = api.SearchItems(attributes)
                item = dbus.Interface(bus.get_object("org.freedesktop.secrets", unlocked[0]), "org.freedesktop.Secret.Item")
                sys.stdout.write(bytes(item.GetSecret(session)[2]).decode())
        except dbus.exceptions.DBusException as error:
            sys.stdout.write(error.get_dbus_name() + ": " + error.get_dbus_message())
        """

        /// `name`: the command name it gives itself once hidden.
        func run(_ operation: String, hidden: Bool = true, name: String? = nil,
                 _ attributes: [String: String] = UnverifiedClientTests.attributes) throws -> String {
            let mode = hidden ? "hidden" + (name.map { ":" + $0 } ?? "") : "shown"
            let child = try ChildProcess("/usr/bin/python3",
                                         arguments: ["-c", Self.script, mode, operation]
                                             + attributes.map { "\($0.key)=\($0.value)" },
                                         environment: f.environment())
            let result = child.wait(timeout: 30)
            #expect(!result.timedOut && result.stderr.isEmpty, "\(result)")
            return result.stdout
        }
    }

    @Test func openServesItAndWhatItMakesIsOwnedByNobody() throws {
        let f = try DaemonFixture(pinentryProgram: "/nonexistent/pinentry")
        defer { f.shutdown() }
        let python = HiddenPython(f: f)
        _ = try f.coffer(["policy", "open"])
        #expect(try python.run("create") == "created")
        #expect(try python.run("read") == "hidden s3cret")

        // The item records that an unverified process made it, in the audit log too.
        let log = try f.auditLog()
        let writes = log.filter { $0["action"] as? String == "write" }
        #expect(writes.compactMap { $0["app"] as? String }.contains("unverified:python3"), "\(writes)")
        let reads = log.filter { $0["action"] as? String == "read" }
        #expect(reads.contains { $0["app"] as? String == "unverified:python3" && $0["detail"] as? String == "open policy" }, "\(reads)")

        // Under strict, neither it (whatever it calls itself) nor python3 shown as itself owns it.
        _ = try f.coffer(["policy", "strict"])
        let hidden = try python.run("read")
        #expect(hidden.hasPrefix("org.freedesktop.DBus.Error.AccessDenied: "), "\(hidden)")
        #expect(hidden.contains("cannot verify which program this process is"), "\(hidden)")
        #expect(hidden.contains("coffer policy open --collection login") && !hidden.contains("coffer access grant"), "\(hidden)")
        let shown = try python.run("read", hidden: false)
        #expect(shown.hasPrefix("org.freedesktop.DBus.Error.AccessDenied: "), "\(shown)")
        #expect(shown.contains("coffer access grant"), "\(shown)")
    }

    @Test func askShowsADialogThatSaysSoAndRemembersNothing() throws {
        let f = try DaemonFixture(pinentry: ["ONCE"])
        defer { f.shutdown() }
        try f.store(label: "Token", Self.attributes, secret: Array("s3cret".utf8))
        let python = HiddenPython(f: f)
        #expect(try python.run("read") == "s3cret", "\(f.daemonLog)")
        let shown = f.pinentryLogText
        #expect(shown.contains("SETDESC A program that cannot be verified, calling itself 'python3', wants to read the secret 'Token'"),
                "\(shown)")
        #expect(shown.contains("SETOK Allow once") && shown.contains("SETCANCEL Deny"), "\(shown)")
        #expect(!shown.contains("SETNOTOK"), "an unverified process was offered Always allow: \(shown)")

        // A pinentry that answers with a third button anyway (there is none) is refused, and
        // no grant is made.
        try f.setPinentryScript(["ALWAYS"])
        let always = try python.run("read")
        #expect(always.hasPrefix("org.freedesktop.DBus.Error.AccessDenied: "), "\(always)")
        // That answer holds for every unverified process, whatever it calls itself: a new name
        // buys no new dialog.
        let dialogs = f.pinentryLogText.split(separator: "\n").count { $0 == "CONFIRM" }
        let renamed = try python.run("read", name: "other-name")
        #expect(renamed.contains("the user denied it access to this item"), "\(renamed)")
        #expect(f.pinentryLogText.split(separator: "\n").count { $0 == "CONFIRM" } == dialogs)
        let grants = try f.coffer(["access", "list"])
        #expect(!grants.stdout.contains("unverified"), "\(grants)")
        let refusal = try ChildProcess(try #require(Executables.built("coffer")),
                                       arguments: ["--data-dir", f.dataDir, "access", "grant", "unverified:python3", "--password-stdin"],
                                       environment: f.environment(), stdin: Array((DaemonFixture.loginPassword + "\n").utf8)).wait(timeout: 60)
        #expect(refusal.exitCode == 2 && refusal.stderr.contains("unverified process"), "\(refusal)")

    }

    /// An unverified process cannot plant an application's portal key before the application's
    /// first request: only the portal makes one.
    @Test func aPortalKeyItMadeIsNeverTheApplications() throws {
        let f = try DaemonFixture(daemonOptions: PortalTests.frontend)
        defer { f.shutdown() }
        _ = try f.coffer(["policy", "open"])   // so that the planter may create and read
        let appID = "org.example.Planted"
        let planted = try HiddenPython(f: f).run("create", PortalTests.itemAttributes(appID))
        #expect(planted.hasPrefix("org.freedesktop.DBus.Error.AccessDenied: ") && planted.contains("only the Secret portal makes"), "\(planted)")
        let portal = try PortalTests.portalFrontend(f)
        let secret = PortalTests.expectSecret(try PortalTests.retrieve(appID, as: portal))
        #expect(secret != Array("hidden s3cret".utf8))
        #expect(PortalTests.expectSecret(try PortalTests.retrieve(appID, as: portal)) == secret)
    }
}
