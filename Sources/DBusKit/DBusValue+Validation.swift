internal import CDBus

extension DBusValue {
    /// Checks that this value can be marshalled without tripping any libdbus argument check:
    /// container contents match their declared signatures, dictionary keys are basic types,
    /// structures are non-empty, strings hold no NUL, byte arrays respect the 64 MiB array limit,
    /// nesting (variants included) stays within 64 levels, file descriptors are still open.
    /// Throws `invalidArgs` naming the problem.
    public func validate() throws(DBusError) {
        try validate(depth: 0)
        _ = try Signature(signatureString)
    }

    /// Validates a message body: every value, and the concatenated signature (parsed once).
    static func validateBody(_ values: [DBusValue]) throws(DBusError) -> Signature {
        for v in values { try v.validate(depth: 0) }
        return try DBusValue.signature(of: values)
    }

    private static let maxTotalDepth = 64

    /// Validates the contents at nesting `depth`, not the signature's own limits (length,
    /// array and structure depth): `validate()` and `validateBody` parse it once after, and a
    /// value whose type was checked against an already valid `Signature` (`isOfType`) needs none.
    func validate(depth: Int) throws(DBusError) {
        if depth > DBusValue.maxTotalDepth {
            throw .invalidArgs("value nested deeper than \(DBusValue.maxTotalDepth) containers")
        }
        switch self {
        case .byte, .boolean, .int16, .uint16, .int32, .uint32, .int64, .uint64, .double,
             .objectPath, .signature:
            return
        case .string(let s):
            if s.utf8.contains(0) { throw .invalidArgs("string contains a NUL character") }
        case .bytes(let b):
            if b.count > Int(cdbus_maximum_array_length) {
                throw .invalidArgs("byte array of \(b.count) bytes exceeds the D-Bus array limit")
            }
        case .secureBytes(let b):
            if b.count > Int(cdbus_maximum_array_length) {
                throw .invalidArgs("byte array of \(b.count) bytes exceeds the D-Bus array limit")
            }
        case .array(let element, let items):
            guard element.isSingleCompleteType else {
                throw .invalidArgs("array element signature '\(element)' is not a single complete type")
            }
            for item in items {
                guard item.isOfType(element) else {
                    throw .invalidArgs("array of '\(element)' holds a value of type '\(item.signatureString)'")
                }
                try item.validate(depth: depth + 1)
            }
        case .dictionary(let k, let v, let entries):
            guard k.isBasicType else { throw .invalidArgs("dictionary key signature '\(k)' is not a basic type") }
            guard v.isSingleCompleteType else {
                throw .invalidArgs("dictionary value signature '\(v)' is not a single complete type")
            }
            for e in entries {
                guard e.key.isOfType(k), e.value.isOfType(v) else {
                    throw .invalidArgs("dictionary a{\(k)\(v)} holds an entry of types '\(e.key.signatureString)', '\(e.value.signatureString)'")
                }
                try e.key.validate(depth: depth + 2)
                try e.value.validate(depth: depth + 2)
            }
        case .structure(let fields):
            guard !fields.isEmpty else { throw .invalidArgs("empty structure") }
            for f in fields { try f.validate(depth: depth + 1) }
        case .variant(let inner):
            _ = try Signature(inner.signatureString)
            try inner.validate(depth: depth + 1)
        case .unixFD(let descriptor):
            guard descriptor.isOpen else { throw .invalidArgs("a file descriptor (type 'h') that was closed already cannot be sent") }
        }
    }

    /// Whether this value's signature is exactly `signature`, compared byte by byte without
    /// building the signature's text (checked for every entry a reply's dictionary holds).
    func isOfType(_ signature: Signature) -> Bool {
        let text = signature.rawValue
        let bytes = text.utf8.span
        var position = 0
        return matches(bytes, at: &position) && position == bytes.count
    }

    /// Whether `bytes` holds this value's signature at `position`; if so, moves past it.
    private func matches(_ bytes: Span<UInt8>, at position: inout Int) -> Bool {
        switch self {
        case .byte: return Self.take(code: "y", bytes, &position)
        case .boolean: return Self.take(code: "b", bytes, &position)
        case .int16: return Self.take(code: "n", bytes, &position)
        case .uint16: return Self.take(code: "q", bytes, &position)
        case .int32: return Self.take(code: "i", bytes, &position)
        case .uint32: return Self.take(code: "u", bytes, &position)
        case .int64: return Self.take(code: "x", bytes, &position)
        case .uint64: return Self.take(code: "t", bytes, &position)
        case .double: return Self.take(code: "d", bytes, &position)
        case .string: return Self.take(code: "s", bytes, &position)
        case .objectPath: return Self.take(code: "o", bytes, &position)
        case .signature: return Self.take(code: "g", bytes, &position)
        case .variant: return Self.take(code: "v", bytes, &position)
        case .unixFD: return Self.take(code: "h", bytes, &position)
        case .bytes, .secureBytes: return Self.take(code: "a", bytes, &position) && Self.take(code: "y", bytes, &position)
        case .array(let element, _): return Self.take(code: "a", bytes, &position) && Self.take(element, bytes, &position)
        case .dictionary(let key, let value, _):
            return Self.take(code: "a", bytes, &position) && Self.take(code: "{", bytes, &position) && Self.take(key, bytes, &position)
                && Self.take(value, bytes, &position) && Self.take(code: "}", bytes, &position)
        case .structure(let fields):
            guard Self.take(code: "(", bytes, &position) else { return false }
            for field in fields where !field.matches(bytes, at: &position) { return false }
            return Self.take(code: ")", bytes, &position)
        }
    }

    /// Moves `position` past `code` if `bytes` holds it there.
    private static func take(code: Unicode.Scalar, _ bytes: Span<UInt8>, _ position: inout Int) -> Bool {
        guard position < bytes.count, bytes[position] == UInt8(ascii: code) else { return false }
        position += 1
        return true
    }

    /// Moves `position` past `signature` if `bytes` holds it there.
    private static func take(_ signature: Signature, _ bytes: Span<UInt8>, _ position: inout Int) -> Bool {
        let text = signature.rawValue
        let part = text.utf8.span
        guard bytes.count - position >= part.count else { return false }
        for offset in 0..<part.count where bytes[position + offset] != part[offset] { return false }
        position += part.count
        return true
    }
}
