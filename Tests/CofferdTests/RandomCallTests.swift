import CofferCrypto
import CofferTestSupport
import DBusKit
import Foundation
import SecretServiceClient
import SecretServiceProtocol
import Testing

/// A client sending random calls (RandomCallGenerator) to the real cofferd in batches; after
/// each batch the daemon must still answer and the items stored before must be intact.
/// Prompts are dismissed (the pinentry does not exist). `COFFER_FUZZ_SEED` replays a seed,
/// `COFFER_FUZZ_SECONDS` changes how long it runs (default 15 s).
@Suite(.timeLimit(.minutes(5))) struct RandomCallTests {
    static let defaultSeed: UInt64 = 20_261_123
    static let callsPerBatch = 40
    static let callTimeout: Duration = .seconds(5)
    /// Errors that say the daemon is gone or stuck, not that it refused a call.
    static let fatalErrors: Set = [DBusError.Name.noReply, DBusError.Name.disconnected, DBusError.Name.serviceUnknown,
                                   DBusError.Name.nameHasNoOwner]

    /// An item stored before the random calls, checked after every batch.
    struct Witness: Equatable {
        let label: String
        let attributes: [String: String]
        let secret: [UInt8]
    }

    @Test func randomCallsNeitherCrashNorHangTheDaemon() throws {
        let environment = ProcessInfo.processInfo.environment
        let seed = environment["COFFER_FUZZ_SEED"].flatMap { UInt64($0) } ?? Self.defaultSeed
        let budget = environment["COFFER_FUZZ_SECONDS"].flatMap { TimeInterval($0) } ?? 15
        let f = try DaemonFixture(pinentryProgram: "/nonexistent/pinentry")
        defer { f.shutdown() }
        let checker = f.client!
        let session = try checker.library.openSession()

        var witnesses: [ObjectPath: Witness] = [:]
        var witnessSecrets = SeededGenerator(seed: seed, stream: 1)
        for n in 0..<6 {
            let witness = Witness(label: "witness \(n) ✓", attributes: ["witness": "\(n)", "kept": "yes"],
                                  secret: witnessSecrets.bytes(n * 97 + 1))
            let path = try checker.createItem(label: witness.label, attributes: witness.attributes, secret: witness.secret,
                                              session: session)
            witnesses[path] = witness
        }
        // What the random client may delete: a collection of its own and items in it and in `session`.
        var generator = RandomCallGenerator(seed: seed)
        let scratch = try checker.library.createCollection(label: "scratch", password: SecureBytes("scratch"), session: session)
        generator.paths.add(scratch)
        for n in 0..<3 {
            for collection in [scratch, SecretPath.sessionCollection] {
                generator.paths.add(try checker.createItem(in: collection, label: "spare \(n)", attributes: ["fuzz": "\(n)"],
                                                           secret: "spare", session: session))
            }
        }
        let random = try f.newClient()
        let plain = try random.library.openSession(.plain).path
        generator.paths.add(plain)
        generator.paths.plainSession = plain
        generator.paths.add(session.path)   // another client's session

        var batch: [RandomCall] = []
        var calls = 0
        var batches = 0
        var internalErrors: [String] = []
        func failure(_ what: String) -> String {
            "\(what)\nseed \(seed) (COFFER_FUZZ_SEED=\(seed) replays it), batch \(batches):\n"
                + batch.map(\.description).joined(separator: "\n") + "\ncofferd log:\n\(f.daemonLog.suffix(3000))"
        }
        let deadline = Date().addingTimeInterval(budget)
        while Date() < deadline {
            batch = []
            batches += 1
            for _ in 0..<Self.callsPerBatch {
                let call = generator.next()
                guard let message = try? DBusMessage.methodCall(destination: SecretServiceClient.busName, path: call.path,
                                                                interface: call.interface, member: call.member,
                                                                arguments: call.arguments) else { continue }
                batch.append(call)
                calls += 1
                do {
                    generator.paths.learn(from: try random.connection.call(message, timeout: Self.callTimeout).arguments())
                } catch {
                    if Self.fatalErrors.contains(error.name) {
                        Issue.record("\(failure("\(call) got \(error); cofferd running: \(f.daemonIsRunning)"))")
                        return
                    }
                    if error.name == DBusError.Name.unknownObject { generator.paths.forget(call.path) }
                    if error.message.contains("internal error") { internalErrors.append("\(call): \(error)") }
                }
            }
            random.clearSignals()
            checker.clearSignals()
            if let problem = Self.problem(in: f, checker: checker, session: session, witnesses: witnesses) {
                Issue.record("\(failure(problem))")
                return
            }
        }
        #expect(calls >= 400, "only \(calls) calls in \(budget) s")
        #expect(internalErrors.isEmpty, "\(internalErrors.prefix(5))")
    }

    /// What is wrong with the daemon after a batch: gone, not answering within the call
    /// timeout, or a witness changed. Unlocks `login` if a batch locked it.
    static func problem(in f: DaemonFixture, checker: TestClient, session: ClientSession,
                        witnesses: [ObjectPath: Witness]) -> String? {
        guard f.daemonIsRunning else { return "cofferd died" }
        do {
            try checker.call(SecretPath.service, StandardInterface.peer, "Ping", timeout: callTimeout)
            let found = try checker.library.search(["kept": "yes"])
            guard Set(found.unlocked + found.locked) == Set(witnesses.keys) else {
                return "SearchItems finds \(found), not the witnesses \(witnesses.keys.sorted())"
            }
            if try checker.isLocked(SecretPath.login) {
                try checker.library.unlock(SecretPath.login, password: SecureBytes(DaemonFixture.loginPassword), session: session)
            }
            let secrets = try checker.secrets(of: Array(witnesses.keys), session: session)
            for (path, witness) in witnesses {
                let properties = try checker.library.item(path)
                let stored = Witness(label: properties.label, attributes: properties.attributes, secret: secrets[path] ?? [])
                guard stored == witness else { return "witness \(path) changed: \(stored) instead of \(witness)" }
            }
        } catch {
            return "cofferd did not answer the checks: \(error)"
        }
        return nil
    }
}
