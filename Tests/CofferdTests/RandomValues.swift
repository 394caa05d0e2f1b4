import CofferTestSupport
import DBusKit

/// A D-Bus type to make random values of (kept shallow so that its signature is always valid).
indirect enum RandomType {
    /// One of the basic type codes `ybnqiuxtdsog`.
    case basic(Character)
    case array(RandomType)
    case dictionary(key: Character, value: RandomType)
    case structure([RandomType])
    case variant

    static let basicCodes = Array("ybnqiuxtdsog")

    var signature: String {
        switch self {
        case .basic(let code): String(code)
        case .array(let element): "a" + element.signature
        case .dictionary(let key, let value): "a{\(key)\(value.signature)}"
        case .structure(let fields): "(" + fields.map(\.signature).joined() + ")"
        case .variant: "v"
        }
    }
}

/// Random D-Bus values of any type, from a seeded generator.
extension SeededGenerator {
    mutating func randomType(depth: Int = 0) -> RandomType {
        let roll = Int.random(in: 0..<10, using: &self)
        if depth >= 3 || roll < 5 { return .basic(RandomType.basicCodes.randomElement(using: &self)!) }
        switch roll {
        case 5, 6: return .array(randomType(depth: depth + 1))
        case 7: return .dictionary(key: RandomType.basicCodes.randomElement(using: &self)!, value: randomType(depth: depth + 1))
        case 8: return .structure((0..<Int.random(in: 1...4, using: &self)).map { _ in randomType(depth: depth + 1) })
        default: return .variant
        }
    }

    /// A random value of a random type.
    mutating func randomValue(depth: Int = 0) -> DBusValue {
        value(of: randomType(depth: depth), depth: depth)
    }

    mutating func value(of type: RandomType, depth: Int = 0) -> DBusValue {
        switch type {
        case .basic(let code): return basicValue(code)
        case .array(.basic("y")): return .bytes(bytes(Int.random(in: 0...64, using: &self)))
        case .array(let element):
            let items = (0..<Int.random(in: 0...4, using: &self)).map { _ in value(of: element, depth: depth + 1) }
            return .array(elementSignature: Signature(stringLiteral: element.signature), items)
        case .dictionary(let key, let valueType):
            let entries = (0..<Int.random(in: 0...4, using: &self)).map { _ in
                DBusValue.DictionaryEntry(key: basicValue(key), value: value(of: valueType, depth: depth + 2))
            }
            return .dictionary(keySignature: Signature(stringLiteral: String(key)),
                               valueSignature: Signature(stringLiteral: valueType.signature), entries)
        case .structure(let fields): return .structure(fields.map { value(of: $0, depth: depth + 1) })
        case .variant: return .variant(depth > 8 ? basicValue("s") : randomValue(depth: depth + 1))
        }
    }

    mutating func basicValue(_ code: Character) -> DBusValue {
        switch code {
        case "y": .byte(.random(in: .min ... .max, using: &self))
        case "b": .boolean(.random(using: &self))
        case "n": .int16(.random(in: .min ... .max, using: &self))
        case "q": .uint16(.random(in: .min ... .max, using: &self))
        case "i": .int32(.random(in: .min ... .max, using: &self))
        case "u": .uint32(.random(in: .min ... .max, using: &self))
        case "x": .int64(.random(in: .min ... .max, using: &self))
        case "t": .uint64(.random(in: .min ... .max, using: &self))
        case "d": .double([0, -0.0, .infinity, -.infinity, .nan, .greatestFiniteMagnitude,
                           Double.random(in: -1e9...1e9, using: &self)].randomElement(using: &self)!)
        case "o": .objectPath(randomPath())
        case "g": .signature(Signature(stringLiteral: (0..<Int.random(in: 0...3, using: &self)).map { _ in
            randomType().signature }.joined()))
        default: .string(text(maxLength: chance(0.05) ? 2000 : 24))
        }
    }

    /// A syntactically valid object path of random elements, mostly under the service's.
    mutating func randomPath() -> ObjectPath {
        let elements = (0..<Int.random(in: 0...5, using: &self)).map { _ in
            String((0..<Int.random(in: 1...12, using: &self)).map { _ in
                Array("abcdefghijklmnopqrstuvwxyzABCZ0123456789_").randomElement(using: &self)!
            })
        }
        let base = chance(0.6) ? "/org/freedesktop/secrets" : ""
        let path = base + elements.map { "/" + $0 }.joined()
        return ObjectPath(validating: path.isEmpty ? "/" : path) ?? .root
    }
}
