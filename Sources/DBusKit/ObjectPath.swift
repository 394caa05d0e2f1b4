/// A validated D-Bus object path such as `/org/freedesktop/secrets/collection/login`.
///
/// The only way to build one is through a validating initialiser, so a value of this type can
/// always be handed to libdbus (which aborts the process on an invalid path). Rules: starts with
/// `/`; elements separated by single `/`; each element non-empty and made of `[A-Za-z0-9_]`;
/// no trailing `/` except for the root path `/`.
///
/// To derive an element from arbitrary data (a label, an id), use `ObjectPath.escapeElement(_:)`
/// or `appending(escaping:)`.
public struct ObjectPath: Sendable, Hashable, Comparable, CustomStringConvertible,
                          ExpressibleByStringLiteral {
    /// The path as a string; always valid.
    public let rawValue: String

    /// The root path `/`.
    public static let root = ObjectPath(unchecked: "/")

    /// Validates `string`; throws `DBusError.invalidArgs` describing the problem if it is not a
    /// valid object path.
    public init(_ string: String) throws(DBusError) {
        if let problem = ObjectPath.problem(in: string) {
            throw .invalidArgs("invalid object path '\(string)': \(problem)")
        }
        rawValue = string
    }

    /// Validating failable initialiser.
    public init?(validating string: String) {
        guard ObjectPath.problem(in: string) == nil else { return nil }
        rawValue = string
    }

    /// For literals in source code; traps (in Swift, before libdbus is reached) when invalid.
    public init(stringLiteral value: String) {
        if let problem = ObjectPath.problem(in: value) {
            preconditionFailure("invalid object path literal '\(value)': \(problem)")
        }
        rawValue = value
    }

    /// Only for strings libdbus itself produced or validated.
    init(unchecked string: String) { rawValue = string }

    /// Whether `string` is a valid object path.
    public static func isValid(_ string: String) -> Bool { problem(in: string) == nil }

    /// Why `string` is not a valid object path, or nil if it is.
    static func problem(in string: String) -> String? {
        let bytes = Array(string.utf8)
        guard bytes.first == UInt8(ascii: "/") else { return "must start with '/'" }
        if bytes.count == 1 { return nil }
        if bytes.last == UInt8(ascii: "/") { return "must not end with '/'" }
        var previousSlash = false
        for b in bytes.dropFirst() {
            if b == UInt8(ascii: "/") {
                if previousSlash { return "empty element ('//')" }
                previousSlash = true
            } else {
                guard ObjectPath.isElementByte(b) else {
                    return "element characters must be [A-Za-z0-9_]"
                }
                previousSlash = false
            }
        }
        return nil
    }

    static func isElementByte(_ b: UInt8) -> Bool {
        isAlphanumeric(b) || b == UInt8(ascii: "_")
    }

    static func isAlphanumeric(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A)
    }

    public var description: String { rawValue }

    public static func < (a: ObjectPath, b: ObjectPath) -> Bool { a.rawValue < b.rawValue }

    /// The elements, e.g. `["org", "freedesktop"]` for `/org/freedesktop`; empty for `/`.
    public var elements: [String] {
        rawValue.split(separator: "/").map(String.init)
    }

    /// The last element, or nil for `/`.
    public var lastElement: String? { elements.last }

    /// The parent path, or nil for `/`.
    public var parent: ObjectPath? {
        let e = elements
        guard !e.isEmpty else { return nil }
        return ObjectPath(elements: e.dropLast())
    }

    /// Whether `self` is `other` or lies below it (`/a/b` is inside `/a` and `/`; `/ab` is not inside `/a`).
    public func isInside(_ other: ObjectPath) -> Bool {
        if other.rawValue == "/" || other == self { return true }
        let path = rawValue.utf8, prefix = other.rawValue.utf8
        return path.count > prefix.count && path.starts(with: prefix)
            && path[path.index(path.startIndex, offsetBy: prefix.count)] == UInt8(ascii: "/")
    }

    /// Appends one raw element, validated (throws `invalidArgs` if it is empty or has
    /// characters outside `[A-Za-z0-9_]`).
    public func appending(element: String) throws(DBusError) -> ObjectPath {
        guard !element.isEmpty, element.utf8.allSatisfy(ObjectPath.isElementByte) else {
            throw .invalidArgs("invalid object path element '\(element)'")
        }
        return ObjectPath(unchecked: rawValue == "/" ? "/" + element : rawValue + "/" + element)
    }

    /// Appends `text` escaped into a single element with `escapeElement`; never fails.
    public func appending(escaping text: String) -> ObjectPath {
        let element = ObjectPath.escapeElement(text)
        return ObjectPath(unchecked: rawValue == "/" ? "/" + element : rawValue + "/" + element)
    }

    init<S: Sequence>(elements: S) where S.Element == String {
        let joined = elements.joined(separator: "/")
        self.init(unchecked: "/" + joined)
    }
}
