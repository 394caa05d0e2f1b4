import CofferCore
import CofferStore
import CofferTestSupport
import Foundation
import SecretServiceClient
import SecretServiceProtocol
import Testing

/// Damage at the end of a collection's file reaches clients through cofferd (its
/// org.coffer.Collection.Recovery property) in the words the files give `coffer --data-dir`:
/// before the next change sets it aside, after, and after a restart.
@Suite(.timeLimit(.minutes(5))) struct RecoveryReportTests {
    /// What `coffer --data-dir DIRECTORY collections` says of login: a store of this process
    /// reading the daemon's files (it writes nothing).
    static func direct(_ directory: String) throws -> String? {
        try FileStore(directory: directory, watchChanges: false, warn: { _ in }).open(.login).info().recovery
    }

    @Test func damageAtTheEndOfAFileIsReportedThroughTheDaemonAsOnTheFiles() throws {
        let f = try DaemonFixture()
        defer { f.shutdown() }
        for n in 0..<4 { _ = try f.client.quickItem("item \(n)", attributes: ["n": String(n)], secret: "secret \(n)") }
        #expect(try f.client.library.recovery(of: SecretPath.login) == nil)

        // The file cut 100 bytes into the last item's record, while cofferd serves it.
        let login = f.dataDir + "/login.coffer"
        let bytes = try #require(FileManager.default.contents(atPath: login).map(Array.init))
        let end = (bytes.lastIndex { $0 != 0 } ?? 0) + 1
        try Data(bytes[..<(end - 100)]).write(to: URL(fileURLWithPath: login))
        let damaged = try Self.direct(f.dataDir)
        #expect(damaged?.hasPrefix("damaged: 1 acknowledged record is missing") == true, "\(String(describing: damaged))")
        #expect(try f.client.library.recovery(of: SecretPath.login) == damaged, "\(f.daemonLog)")
        #expect(try f.client.library.recovery(of: SecretPath.aliases.appending(escaping: "default")) == damaged)
        #expect(f.daemonLog.contains("1 acknowledged record is missing"), "\(f.daemonLog)")

        // The next change sets what is left of the record aside: recovered with losses.
        _ = try f.client.quickItem("after", attributes: ["n": "after"], secret: "after")
        let recovered = try Self.direct(f.dataDir)
        #expect(recovered?.hasPrefix("recovered with losses") == true, "\(String(describing: recovered))")
        #expect(try f.client.library.recovery(of: SecretPath.login) == recovered)

        #expect(f.stopDaemon()?.exitCode == 0)
        try f.startDaemon(unlock: true)
        #expect(try f.client.library.recovery(of: SecretPath.login) == recovered)
    }
}
