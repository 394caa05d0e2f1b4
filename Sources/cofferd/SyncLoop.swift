import CofferCore
import CofferStore
import Glibc
import SecretService
import Synchronization
import SystemKit

/// Keeps each synced collection in step with its folder while cofferd runs (see
/// `CollectionSync`), on a thread of its own: every tenth of a second it asks each unlocked,
/// synced collection whether its folder or its store changed (the folder's inotify watch, and
/// one look at the store), and runs a round when one did, and every few seconds in any case
/// (changes inotify cannot see: a network file system; a failed round tried again). What
/// other devices changed is announced to clients as any change is.
///
/// A round that fails (a full disk, the folder gone) stops that collection's syncing with one
/// log line saying why, never a local write; it is tried again later.
final class SyncLoop: Sendable {
    private let keychain: Keychain
    private let directory: String
    private let server: SecretServer
    private let log: @Sendable (String) -> Void

    /// What the loop keeps of each synced collection (only its thread reaches it).
    private struct Follow {
        let sync: CollectionSync
        var lastRound: UInt64 = 0
        var lastError: String?
        var lastProblems: [String] = []
    }

    private let following = Mutex<[CollectionID: Follow]>([:])

    static let tick: UInt32 = 100_000   // microseconds
    static let pollMilliseconds: UInt64 = 3_000

    init(keychain: Keychain, directory: String, server: SecretServer, log: @escaping @Sendable (String) -> Void) {
        self.keychain = keychain
        self.directory = directory
        self.server = server
        self.log = log
    }

    func start() {
        Threads.start(name: "coffer sync") { [self] in
            while true {
                visit()
                usleep(Self.tick)
            }
        }
    }

    private func visit() {
        let ids = ((try? keychain.collectionIDs()) ?? []).filter { SyncState.exists(directory: directory, id: $0) }
        following.withLock { following in
            for id in following.keys where !ids.contains(id) { following[id] = nil }
            for id in ids {
                guard let collection = try? keychain.collection(id) as? FileCollection, !collection.isLocked else {
                    // Locked: the folder key goes with the collection's.
                    following[id]?.sync.reset()
                    following[id] = nil
                    continue
                }
                var follow = following[id] ?? Follow(sync: CollectionSync(collection: collection, directory: directory))
                visit(id, &follow)
                following[id] = follow
            }
        }
    }

    private func visit(_ id: CollectionID, _ follow: inout Follow) {
        let now = Clock.nowInMilliseconds()
        guard follow.sync.hasNews() || now &- follow.lastRound >= Self.pollMilliseconds else { return }
        follow.lastRound = now
        do throws(CofferError) {
            let round = try follow.sync.sync()
            if follow.lastError != nil { log("syncing collection '\(id.rawValue)' goes on") }
            follow.lastError = nil
            server.announceSyncedChanges(in: id, round.applied)
            if !round.applied.isEmpty { log("collection '\(id.rawValue)': \(round.applied.count) change(s) from other devices applied") }
            for problem in round.problems where !follow.lastProblems.contains(problem) { log("warning: collection '\(id.rawValue)': \(problem)") }
            follow.lastProblems = round.problems
            server.reportSyncProblems(in: id, round.problems)
        } catch {
            let message = "\(error)"
            if message != follow.lastError {
                log("warning: syncing collection '\(id.rawValue)' stopped: \(message); local reads and writes go on, and syncing is tried again every few seconds")
            }
            follow.lastError = message
            server.reportSyncProblems(in: id, ["syncing stopped: \(message); local reads and writes go on, and it is tried again every few seconds"])
        }
    }
}
