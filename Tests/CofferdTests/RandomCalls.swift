import CofferTestSupport
import DBusKit

/// One call the random client sends.
struct RandomCall: CustomStringConvertible {
    let path: ObjectPath
    let interface: String?
    let member: String
    let arguments: [DBusValue]

    var description: String {
        let shown = arguments.map { String(String(describing: $0).prefix(120)) }.joined(separator: ", ")
        return "\(path) \(interface ?? "-").\(member)(\(DBusValue.signatureString(of: arguments))) [\(shown.prefix(300))]"
    }
}

extension DBusValue {
    static func signatureString(of values: [DBusValue]) -> String { values.map(\.signatureString).joined() }
}

/// The object paths the random client aims at, by kind, grown from the paths replies name.
struct PathPool {
    var collections: [ObjectPath] = [SS.login, SS.sessionCollection, SS.defaultAlias]
    var items: [ObjectPath] = []
    var sessions: [ObjectPath] = []
    var prompts: [ObjectPath] = []
    /// Paths that name nothing, or things another client owns.
    var strange: [ObjectPath] = [
        "/", "/org/freedesktop/secrets/collection", "/org/freedesktop/secrets/collection/nope",
        "/org/freedesktop/secrets/collection/login/999999", "/org/freedesktop/secrets/collection/session/0",
        "/org/freedesktop/secrets/session/s999", "/org/freedesktop/secrets/prompt/p999",
        "/org/freedesktop/secrets/aliases/nope", "/org/freedesktop/secrets/aliases",
        "/org/freedesktop/DBus", "/org/freedesktop/secrets/collection/login/1/2",
    ]

    /// The random client's own plain session, which its secrets mostly name (so that they are
    /// valid); never closed.
    var plainSession: ObjectPath?

    /// Paths where a call that changes or deletes must not land with valid arguments: the
    /// collection holding the items checked after every batch, every alias (one may name it),
    /// those items, and `plainSession`.
    func isProtected(_ path: ObjectPath) -> Bool {
        path.rawValue.hasPrefix(SS.login.rawValue) || path.isInside("/org/freedesktop/secrets/aliases") || path == plainSession
    }

    /// Drops `path`, which names nothing any more, from its kind's list.
    mutating func forget(_ path: ObjectPath) {
        guard path != plainSession else { return }
        for list in [\PathPool.collections, \.items, \.sessions, \.prompts] { self[keyPath: list].removeAll { $0 == path } }
    }

    /// Adds every object path in `values` (at any depth) to its kind's list.
    mutating func learn(from values: [DBusValue]) {
        for value in values { learn(value) }
    }

    private mutating func learn(_ value: DBusValue) {
        switch value {
        case .objectPath(let path): add(path)
        case .array(_, let items): items.forEach { learn($0) }
        case .dictionary(_, _, let entries): entries.forEach { learn($0.key); learn($0.value) }
        case .structure(let fields): fields.forEach { learn($0) }
        case .variant(let inner): learn(inner)
        default: break
        }
    }

    mutating func add(_ path: ObjectPath) {
        let elements = path.elements
        guard path.isInside(SS.service), elements.count >= 4 else { return }
        func insert(_ list: inout [ObjectPath]) {
            guard !list.contains(path) else { return }
            if list.count >= 64 { list.removeFirst() }
            list.append(path)
        }
        switch (elements[3], elements.count) {
        case ("collection", 5), ("aliases", 5): insert(&collections)
        case ("collection", 6), ("aliases", 6): insert(&items)
        case ("session", _): insert(&sessions)
        case ("prompt", _): insert(&prompts)
        default: insert(&strange)
        }
    }
}

/// Calls of the Secret Service's methods (and Properties) with valid arguments, then mutated:
/// wrong types, wrong arity, random and huge strings, odd paths, random bytes, deep variants,
/// empty containers. A call that changes or deletes never reaches a protected path with a valid
/// signature.
struct RandomCallGenerator {
    var random: SeededGenerator
    var paths = PathPool()

    init(seed: UInt64) { random = SeededGenerator(seed: seed) }

    private enum Target { case service, collection, item, session, prompt, any }

    private struct Method: Sendable {
        let interface: String
        let member: String
        let target: Target
        /// The signature with which the call changes or deletes what it lands on (nil: never).
        var changesWith: String?
        let arguments: @Sendable (inout RandomCallGenerator) -> [DBusValue]
    }

    private static let propertyNames = ["Collections", "Items", "Label", "Locked", "Created", "Modified", "Attributes", "Type", "Nope", ""]
    /// Properties that exist, by interface.
    private static let properties = [(SS.serviceInterface, "Collections")]
        + ["Items", "Label", "Locked", "Created", "Modified"].map { (SS.collectionInterface, $0) }
        + ["Locked", "Attributes", "Label", "Type", "Created", "Modified"].map { (SS.itemInterface, $0) }
    private static let interfaceNames = [SS.serviceInterface, SS.collectionInterface, SS.itemInterface, SS.sessionInterface,
                                         SS.promptInterface, SS.properties, "org.freedesktop.DBus.Peer", "org.example.Nothing", ""]

    private static let methods: [Method] = [
        Method(interface: SS.serviceInterface, member: "OpenSession", target: .service) { g in
            g.random.chance(0.5) ? [.string("plain"), .variant(.string(""))]
                : [.string(SS.dh), .variant(.bytes(g.random.bytes(g.random.chance(0.8) ? 128 : Int.random(in: 0...300, using: &g.random))))]
        },
        Method(interface: SS.serviceInterface, member: "CreateCollection", target: .service) { g in
            [.variantDictionary([SS.collectionLabel: .string(g.random.text(maxLength: 20))]), .string(g.random.chance(0.5) ? "" : "fuzz")]
        },
        Method(interface: SS.serviceInterface, member: "SearchItems", target: .service) { g in [g.attributes()] },
        Method(interface: SS.serviceInterface, member: "Unlock", target: .service) { g in [g.pathArray()] },
        Method(interface: SS.serviceInterface, member: "Lock", target: .service) { g in [g.pathArray()] },
        Method(interface: SS.serviceInterface, member: "LockService", target: .service) { _ in [] },
        Method(interface: SS.serviceInterface, member: "ChangeLock", target: .service) { g in [.objectPath(g.path(.collection))] },
        Method(interface: SS.serviceInterface, member: "GetSecrets", target: .service) { g in
            [g.pathArray(), .objectPath(g.path(.session))]
        },
        Method(interface: SS.serviceInterface, member: "ReadAlias", target: .service) { g in
            [.string(["default", "login", "session", "fuzz", g.random.text(maxLength: 10)].randomElement(using: &g.random)!)]
        },
        Method(interface: SS.serviceInterface, member: "SetAlias", target: .service) { g in
            [.string(["fuzz", "other", g.random.text(maxLength: 10)].randomElement(using: &g.random)!), .objectPath(g.path(.collection))]
        },
        Method(interface: SS.collectionInterface, member: "Delete", target: .collection, changesWith: "") { _ in [] },
        Method(interface: SS.collectionInterface, member: "SearchItems", target: .collection) { g in [g.attributes()] },
        Method(interface: SS.collectionInterface, member: "CreateItem", target: .collection) { g in
            [.variantDictionary([SS.itemLabel: .string(g.random.text(maxLength: 20)), SS.itemAttributes: g.attributes()]),
             g.secret(), .boolean(g.random.chance(0.5))]
        },
        Method(interface: SS.itemInterface, member: "Delete", target: .item, changesWith: "") { _ in [] },
        Method(interface: SS.itemInterface, member: "GetSecret", target: .item) { g in [.objectPath(g.path(.session))] },
        Method(interface: SS.itemInterface, member: "SetSecret", target: .item, changesWith: "(oayays)") { g in [g.secret()] },
        Method(interface: SS.sessionInterface, member: "Close", target: .session, changesWith: "") { _ in [] },
        Method(interface: SS.promptInterface, member: "Prompt", target: .prompt) { g in [.string(g.random.text(maxLength: 8))] },
        Method(interface: SS.promptInterface, member: "Dismiss", target: .prompt) { _ in [] },
        Method(interface: SS.properties, member: "Get", target: .any) { g in g.property() },
        Method(interface: SS.properties, member: "GetAll", target: .any) { g in [.string(g.pick(interfaceNames))] },
        Method(interface: SS.properties, member: "Set", target: .any, changesWith: "ssv") { g in
            let value: DBusValue = switch Int.random(in: 0..<3, using: &g.random) {
            case 0: .string(g.random.text(maxLength: 20))
            case 1: g.attributes()
            default: g.random.randomValue()
            }
            return g.property() + [.variant(value)]
        },
    ]

    // MARK: Calls

    /// The next call: a method, a target, arguments (valid, then mutated).
    mutating func next() -> RandomCall {
        let method = pick(Self.methods)
        let path = random.chance(0.1) ? pick(paths.strange + [random.randomPath()]) : path(method.target)
        var arguments = method.arguments(&self)
        if !random.chance(0.2) { arguments = mutate(arguments) }
        if paths.isProtected(path), DBusValue.signatureString(of: arguments) == method.changesWith {
            arguments.append(.string("extra"))   // a wrong arity instead of a change to what is checked
        }
        let interface: String? = random.chance(0.05) ? nil : random.chance(0.03) ? pick(Self.interfaceNames) : method.interface
        return RandomCall(path: path, interface: interface, member: method.member, arguments: arguments)
    }

    private mutating func mutate(_ arguments: [DBusValue]) -> [DBusValue] {
        var arguments = arguments
        let index = arguments.isEmpty ? 0 : Int.random(in: 0..<arguments.count, using: &random)
        switch Int.random(in: 0..<9, using: &random) {
        case 0 where !arguments.isEmpty: arguments[index] = random.randomValue()
        case 1 where !arguments.isEmpty: arguments.remove(at: index)
        case 2: arguments.insert(random.randomValue(), at: Int.random(in: 0...arguments.count, using: &random))
        case 3 where !arguments.isEmpty: arguments[index] = .variant(arguments[index])
        case 4 where !arguments.isEmpty: arguments[index] = mutateInside(arguments[index], depth: 0)
        case 5: arguments = (0..<Int.random(in: 0...4, using: &random)).map { _ in random.randomValue() }
        case 6 where !arguments.isEmpty: arguments[index] = huge(like: arguments[index])
        case 7 where !arguments.isEmpty:
            let levels = Int.random(in: 2...40, using: &random)
            arguments[index] = (0..<levels).reduce(arguments[index]) { inner, _ in .variant(inner) }
        default: arguments = arguments.map(emptied)
        }
        return arguments
    }

    /// `value` with one part inside changed: a struct field, a variant's content, a dictionary
    /// entry, an array's length; keeps container element types, so the value stays sendable.
    private mutating func mutateInside(_ value: DBusValue, depth: Int) -> DBusValue {
        switch value {
        case .structure(var fields):
            let i = Int.random(in: 0..<fields.count, using: &random)
            fields[i] = random.chance(0.5) ? random.randomValue() : mutateInside(fields[i], depth: depth + 1)
            return .structure(fields)
        case .variant(let inner):
            return .variant(random.chance(0.5) ? random.randomValue() : mutateInside(inner, depth: depth + 1))
        case .dictionary(let k, let v, var entries):
            if v == .variant, let first = entries.first {
                let i = Int.random(in: 0..<entries.count, using: &random)
                entries[i].value = .variant(random.randomValue())
                entries.append(.init(key: first.key, value: .variant(random.randomValue())))   // a repeated key
            } else if k == .string, v == .string {
                entries.append(.init(key: .string(random.text(maxLength: 300)), value: .string(random.text(maxLength: 300))))
            }
            return .dictionary(keySignature: k, valueSignature: v, random.chance(0.2) ? [] : entries)
        case .array(let element, let items) where !items.isEmpty:
            return .array(elementSignature: element, random.chance(0.5) ? [] : items + items)
        case .bytes(let bytes): return .bytes(random.chance(0.5) ? [] : random.bytes(bytes.count + Int.random(in: 1...40, using: &random)))
        case .string: return .string(random.text(maxLength: 64))
        case .objectPath: return .objectPath(random.chance(0.5) ? random.randomPath() : pick(paths.strange))
        default: return random.randomValue()
        }
    }

    /// A huge version of `value`'s kind: long strings, large byte arrays, many entries.
    private mutating func huge(like value: DBusValue) -> DBusValue {
        switch value {
        case .bytes: return .bytes(random.bytes(Int.random(in: 200_000...1_200_000, using: &random)))
        case .dictionary(.string, .string, _):
            return .stringDictionary(Dictionary(uniqueKeysWithValues: (0..<Int.random(in: 100...3000, using: &random)).map { ("k\($0)", "v") }))
        case .structure(let fields):
            return .structure(fields.map { $0.bytes != nil ? .bytes(random.bytes(300_000)) : $0 })
        default:
            let unit = random.text(maxLength: 8) + "x"
            return .string(String(repeating: unit, count: Int.random(in: 8_000...120_000, using: &random) / unit.count + 1))
        }
    }

    /// Containers emptied (an empty struct is not sendable, so structs keep their fields).
    private func emptied(_ value: DBusValue) -> DBusValue {
        switch value {
        case .array(let element, _): .array(elementSignature: element, [])
        case .bytes: .bytes([])
        case .dictionary(let k, let v, _): .dictionary(keySignature: k, valueSignature: v, [])
        case .string: .string("")
        case .structure(let fields): .structure(fields.map(emptied))
        case .variant(let inner): .variant(emptied(inner))
        default: value
        }
    }

    // MARK: Arguments

    private mutating func pick<T>(_ list: [T]) -> T { list.randomElement(using: &random)! }

    private mutating func path(_ target: Target) -> ObjectPath {
        let list: [ObjectPath] = switch target {
        case .service: [SS.service]
        case .collection: paths.collections
        case .item: paths.items
        case .session: paths.sessions
        case .prompt: paths.prompts
        case .any: [SS.service] + paths.collections + paths.items + paths.sessions + paths.prompts
        }
        return list.isEmpty ? pick(paths.strange) : pick(list)
    }

    private mutating func pathArray() -> DBusValue {
        .objectPathArray((0..<Int.random(in: 0...3, using: &random)).map { _ in path(.any) })
    }

    /// Attributes of the random client's own items (never those of the checked items).
    private mutating func attributes() -> DBusValue {
        var attributes = ["fuzz": "\(Int.random(in: 0..<5, using: &random))"]
        if random.chance(0.5) { attributes[random.text(maxLength: 12)] = random.text(maxLength: 40) }
        return .stringDictionary(attributes)
    }

    /// Mostly a valid secret for the client's plain session, else one for any session.
    private mutating func secret() -> DBusValue {
        let valid = random.chance(0.6) && paths.plainSession != nil
        return .structure([.objectPath(valid ? paths.plainSession! : path(.session)), .bytes(valid ? [] : random.bytes(16)),
                           .bytes(random.bytes(Int.random(in: 0...64, using: &random))),
                           .string(random.chance(0.8) ? "text/plain" : random.text(maxLength: 20))])
    }

    /// An interface and a property name: mostly a property that exists.
    private mutating func property() -> [DBusValue] {
        let (interface, name) = random.chance(0.7) ? pick(Self.properties) : (pick(Self.interfaceNames), pick(Self.propertyNames))
        return [.string(interface), .string(name)]
    }
}
