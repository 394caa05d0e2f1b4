import CofferCore
import DBusKit

/// The object paths of the Secret Service and what each one names.
///
/// Collections live at `/org/freedesktop/secrets/collection/<id>` (the id escaped as
/// gnome-keyring does, so `my_keys` is `my_5fkeys`), items one level below by decimal id, sessions at `…/session/s<N>`, prompts at
/// `…/prompt/p<N>`. `…/aliases/<name>[/<item>]` names the same objects as the collection the
/// alias points to; replies and signals always carry the real paths.
public enum SecretPath {
    public static let service: ObjectPath = "/org/freedesktop/secrets"
    public static let collections: ObjectPath = "/org/freedesktop/secrets/collection"
    public static let aliases: ObjectPath = "/org/freedesktop/secrets/aliases"
    public static let sessions: ObjectPath = "/org/freedesktop/secrets/session"
    public static let prompts: ObjectPath = "/org/freedesktop/secrets/prompt"
    /// "No object": the empty prompt, a missing alias.
    public static let none: ObjectPath = "/"

    public static func collection(_ id: CollectionID) -> ObjectPath {
        collections.appending(escaping: id.rawValue)
    }

    public static func item(_ reference: ItemReference) -> ObjectPath {
        collection(reference.collection).appending(escaping: String(reference.item))
    }

    public static func session(_ number: UInt64) -> ObjectPath { sessions.appending(escaping: "s\(number)") }
    public static func prompt(_ number: UInt64) -> ObjectPath { prompts.appending(escaping: "p\(number)") }

    /// What a path below the service names, before alias resolution.
    public enum Target: Equatable, Sendable {
        case service
        /// `…/collection` or `…/aliases`, or another node with children only.
        case node
        case collection(CollectionID)
        case aliasCollection(String)
        case item(CollectionID, ItemID)
        case aliasItem(String, ItemID)
        case session(UInt64)
        case prompt(UInt64)
    }

    /// Called for every item of a `GetSecrets`, so it splits the UTF-8 bytes once instead of
    /// building every element through `ObjectPath.elements`.
    public static func parse(_ path: ObjectPath) -> Target? {
        let prefix = service.rawValue.utf8
        let bytes = path.rawValue.utf8
        guard bytes.starts(with: prefix) else { return nil }
        let tail = bytes.dropFirst(prefix.count)
        guard tail.isEmpty || tail.first == UInt8(ascii: "/") else { return nil }
        let rest = tail.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).dropFirst()
            .map { String(decoding: $0, as: UTF8.self) }
        switch rest.count {
        case 0:
            return .service
        case 1:
            return ["collection", "aliases", "session", "prompt"].contains(rest[0]) ? .node : nil
        case 2:
            switch rest[0] {
            case "collection": return collectionID(rest[1]).map { .collection($0) }
            case "aliases": return canonicalName(rest[1]).map { .aliasCollection($0) }
            case "session": return number(rest[1], prefix: "s").map { .session($0) }
            case "prompt": return number(rest[1], prefix: "p").map { .prompt($0) }
            default: return nil
            }
        case 3:
            guard let item = ItemID(rest[2]), String(item) == rest[2] else { return nil }
            switch rest[0] {
            case "collection": return collectionID(rest[1]).map { .item($0, item) }
            case "aliases": return canonicalName(rest[1]).map { .aliasItem($0, item) }
            default: return nil
            }
        default:
            return nil
        }
    }

    private static func collectionID(_ element: String) -> CollectionID? {
        canonicalName(element).flatMap { CollectionID($0) }
    }

    /// The name a collection or alias path element escapes, only if the element is exactly
    /// how `escapeElement` writes that name: `my_5Fkeys` (upper-case hex) or `ab_41` (an
    /// escaped letter) would otherwise be a second path for the same object.
    private static func canonicalName(_ element: String) -> String? {
        if ObjectPath.isUnescaped(element) { return element }   // the usual case, no copies
        guard let name = ObjectPath.unescapeElement(element), ObjectPath.escapeElement(name) == element else { return nil }
        return name
    }

    private static func number(_ element: String, prefix: Character) -> UInt64? {
        guard element.first == prefix else { return nil }
        return UInt64(element.dropFirst())
    }
}
