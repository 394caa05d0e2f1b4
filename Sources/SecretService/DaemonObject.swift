import CofferCore
import DBusKit
import SecretServiceProtocol

/// `/org/coffer/Daemon`: `org.coffer.Daemon`'s read-only properties over what cofferd tells of
/// itself.
struct DaemonObject: DBusObject {
    let description: CofferDaemonDescription
    let server: SecretServer

    var interfaces: [InterfaceDescription] { [CofferDaemonInterface.description] }

    func handleMethod(_ call: MethodCall) throws -> MethodResult {
        throw DBusError.unknownMethod("\(CofferDaemonInterface.name) has no method \(call.member)")
    }

    func getProperty(_ name: String, interface: String, call: MethodCall) throws -> DBusValue {
        if name == CofferDaemonInterface.Property.collections { return CollectionAccessSummary.value(collections()) }
        if name == CofferDaemonInterface.Property.syncProblems {
            return SyncProblems.value(Dictionary(uniqueKeysWithValues: server.syncProblems.withLock { $0 }.map { ($0.key.rawValue, $0.value) }))
        }
        if name == CofferDaemonInterface.Property.longestDispatch {
            return .uint64(UInt64(server.connection.longestDispatch / .microseconds(1)))
        }
        guard let value = description.value(of: name) else { throw DBusError.unknownProperty("\(interface) has no property \(name)") }
        return value
    }

    /// Each unlocked collection's policy and items without a verified owner (read now).
    private func collections() -> [String: CollectionAccessSummary] {
        let keychain = server.keychain
        var summaries: [String: CollectionAccessSummary] = [:]
        for id in (try? keychain.collectionIDs()) ?? [] where id != .session {
            guard let access = try? keychain.access(of: id),
                  let items = try? keychain.search(Query(collection: id, returnAttributes: true)),
                  !items.contains(where: \.isLocked) else { continue }
            let unowned = items.count { $0.metadata?.creator?.isVerified != true }
            summaries[id.rawValue] = CollectionAccessSummary(policy: access.policy.rawValue, itemsWithoutOwner: UInt32(clamping: unowned))
        }
        return summaries
    }
}

extension SecretServer {
    /// Serves `description` at `/org/coffer/Daemon` on this server's connection (call after
    /// `start()`, whose policy, callers of this Unix user only, it shares).
    public func describe(as description: CofferDaemonDescription) {
        connection.objectServer.register(path: CofferDaemonInterface.path, object: DaemonObject(description: description, server: self))
    }
}
