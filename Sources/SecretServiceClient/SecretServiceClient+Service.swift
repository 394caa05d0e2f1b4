import CofferCrypto
import DBusKit
import SecretServiceProtocol

extension SecretServiceClient {
    /// The collections, by path.
    public func collections() throws(DBusError) -> [ObjectPath] {
        let value = try property(ServiceInterface.Property.collections, of: ServiceInterface.name, on: SecretPath.service)
        return try [ObjectPath](dbusValue: value)
    }

    /// The collection `name` names (`default`, `login`, `session`, …), or nil.
    public func readAlias(_ name: String) throws(DBusError) -> ObjectPath? {
        let path = try call(ServiceInterface.ReadAlias.self, on: SecretPath.service, .init(name: name)).collection
        return path == SecretPath.none ? nil : path
    }

    /// Points `name` at `collection` (nil: removes it).
    public func setAlias(_ name: String, to collection: ObjectPath?) throws(DBusError) {
        _ = try call(ServiceInterface.SetAlias.self, on: SecretPath.service,
                     .init(name: name, collection: collection ?? SecretPath.none))
    }

    /// Items of every collection whose attributes include `attributes`.
    public func search(_ attributes: [String: String]) throws(DBusError) -> ServiceInterface.SearchItems.Output {
        try call(ServiceInterface.SearchItems.self, on: SecretPath.service, .init(attributes: attributes))
    }

    /// Unlocks collections or items, through the provider's prompt when it needs one; returns
    /// what is unlocked. `PromptError` when the prompt is dismissed or times out.
    public func unlock(_ objects: [ObjectPath], timeout: Duration = SecretServiceClient.slowCallTimeout) throws -> [ObjectPath] {
        let reply = try call(ServiceInterface.Unlock.self, on: SecretPath.service, .init(objects: objects))
        guard let result = try completeIfNeeded(reply.prompt) else { return reply.unlocked }
        return reply.unlocked + (try [ObjectPath](dbusValue: result))
    }

    /// Locks collections or items; returns what is locked.
    public func lock(_ objects: [ObjectPath]) throws -> [ObjectPath] {
        let reply = try call(ServiceInterface.Lock.self, on: SecretPath.service, .init(objects: objects))
        guard let result = try completeIfNeeded(reply.prompt) else { return reply.locked }
        return reply.locked + (try [ObjectPath](dbusValue: result))
    }

    /// Creates a collection through the provider's prompt (or returns the one `alias` names).
    public func createCollection(label: String, alias: String = "") throws -> ObjectPath {
        let reply = try call(ServiceInterface.CreateCollection.self, on: SecretPath.service,
                             .init(properties: .init(label: label), alias: alias), timeout: Self.slowCallTimeout)
        guard let result = try completeIfNeeded(reply.prompt) else { return reply.collection }
        return try ObjectPath(dbusValue: result)
    }

    /// Changes a collection's password through the provider's prompt.
    public func changePassword(of collection: ObjectPath) throws {
        let reply = try call(ServiceInterface.ChangeLock.self, on: SecretPath.service, .init(collection: collection))
        _ = try completeIfNeeded(reply.prompt)
    }

    /// How many items one GetSecrets call asks for at first: well below what one D-Bus reply
    /// may carry for secrets of cofferd's largest size.
    public static let secretsPerCall = 32

    /// Hands `body` the secret of each of `items` that exists and is unlocked, with its
    /// position in `items`, in GetSecrets calls of up to `secretsPerCall` items; each secret is
    /// decoded into secure memory just before `body` gets it. A batch too large for this
    /// process's secure memory, or for one reply, is asked again in halves.
    public func forEachSecret(of items: [ObjectPath], session: ClientSession,
                              _ body: (Int, Secret) throws -> Void) throws {
        var start = 0
        var size = Self.secretsPerCall
        while start < items.count {
            let batch = Array(items[start..<min(start + size, items.count)])
            let reply = Result { () throws(DBusError) in
                try call(ServiceInterface.GetSecrets.self, on: SecretPath.service, .init(items: batch, session: session.path))
            }
            if case .failure(let error) = reply, error.name == DBusError.Name.limitsExceeded, batch.count > 1 {
                size = batch.count / 2
                continue
            }
            let secrets = try reply.get().secrets
            for (offset, item) in batch.enumerated() {
                guard let wire = secrets[item] else { continue }
                try body(start + offset, try session.decode(wire))
            }
            start += batch.count
        }
    }

    // MARK: gnome-keyring's interface (cofferd has it too)

    /// Whether the provider offers gnome-keyring's password interface (cofferd and
    /// gnome-keyring do): creating, unlocking and re-keying collections without a prompt.
    public func offersPasswordInterface() -> Bool {
        guard let reply = try? connection.call(destination: destination, path: SecretPath.service,
                                               interface: "org.freedesktop.DBus.Introspectable", member: "Introspect"),
              let xml = reply.first?.string else { return false }
        return xml.contains("<interface name=\"\(GnomeKeyringInterface.name)\">")
    }

    /// Creates a collection protected by `password`.
    public func createCollection(label: String, password: SecureBytes, session: ClientSession) throws -> ObjectPath {
        try call(GnomeKeyringInterface.CreateWithMasterPassword.self, on: SecretPath.service,
                 .init(properties: .init(label: label), master: try session.encode(password)),
                 timeout: Self.slowCallTimeout).collection
    }

    /// Unlocks `collection` with its password.
    public func unlock(_ collection: ObjectPath, password: SecureBytes, session: ClientSession) throws {
        _ = try call(GnomeKeyringInterface.UnlockWithMasterPassword.self, on: SecretPath.service,
                     .init(collection: collection, master: try session.encode(password)), timeout: Self.slowCallTimeout)
    }

    /// Unlocks `collection` (of a Coffer daemon) through its TPM key slot, with `pin` if the
    /// slot has one (empty: none).
    public func unlockWithTPM(_ collection: ObjectPath, pin: SecureBytes, session: ClientSession) throws {
        _ = try call(CofferCollectionInterface.UnlockWithTPM.self, on: collection, .init(secret: try session.encode(pin)),
                     timeout: Self.slowCallTimeout)
    }

    /// Changes `collection`'s password from `old` to `new`.
    public func changePassword(of collection: ObjectPath, from old: SecureBytes, to new: SecureBytes,
                               session: ClientSession) throws {
        _ = try call(GnomeKeyringInterface.ChangeWithMasterPassword.self, on: SecretPath.service,
                     .init(collection: collection, original: try session.encode(old), master: try session.encode(new)),
                     timeout: Self.slowCallTimeout)
    }
}

extension SecretServiceClient {
    /// The aliases the provider lists below `…/aliases` (cofferd and gnome-keyring list theirs),
    /// always with `default`.
    public func aliasNames() -> [String] {
        var names: Set<String> = ["default"]
        guard let reply = try? connection.call(destination: destination, path: SecretPath.aliases,
                                               interface: "org.freedesktop.DBus.Introspectable", member: "Introspect"),
              let xml = reply.first?.string else { return names.sorted() }
        for piece in xml.split(separator: "<node name=\"").dropFirst() {
            guard let end = piece.firstIndex(of: "\""),
                  let name = ObjectPath.unescapeElement(String(piece[..<end])) else { continue }
            names.insert(name)
        }
        return names.sorted()
    }
}
