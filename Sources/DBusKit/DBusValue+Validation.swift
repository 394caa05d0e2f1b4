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

    /// Whether this value's signature is exactly `signature`, compared without building the
    /// signature's text.
    func isOfType(_ signature: Signature) -> Bool {
        var rest = signature.rawValue.utf8[...]
        return matchesPrefix(of: &rest) && rest.isEmpty
    }

    /// Whether `rest` starts with this value's signature; if so, drops it from `rest`.
    private func matchesPrefix(of rest: inout Substring.UTF8View) -> Bool {
        func take(_ text: String) -> Bool {
            guard rest.starts(with: text.utf8) else { return false }
            rest = rest.dropFirst(text.utf8.count)
            return true
        }
        switch self {
        case .array(let element, _): return take("a") && take(element.rawValue)
        case .dictionary(let k, let v, _): return take("a{") && take(k.rawValue) && take(v.rawValue) && take("}")
        case .structure(let fields): return take("(") && fields.allSatisfy { $0.matchesPrefix(of: &rest) } && take(")")
        default: return take(signatureString)
        }
    }
}
