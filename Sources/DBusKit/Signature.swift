/// A validated D-Bus type signature such as `a{sv}` or `(oayays)`, possibly empty, possibly a
/// sequence of several complete types (`ssv`).
///
/// Validated in Swift against the D-Bus rules (type codes, balanced containers, dict entries
/// only as array elements with a basic key, non-empty structs, nesting at most 32 arrays and 32
/// structs, length at most 255), so it never reaches libdbus unchecked.
public struct Signature: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The signature text; always valid.
    public let rawValue: String

    /// The empty signature (no values).
    public static let empty = Signature(unchecked: "")

    /// Validates `string`; throws `DBusError.invalidArgs` describing the problem.
    public init(_ string: String) throws(DBusError) {
        if let problem = SignatureParser.problem(in: string) {
            throw .invalidArgs("invalid signature '\(string)': \(problem)")
        }
        rawValue = string
    }

    /// Validating failable initialiser.
    public init?(validating string: String) {
        guard SignatureParser.problem(in: string) == nil else { return nil }
        rawValue = string
    }

    /// For literals in source code; traps (in Swift) when invalid.
    public init(stringLiteral value: String) {
        if let problem = SignatureParser.problem(in: value) {
            preconditionFailure("invalid signature literal '\(value)': \(problem)")
        }
        rawValue = value
    }

    /// Only for strings libdbus produced or that were validated already.
    init(unchecked string: String) { rawValue = string }

    /// Whether `string` is a valid signature.
    public static func isValid(_ string: String) -> Bool { SignatureParser.problem(in: string) == nil }

    public var description: String { rawValue }

    public var isEmpty: Bool { rawValue.isEmpty }

    /// The complete types this signature is made of: `"sa{sv}b"` → `["s", "a{sv}", "b"]`.
    public var completeTypes: [Signature] {
        SignatureParser.splitCompleteTypes(rawValue).map { Signature(unchecked: $0) }
    }

    /// Whether this is exactly one complete type (the form array elements, variant contents,
    /// and property types must have).
    public var isSingleCompleteType: Bool {
        !rawValue.isEmpty && SignatureParser.splitCompleteTypes(rawValue).count == 1
    }

    /// Whether this is a single basic (non-container) type, usable as a dictionary key.
    public var isBasicType: Bool {
        guard rawValue.utf8.count == 1, let c = rawValue.utf8.first else { return false }
        return SignatureParser.basicCodes.contains(c)
    }

    /// Concatenation of signatures (still valid if the result is at most 255 bytes).
    public static func + (a: Signature, b: Signature) throws(DBusError) -> Signature {
        try Signature(a.rawValue + b.rawValue)
    }

    // Common single complete types.
    public static let byte: Signature = "y"
    public static let boolean: Signature = "b"
    public static let int32: Signature = "i"
    public static let uint32: Signature = "u"
    public static let int64: Signature = "x"
    public static let uint64: Signature = "t"
    public static let double: Signature = "d"
    public static let string: Signature = "s"
    public static let objectPath: Signature = "o"
    public static let signature: Signature = "g"
    public static let variant: Signature = "v"
    /// `h`: a Unix file descriptor (`UnixFileDescriptor`).
    public static let unixFD: Signature = "h"
    public static let bytes: Signature = "ay"
    public static let stringArray: Signature = "as"
    public static let objectPathArray: Signature = "ao"
    public static let stringDictionary: Signature = "a{ss}"
    public static let variantDictionary: Signature = "a{sv}"
}

/// Recursive-descent validator and splitter for signature strings.
enum SignatureParser {
    static let maxLength = 255
    static let maxDepth = 32
    static let basicCodes: Set<UInt8> = Set("ybnqiuxtdsogh".utf8)

    static func problem(in string: String) -> String? {
        let bytes = Array(string.utf8)
        if bytes.count > maxLength { return "longer than \(maxLength) bytes" }
        var i = 0
        while i < bytes.count {
            switch parseOne(bytes, &i, arrayDepth: 0, structDepth: 0) {
            case .success: continue
            case .failure(let p): return p.text
            }
        }
        return nil
    }

    struct Problem: Error { let text: String }

    /// Parses one complete type starting at `i`, advancing `i` past it.
    static func parseOne(_ b: [UInt8], _ i: inout Int, arrayDepth: Int, structDepth: Int)
        -> Result<Void, Problem> {
        guard i < b.count else { return .failure(Problem(text: "incomplete type at end")) }
        let c = b[i]
        i += 1
        if basicCodes.contains(c) || c == UInt8(ascii: "v") { return .success(()) }
        switch c {
        case UInt8(ascii: "a"):
            if arrayDepth + 1 > maxDepth { return .failure(Problem(text: "arrays nested deeper than \(maxDepth)")) }
            guard i < b.count else { return .failure(Problem(text: "array without element type")) }
            if b[i] == UInt8(ascii: "{") {
                i += 1
                if structDepth + 1 > maxDepth { return .failure(Problem(text: "structs nested deeper than \(maxDepth)")) }
                guard i < b.count, basicCodes.contains(b[i]) else {
                    return .failure(Problem(text: "dict entry key must be a basic type"))
                }
                i += 1
                if case .failure(let p) = parseOne(b, &i, arrayDepth: arrayDepth + 1, structDepth: structDepth + 1) {
                    return .failure(p)
                }
                guard i < b.count, b[i] == UInt8(ascii: "}") else {
                    return .failure(Problem(text: "dict entry must have exactly one key and one value, closed by '}'"))
                }
                i += 1
                return .success(())
            }
            return parseOne(b, &i, arrayDepth: arrayDepth + 1, structDepth: structDepth)
        case UInt8(ascii: "("):
            if structDepth + 1 > maxDepth { return .failure(Problem(text: "structs nested deeper than \(maxDepth)")) }
            guard i < b.count, b[i] != UInt8(ascii: ")") else { return .failure(Problem(text: "empty struct")) }
            while i < b.count, b[i] != UInt8(ascii: ")") {
                if case .failure(let p) = parseOne(b, &i, arrayDepth: arrayDepth, structDepth: structDepth + 1) {
                    return .failure(p)
                }
            }
            guard i < b.count else { return .failure(Problem(text: "unclosed struct")) }
            i += 1
            return .success(())
        case UInt8(ascii: "{"):
            return .failure(Problem(text: "dict entry outside an array"))
        case UInt8(ascii: ")"), UInt8(ascii: "}"):
            return .failure(Problem(text: "unbalanced '\(Character(Unicode.Scalar(c)))'"))
        default:
            return .failure(Problem(text: "unknown type code '\(Character(Unicode.Scalar(c)))'"))
        }
    }

    /// Splits an already valid signature into its complete types.
    static func splitCompleteTypes(_ string: String) -> [String] {
        let b = Array(string.utf8)
        var result: [String] = []
        var i = 0
        while i < b.count {
            let start = i
            _ = parseOne(b, &i, arrayDepth: 0, structDepth: 0)
            result.append(String(decoding: b[start..<i], as: UTF8.self))
        }
        return result
    }
}
