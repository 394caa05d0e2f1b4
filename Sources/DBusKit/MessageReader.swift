internal import CDBus
import CofferCrypto
internal import SystemKit

/// Decodes a message body into `DBusValue`s, copying every string and byte array at once
/// (libdbus's pointers are valid only while the message lives), and taking a new descriptor
/// for every file descriptor.
///
/// Byte arrays inside the top-level arguments that `secretLimits` gives a limit for are copied
/// straight into secure memory (`.secureBytes`), and refused before any copy when longer than
/// that limit; the others become ordinary `.bytes`.
enum MessageReader {
    static func read(_ message: OpaquePointer, secretLimits: [Int?] = []) throws(DBusError) -> [DBusValue] {
        var iter = DBusMessageIter()
        return try withUnsafeMutablePointer(to: &iter) { (it) throws(DBusError) -> [DBusValue] in
            guard dbus_message_iter_init(message, it) != 0 else { return [] }
            var out: [DBusValue] = []
            while dbus_message_iter_get_arg_type(it) != cdbus_type_invalid {
                let index = out.count
                out.append(try readOne(it, secretLimit: index < secretLimits.count ? secretLimits[index] : nil))
                dbus_message_iter_next(it)
            }
            return out
        }
    }

    /// Reads values from `it` until its end.
    private static func readAll(_ it: UnsafeMutablePointer<DBusMessageIter>, secretLimit: Int?) throws(DBusError) -> [DBusValue] {
        var out: [DBusValue] = []
        while dbus_message_iter_get_arg_type(it) != cdbus_type_invalid {
            out.append(try readOne(it, secretLimit: secretLimit))
            dbus_message_iter_next(it)
        }
        return out
    }

    private static func basic<T: BitwiseCopyable>(_ it: UnsafeMutablePointer<DBusMessageIter>, _ zero: T) -> T {
        var v = zero
        dbus_message_iter_get_basic(it, &v)
        return v
    }

    private static func string(_ it: UnsafeMutablePointer<DBusMessageIter>) -> String {
        var p: UnsafePointer<CChar>? = nil
        dbus_message_iter_get_basic(it, &p)
        return p.map { String(cString: $0) } ?? ""
    }

    private static func recurse<R>(_ it: UnsafeMutablePointer<DBusMessageIter>,
                                   _ body: (UnsafeMutablePointer<DBusMessageIter>) throws(DBusError) -> R) throws(DBusError) -> R {
        var sub = DBusMessageIter()
        return try withUnsafeMutablePointer(to: &sub) { (s) throws(DBusError) -> R in
            dbus_message_iter_recurse(it, s)
            return try body(s)
        }
    }

    /// The full signature of the value at `it` (e.g. `a{sv}`).
    private static func currentSignature(_ it: UnsafeMutablePointer<DBusMessageIter>) -> String {
        guard let p = dbus_message_iter_get_signature(it) else { fatalError("libdbus: out of memory") }
        defer { dbus_free(p) }
        return String(cString: p)
    }

    private static func readOne(_ it: UnsafeMutablePointer<DBusMessageIter>, secretLimit: Int?) throws(DBusError) -> DBusValue {
        let type = dbus_message_iter_get_arg_type(it)
        switch type {
        case cdbus_type_byte: return .byte(basic(it, UInt8(0)))
        case cdbus_type_boolean: return .boolean(basic(it, dbus_bool_t(0)) != 0)
        case cdbus_type_int16: return .int16(basic(it, Int16(0)))
        case cdbus_type_uint16: return .uint16(basic(it, UInt16(0)))
        case cdbus_type_int32: return .int32(basic(it, Int32(0)))
        case cdbus_type_uint32: return .uint32(basic(it, UInt32(0)))
        case cdbus_type_int64: return .int64(basic(it, Int64(0)))
        case cdbus_type_uint64: return .uint64(basic(it, UInt64(0)))
        case cdbus_type_double: return .double(basic(it, Double(0)))
        case cdbus_type_string: return .string(string(it))
        case cdbus_type_object_path: return .objectPath(ObjectPath(unchecked: string(it)))
        case cdbus_type_signature: return .signature(Signature(unchecked: string(it)))
        case cdbus_type_variant:
            return .variant(try recurse(it) { (s) throws(DBusError) in try readOne(s, secretLimit: secretLimit) })
        case cdbus_type_struct:
            return .structure(try recurse(it) { (s) throws(DBusError) in try readAll(s, secretLimit: secretLimit) })
        case cdbus_type_array:
            return try readArray(it, secretLimit: secretLimit)
        case cdbus_type_unix_fd:
            return .unixFD(try fileDescriptor(it))
        default:
            throw .invalidArgs("unexpected type code \(type) in message body")
        }
    }

    private static func readArray(_ it: UnsafeMutablePointer<DBusMessageIter>, secretLimit: Int?) throws(DBusError) -> DBusValue {
        let elementType = dbus_message_iter_get_element_type(it)
        if elementType == cdbus_type_byte {
            return try recurse(it) { (s) throws(DBusError) -> DBusValue in
                var count: Int32 = 0
                let p = cdbus_iter_get_byte_array(s, &count)
                let bytes = UnsafeRawBufferPointer(start: p, count: p == nil ? 0 : Int(max(count, 0)))
                guard let secretLimit else { return .bytes(Array(bytes)) }
                return .secureBytes(try secure(bytes, limit: secretLimit))
            }
        }
        let full = Array(currentSignature(it).utf8)   // "a" + element signature
        let element = String(decoding: full.dropFirst(), as: UTF8.self)
        if elementType == cdbus_type_dict_entry {
            // element is "{" key value "}"; a key is always one basic type code.
            let inner = full.dropFirst(2).dropLast()
            let key = Signature(unchecked: String(decoding: inner.prefix(1), as: UTF8.self))
            let value = Signature(unchecked: String(decoding: inner.dropFirst(), as: UTF8.self))
            let entries = try recurse(it) { (s) throws(DBusError) -> [DBusValue.DictionaryEntry] in
                var out: [DBusValue.DictionaryEntry] = []
                while dbus_message_iter_get_arg_type(s) == cdbus_type_dict_entry {
                    let kv = try recurse(s) { (e) throws(DBusError) in try readAll(e, secretLimit: secretLimit) }
                    guard kv.count == 2 else { throw .invalidArgs("malformed dict entry") }
                    out.append(.init(key: kv[0], value: kv[1]))
                    dbus_message_iter_next(s)
                }
                return out
            }
            return .dictionary(keySignature: key, valueSignature: value, entries)
        }
        let items = try recurse(it) { (s) throws(DBusError) in try readAll(s, secretLimit: secretLimit) }
        return .array(elementSignature: Signature(unchecked: element), items)
    }

    /// The descriptor at `it`: libdbus duplicates it out of the message, and the new one is
    /// owned by the `UnixFileDescriptor` returned.
    private static func fileDescriptor(_ it: UnsafeMutablePointer<DBusMessageIter>) throws(DBusError) -> UnixFileDescriptor {
        let raw = basic(it, Int32(-1))
        guard raw >= 0 else {
            throw .invalidArgs("a file descriptor (type 'h') did not come with the message, or no descriptor was left to receive it")
        }
        return UnixFileDescriptor(adopting: FileDescriptor(rawValue: raw))
    }

    /// A secret byte array moved from the message buffer into secure memory: the message's
    /// copy is wiped (a secret from a `plain` session is there in clear, and the message's
    /// buffer goes back to the heap unwiped), so the message is not read again after it.
    private static func secure(_ bytes: UnsafeRawBufferPointer, limit: Int) throws(DBusError) -> SecureBytes {
        defer { wipe(UnsafeMutableRawPointer(mutating: bytes.baseAddress), bytes.count) }
        guard bytes.count <= limit else {
            throw .invalidArgs("a secret of \(bytes.count) bytes is larger than the \(limit) bytes allowed")
        }
        do {
            return try SecureBytes(copying: bytes)
        } catch {
            throw DBusError(name: DBusError.Name.limitsExceeded,
                            message: "no secure memory left for a secret of \(bytes.count) bytes; try again later")
        }
    }
}
