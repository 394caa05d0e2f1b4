import CofferTestSupport
import DBusKit
import SecretServiceClient
import SecretServiceProtocol

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
    var collections: [ObjectPath] = [SecretPath.login, SecretPath.sessionCollection, SecretPath.defaultAlias]
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
        path.rawValue.hasPrefix(SecretPath.login.rawValue) || path.isInside(SecretPath.aliases) || path == plainSession
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
        guard path.isInside(SecretPath.service), elements.count >= 4 else { return }
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

        init(interface: String, member: String, target: Target, changesWith: String? = nil,
             arguments: @escaping @Sendable (inout RandomCallGenerator) -> [DBusValue]) {
            (self.interface, self.member, self.target, self.changesWith, self.arguments) = (interface, member, target, changesWith, arguments)
        }

        init(_ method: any DBusMethod.Type, target: Target, changesWith: String? = nil,
             arguments: @escaping @Sendable (inout RandomCallGenerator) -> [DBusValue]) {
            self.init(interface: method.interface, member: method.name, target: target, changesWith: changesWith, arguments: arguments)
        }
    }

    /// Properties that exist, by interface.
    private static let properties = [(ServiceInterface.name, ServiceInterface.Property.collections)]
        + CollectionInterface.description.properties.map { (CollectionInterface.name, $0.name) }
        + ItemInterface.description.properties.map { (ItemInterface.name, $0.name) }
    private static let propertyNames = Set(properties.map(\.1)).sorted() + ["Nope", ""]
    private static let interfaceNames = [ServiceInterface.name, CollectionInterface.name, ItemInterface.name, SessionInterface.name,
                                         PromptInterface.name, StandardInterface.properties, StandardInterface.peer, "org.example.Nothing", ""]

    private static let methods: [Method] = [
        Method(ServiceInterface.OpenSession.self, target: .service) { g in
            g.random.chance(0.5) ? [.string(ClientSession.plainAlgorithm), .variant(.string(""))]
                : [.string(ClientSession.encryptedAlgorithm), .variant(.bytes(g.random.bytes(g.random.chance(0.8) ? 128 : Int.random(in: 0...300, using: &g.random))))]
        },
        Method(ServiceInterface.CreateCollection.self, target: .service) { g in
            [.variantDictionary([CollectionProperties.labelKey: .string(g.random.text(maxLength: 20))]), .string(g.random.chance(0.5) ? "" : "fuzz")]
        },
        Method(ServiceInterface.SearchItems.self, target: .service) { g in [g.attributes()] },
        Method(ServiceInterface.Unlock.self, target: .service) { g in [g.pathArray()] },
        Method(ServiceInterface.Lock.self, target: .service) { g in [g.pathArray()] },
        Method(ServiceInterface.LockService.self, target: .service) { _ in [] },
        Method(ServiceInterface.ChangeLock.self, target: .service) { g in [.objectPath(g.path(.collection))] },
        Method(ServiceInterface.GetSecrets.self, target: .service) { g in
            [g.pathArray(), .objectPath(g.path(.session))]
        },
        Method(ServiceInterface.ReadAlias.self, target: .service) { g in
            [.string(["default", "login", "session", "fuzz", g.random.text(maxLength: 10)].randomElement(using: &g.random)!)]
        },
        Method(ServiceInterface.SetAlias.self, target: .service) { g in
            [.string(["fuzz", "other", g.random.text(maxLength: 10)].randomElement(using: &g.random)!), .objectPath(g.path(.collection))]
        },
        Method(CollectionInterface.Delete.self, target: .collection, changesWith: "") { _ in [] },
        Method(CollectionInterface.SearchItems.self, target: .collection) { g in [g.attributes()] },
        Method(CollectionInterface.CreateItem.self, target: .collection) { g in
            [.variantDictionary([ItemProperties.labelKey: .string(g.random.text(maxLength: 20)), ItemProperties.attributesKey: g.attributes()]),
             g.secret(), .boolean(g.random.chance(0.5))]
        },
        Method(ItemInterface.Delete.self, target: .item, changesWith: "") { _ in [] },
        Method(ItemInterface.GetSecret.self, target: .item) { g in [.objectPath(g.path(.session))] },
        Method(ItemInterface.SetSecret.self, target: .item, changesWith: "(oayays)") { g in [g.secret()] },
        Method(SessionInterface.Close.self, target: .session, changesWith: "") { _ in [] },
        Method(PromptInterface.Prompt.self, target: .prompt) { g in [.string(g.random.text(maxLength: 8))] },
        Method(PromptInterface.Dismiss.self, target: .prompt) { _ in [] },
        Method(interface: StandardInterface.properties, member: "Get", target: .any) { g in g.property() },
        Method(interface: StandardInterface.properties, member: "GetAll", target: .any) { g in [.string(g.pick(interfaceNames))] },
        Method(interface: StandardInterface.properties, member: "Set", target: .any, changesWith: "ssv") { g in
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
        case .service: [SecretPath.service]
        case .collection: paths.collections
        case .item: paths.items
        case .session: paths.sessions
        case .prompt: paths.prompts
        case .any: [SecretPath.service] + paths.collections + paths.items + paths.sessions + paths.prompts
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
