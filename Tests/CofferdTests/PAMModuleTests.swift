import CofferCrypto
import CofferTestSupport
import DBusKit
import Foundation
import SecretServiceClient
import SecretServiceProtocol
import Testing

/// pam_coffer in a real PAM stack (pam_wrapper runs the service file below, pam_matrix checks
/// the password, pamtester logs in), against the real cofferd on a private bus.
/// pam_wrapper's library, when installed.
private let pamWrapperLibrary: String? = ["/usr/lib/x86_64-linux-gnu/libpam_wrapper.so", "/usr/lib/aarch64-linux-gnu/libpam_wrapper.so"]
    .first { FileManager.default.fileExists(atPath: $0) }

@Suite(.timeLimit(.minutes(5)), .enabled(if: pamWrapperLibrary != nil && Executables.inPath("pamtester") != nil,
                                         "libpam-wrapper or pamtester is not installed (scripts/setup installs them)"))
struct PAMModuleTests {
    static var wrapper: String? { pamWrapperLibrary }
    static var matrix: String { URL(fileURLWithPath: wrapper!).deletingLastPathComponent().path + "/pam_wrapper/pam_matrix.so" }

    /// A service "coffer-test": pam_coffer keeps the password, pam_matrix checks it, and the
    /// session unlocks; a password change goes through both (pam_coffer first: pam_matrix wipes
    /// the current password it checked, which pam_unix does not).
    struct Stack {
        let root: String
        let bus: PrivateBus
        var user: String { ProcessInfo.processInfo.environment["USER"] ?? "root" }

        /// `tpmTCTI`: the TPM pam_coffer's programs use (its `tpm-tcti=` option).
        init(password: String, tpmTCTI: String? = nil) throws {
            root = NSTemporaryDirectory() + "coffer-pam-" + UUID().uuidString
            try FileManager.default.createDirectory(atPath: root + "/services", withIntermediateDirectories: true)
            bus = try PrivateBus()
            let module = try #require(Executables.built("libpam_coffer.so"), "pam_coffer is not built")
            let options = "cofferd=\(try DaemonFixture.cofferdPath) coffer=\(try #require(Executables.built("coffer"))) data-dir=\(root)/data"
                + (tpmTCTI.map { " tpm-tcti=\($0)" } ?? "")
            try "\(userName()):\(password):coffer-test\n".write(toFile: root + "/passdb", atomically: true, encoding: .utf8)
            try """
                auth     optional \(module) \(options)
                auth     required \(PAMModuleTests.matrix) passdb=\(root)/passdb
                account  required \(PAMModuleTests.matrix) passdb=\(root)/passdb
                session  optional \(module) \(options)
                password optional \(module) \(options)
                password required \(PAMModuleTests.matrix) passdb=\(root)/passdb
                """.write(toFile: root + "/services/coffer-test", atomically: true, encoding: .utf8)
        }

        /// The login name of this process's user (pam_matrix and the module look it up).
        func userName() -> String { ProcessInfo.processInfo.userName }

        /// `pamtester coffer-test USER authenticate open_session`, typing `password` (asked twice:
        /// by pam_coffer, then by pam_matrix).
        func login(typing password: String) throws -> ChildResult {
            try pamtester(["authenticate", "open_session"], typing: [password, password])
        }

        /// `pamtester coffer-test USER chauthtok`, as `passwd` does: the current password (asked
        /// by pam_coffer, then pam_matrix), then the new one twice (pam_coffer, then pam_matrix).
        func changePassword(from old: String, to new: String) throws -> ChildResult {
            try pamtester(["chauthtok"], typing: [old, old, new, new, new, new])
        }

        /// `pamtester coffer-test USER open_session` alone: a session with no password through
        /// `auth`, as after an autologin, a fingerprint or a smart card.
        func openSessionWithoutPassword() throws -> ChildResult {
            try pamtester(["open_session"], typing: [])
        }

        private func pamtester(_ operations: [String], typing lines: [String]) throws -> ChildResult {
            let environment = bus.environment(["LD_PRELOAD": PAMModuleTests.wrapper!, "PAM_WRAPPER": "1",
                                               "PAM_WRAPPER_SERVICE_DIR": root + "/services", "PATH": "/usr/bin:/bin"])
            return try ChildProcess("pamtester", arguments: ["coffer-test", userName()] + operations,
                                    environment: environment, stdin: Array(lines.map { $0 + "\n" }.joined().utf8)).wait(timeout: 60)
        }

        func remove() {
            bus.stop()   // the cofferd the module started leaves with its bus
            try? FileManager.default.removeItem(atPath: root)
        }
    }

    @Test func loginUnlocksAndASecondLoginReusesTheDaemon() throws {
        let stack = try Stack(password: "login password")
        defer { stack.remove() }
        let first = try stack.login(typing: "login password")
        #expect(first.exitCode == 0, "\(first)")

        // The first login made login with the typed password, and it is unlocked.
        let client = SecretServiceClient(connection: try DBusConnection(address: stack.bus.address))
        defer { client.close() }
        let login = SecretPath.collection(named: "login")
        #expect(try !client.collection(login).isLocked)
        let owner = try client.connection.nameOwner(SecretServiceClient.busName)
        _ = try client.lock([login])

        // A second login unlocks it in the same daemon.
        let second = try stack.login(typing: "login password")
        #expect(second.exitCode == 0, "\(second)")
        #expect(try !client.collection(login).isLocked)
        #expect(try client.connection.nameOwner(SecretServiceClient.busName) == owner)
        // And it is the login password that opens it.
        _ = try client.lock([login])
        try client.unlock(login, password: try SecureBytes(Array("login password".utf8)), session: try client.openSession())
    }

    @Test func aWrongPasswordLeavesItLocked() throws {
        let stack = try Stack(password: "login password")
        defer { stack.remove() }
        #expect(try stack.login(typing: "login password").exitCode == 0)
        let client = SecretServiceClient(connection: try DBusConnection(address: stack.bus.address))
        defer { client.close() }
        let login = SecretPath.collection(named: "login")
        _ = try client.lock([login])
        let refused = try stack.login(typing: "not the password")
        #expect(refused.exitCode != 0, "\(refused)")
        #expect(try client.collection(login).isLocked)
    }

    @Test func passwdChangesTheLoginPasswordAndTheCollectionsTogether() throws {
        let stack = try Stack(password: "old password")
        defer { stack.remove() }
        #expect(try stack.login(typing: "old password").exitCode == 0)
        let changed = try stack.changePassword(from: "old password", to: "new password")
        #expect(changed.exitCode == 0, "\(changed)")

        // pam_matrix took the new login password, and login opens with it, not the old one.
        #expect(try String(contentsOfFile: stack.root + "/passdb", encoding: .utf8).contains(":new password:"))
        let client = SecretServiceClient(connection: try DBusConnection(address: stack.bus.address))
        defer { client.close() }
        let login = SecretPath.collection(named: "login")
        _ = try client.lock([login])
        let session = try client.openSession()
        #expect(throws: (any Error).self) {
            try client.unlock(login, password: try SecureBytes(Array("old password".utf8)), session: session)
        }
        try client.unlock(login, password: try SecureBytes(Array("new password".utf8)), session: session)

        // The next login, with the new password, unlocks it.
        _ = try client.lock([login])
        #expect(try stack.login(typing: "new password").exitCode == 0)
        #expect(try !client.collection(login).isLocked)
    }

    /// A session that no password came through (autologin, fingerprint, smart card) unlocks
    /// login with its TPM key slot; without one, login stays locked and the log says why.
    @Test(.enabled(if: SoftwareTPM.executable != nil, "swtpm is not installed"))
    func aSessionWithoutAPasswordUnlocksWithTheTPMSlot() throws {
        let tpm = try SoftwareTPM()
        let stack = try Stack(password: "login password", tpmTCTI: tpm.tcti)
        defer { stack.remove() }
        let coffer = try #require(Executables.built("coffer"))
        let made = try ChildProcess(coffer, arguments: ["--data-dir", stack.root + "/data", "create-collection", "--collection", "login", "--password-stdin"],
                                    environment: ["HOME": stack.root, "PATH": "/usr/bin:/bin"], stdin: Array("login password\n".utf8)).wait(timeout: 60)
        #expect(made.exitCode == 0, "\(made)")

        let client = SecretServiceClient(connection: try DBusConnection(address: stack.bus.address))
        defer { client.close() }
        // No TPM slot yet: the session opens, and no cofferd serves login unlocked.
        #expect(try stack.openSessionWithoutPassword().exitCode == 0)
        #expect(throws: (any Error).self) { try client.connection.nameOwner(SecretServiceClient.busName) }

        let added = try ChildProcess(coffer, arguments: ["--data-dir", stack.root + "/data", "slots", "add-tpm", "--password-stdin"],
                                     environment: tpm.environment(["HOME": stack.root, "PATH": "/usr/bin:/bin"]),
                                     stdin: Array("login password\n".utf8)).wait(timeout: 60)
        #expect(added.exitCode == 0, "\(added)")
        let session = try stack.openSessionWithoutPassword()
        #expect(session.exitCode == 0, "\(session)")
        let login = SecretPath.collection(named: "login")
        #expect(try !client.collection(login).isLocked)

        // Locked, a second session unlocks it in the same daemon.
        let owner = try client.connection.nameOwner(SecretServiceClient.busName)
        _ = try client.lock([login])
        #expect(try stack.openSessionWithoutPassword().exitCode == 0)
        #expect(try !client.collection(login).isLocked)
        #expect(try client.connection.nameOwner(SecretServiceClient.busName) == owner)
    }
}
