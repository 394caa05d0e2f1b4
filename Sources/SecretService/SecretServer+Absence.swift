import CofferCore
import DBusKit
import SecretServiceProtocol

extension SecretServer {
    /// What a client addressing a missing collection or alias is told (after "no object at
    /// path …"): above all, on a first run, that there is no collection yet and how to make one.
    public func absence(at path: ObjectPath) -> String? {
        switch SecretPath.parse(path) {
        case .aliasCollection(let alias), .aliasItem(let alias, _):
            guard (try? keychain.resolveAlias(alias)).flatMap({ $0 }) == nil else { return nil }
            return hasNoCollection ? Self.noCollectionYet
                : "the alias '\(alias)' names no collection; point it at one: coffer alias set \(alias) ID (coffer collections lists them)"
        case .collection(let name) where existingCollection(named: name) == nil:
            return hasNoCollection ? Self.noCollectionYet : "there is no collection '\(name)' (coffer collections lists them)"
        default:
            return nil
        }
    }

    /// Whether the store holds no collection (the in-memory `session` one aside).
    public var hasNoCollection: Bool {
        ((try? keychain.collectionIDs()) ?? []).allSatisfy { $0 == .session }
    }

    /// What to do when there is no collection at all (for clients and the log).
    public static let noCollectionYet = "there is no collection yet, so applications cannot store anything. "
        + "Create one: coffer create-collection login (or start cofferd with --unlock, which creates login with the password it reads)"
}
