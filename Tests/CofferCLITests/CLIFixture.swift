import CofferCrypto
import CofferTestSupport
import DBusKit
import Foundation
import SecretServiceClient
import SecretServiceProtocol
import Testing

/// A private data directory and HOME for one test, and a way to run the built `coffer` on it.
final class CLIFixture {
    let root: String
    var dataDir: String { root + "/data" }
    var home: String { root + "/home" }
    /// Every result this fixture produced, for checks across a whole test.
    private(set) var history: [ChildResult] = []

    static let password = "correct horse battery"

    init() throws {
        root = NSTemporaryDirectory() + "coffer-cli-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: root + "/home", withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: root)
    }

    /// The `coffer` executable next to the test bundle (the build directory), or $COFFER_CLI.
    static let executable: String = {
        if let explicit = ProcessInfo.processInfo.environment["COFFER_CLI"], !explicit.isEmpty { return explicit }
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        var candidates: [String] = []
        for _ in 0..<5 {
            candidates.append(directory.appendingPathComponent("coffer").path)
            directory = directory.deletingLastPathComponent()
        }
        return candidates.first(where: isExecutableFile) ?? candidates[0]
    }()

    /// Runs `coffer arguments...` in a session of its own (so it has no controlling terminal
    /// and cannot open /dev/tty), SIGKILLed when it outlives `timeout` seconds.
    static func runCoffer(_ arguments: [String], stdin: [UInt8] = [], environment: [String: String],
                          timeout: TimeInterval = 60) throws -> ChildResult {
        try ChildProcess(executable, arguments: arguments, environment: environment, stdin: stdin,
                         newSession: true).wait(timeout: timeout)
    }

    private static func isExecutableFile(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && !isDirectory.boolValue
            && FileManager.default.isExecutableFile(atPath: path)
    }

    /// A clean environment: HOME inside the fixture, no COFFER_DATA_DIR or XDG_DATA_HOME, and
    /// TZ=UTC so that printed local times are the same on every machine, and the tests' fast
    /// key derivation.
    /// Added to every coffer's environment (a TPM's `COFFER_TPM_TCTI`).
    var extraEnvironment: [String: String] = [:]

    var environment: [String: String] {
        ["HOME": home, "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "TZ": "UTC"].merging(TestEnvironment.fastKeyDerivation) { $1 }
            .merging(extraEnvironment) { $1 }
    }

    /// Runs `coffer --data-dir <fixture> arguments...` with `stdin`.
    @discardableResult
    func run(_ arguments: [String], stdin: [UInt8] = [], dataDir: Bool = true) throws -> ChildResult {
        let full = (dataDir ? ["--data-dir", self.dataDir] : []) + arguments
        let result = try Self.runCoffer(full, stdin: stdin, environment: environment)
        #expect(!result.timedOut, "coffer \(arguments.joined(separator: " ")) timed out")
        history.append(result)
        return result
    }

    @discardableResult
    func run(_ arguments: [String], stdin: String) throws -> ChildResult {
        try run(arguments, stdin: Array(stdin.utf8))
    }

    /// `--password-stdin` input: the password line, then `rest`.
    func withPassword(_ rest: String = "", password: String = CLIFixture.password) -> [UInt8] {
        Array("\(password)\n\(rest)".utf8)
    }

    /// Creates collection `id` with the fixture's password.
    func createCollection(_ id: String = "login") throws {
        let result = try run(["create-collection", id, "--password-stdin"], stdin: withPassword())
        #expect(result.status == 0, "create-collection failed: \(result.stderr)")
    }

    /// Adds an item and returns its id (from "added login/ID").
    @discardableResult
    func add(_ arguments: [String], secret: String) throws -> UInt64? {
        let result = try run(["add", "--password-stdin"] + arguments, stdin: withPassword(secret))
        #expect(result.status == 0, "add failed: \(result.stderr)")
        return Self.itemID(result.stdout)
    }

    /// The item id in "added login/3" or "replaced login/3".
    static func itemID(_ output: String) -> UInt64? {
        guard let slash = output.lastIndex(of: "/") else { return nil }
        return UInt64(output[output.index(after: slash)...].trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Hands `body` a client of the built cofferd serving this fixture's data directory on a
    /// private bus (nothing unlocked), then stops both.
    func throughDaemon<T>(_ body: (SecretServiceClient, ClientSession) throws -> T) throws -> T {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let cofferd = try #require(Executables.built("cofferd"), "cofferd is not built next to the tests")
        let daemon = try ChildProcess(cofferd, arguments: ["--foreground", "--data-dir", dataDir, "--pinentry", root + "/no-pinentry"],
                                      environment: bus.environment(["HOME": home]))
        defer { _ = daemon.terminate() }
        try bus.waitForOwner(of: SecretServiceClient.busName, startedBy: daemon)
        let client = SecretServiceClient(connection: try DBusConnection(address: bus.address))
        defer { client.close() }
        return try body(client, try client.openSession())
    }

    /// Every field of every item of collection `id`, unlocked with `password`, as cofferd serves
    /// them from this fixture's store.
    func items(of id: String, password: String) throws -> Set<ProviderItem> {
        // The items were made by coffer (or imported): this test process reads them with a grant.
        let granted = try run(["access", "grant", Executables.thisProcess, "--collection", id, "--password-stdin"],
                              stdin: withPassword(password: password))
        #expect(granted.status == 0, "access grant failed: \(granted.stderr)")
        return try throughDaemon { client, session in
            let collection = SecretPath.service.appending(escaping: "collection").appending(escaping: id)
            try client.unlock(collection, password: try SecureBytes(Array(password.utf8)), session: session)
            return try client.everyItem(of: collection, session: session)
        }
    }

    /// Parses `--json` search output.
    static func jsonArray(_ result: ChildResult) throws -> [[String: Any]] {
        let value = try JSONSerialization.jsonObject(with: Data(result.stdoutBytes))
        return try #require(value as? [[String: Any]])
    }
}

extension [UInt8] {
    /// Whether `needle` occurs in these bytes.
    func contains(bytes needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, needle.count <= count else { return needle.isEmpty }
        for start in 0...(count - needle.count) where self[start..<(start + needle.count)].elementsEqual(needle) {
            return true
        }
        return false
    }
}
