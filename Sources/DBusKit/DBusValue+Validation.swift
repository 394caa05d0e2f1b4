internal import CDBus

extension DBusValue {
    /// Checks that this value can be marshalled without tripping any libdbus argument check:
    /// container contents match their declared signatures, dictionary keys are basic types,
    /// structures are non-empty, strings hold no NUL, byte arrays respect the 64 MiB array limit,
    /// nesting (variants included) stays within 64 levels, file descriptors are still open.
    /// Throws `invalidArgs` naming the problem.
    public func validate() throws(DBusError) {
        try validate(depth: 0)
    }

    /// Validates a message body: every value, and the concatenated signature.
    static func validateBody(_ values: [DBusValue]) throws(DBusError) -> Signature {
        for v in values { try v.validate(depth: 0) }
        return try DBusValue.signature(of: values)
    }

    private static let maxTotalDepth = 64

    private func validate(depth: Int) throws(DBusError) {
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
                guard item.signatureString == element.rawValue else {
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
                guard e.key.signatureString == k.rawValue, e.value.signatureString == v.rawValue else {
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
        if depth == 0 { _ = try Signature(signatureString) }
    }
}
