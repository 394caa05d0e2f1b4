internal import CDBus
import CofferCrypto

/// Appends already validated `DBusValue`s to a message with libdbus's recursive iterators.
/// Every failure here can only be out-of-memory, which is fatal.
enum MessageWriter {
    static func append(_ values: [DBusValue], to message: OpaquePointer) {
        var iter = DBusMessageIter()
        withUnsafeMutablePointer(to: &iter) { it in
            dbus_message_iter_init_append(message, it)
            for v in values { append(v, to: it) }
        }
    }

    /// Appends one dictionary `a{<key><value>}`, an entry at a time: `fill` gets a function that
    /// validates and marshals one entry at once. If `fill` throws, the dictionary is abandoned
    /// and the message must be dropped.
    static func appendDictionary(to message: OpaquePointer, key: Signature, value: Signature,
                                 _ fill: (_ add: (DBusValue, DBusValue) throws(DBusError) -> Void) throws -> Void) throws {
        var iter = DBusMessageIter()
        var sub = DBusMessageIter()
        try withUnsafeMutablePointer(to: &iter) { it in
            dbus_message_iter_init_append(message, it)
            try withUnsafeMutablePointer(to: &sub) { s in
                let element = "{" + key.rawValue + value.rawValue + "}"
                check(element.withCString { dbus_message_iter_open_container(it, cdbus_type_array, $0, s) })
                do {
                    try fill { (k: DBusValue, v: DBusValue) throws(DBusError) in
                        guard k.signatureString == key.rawValue, v.signatureString == value.rawValue else {
                            throw .invalidArgs("dictionary a{\(key)\(value)} given an entry of types '\(k.signatureString)', '\(v.signatureString)'")
                        }
                        try k.validate()
                        try v.validate()
                        container(s, cdbus_type_dict_entry, nil) { e in
                            append(k, to: e)
                            append(v, to: e)
                        }
                    }
                } catch {
                    dbus_message_iter_abandon_container(it, s)
                    throw error
                }
                check(dbus_message_iter_close_container(it, s))
            }
        }
    }

    private static func check(_ ok: dbus_bool_t) {
        if ok == 0 { fatalError("libdbus: out of memory while building a message") }
    }

    private static func basic<T: BitwiseCopyable>(_ it: UnsafeMutablePointer<DBusMessageIter>, _ type: Int32, _ value: T) {
        var v = value
        check(dbus_message_iter_append_basic(it, type, &v))
    }

    private static func string(_ it: UnsafeMutablePointer<DBusMessageIter>, _ type: Int32, _ s: String) {
        s.withCString { p in
            var ptr: UnsafePointer<CChar>? = p
            check(dbus_message_iter_append_basic(it, type, &ptr))
        }
    }

    private static func container(_ it: UnsafeMutablePointer<DBusMessageIter>, _ type: Int32,
                                  _ signature: String?, _ body: (UnsafeMutablePointer<DBusMessageIter>) -> Void) {
        var sub = DBusMessageIter()
        withUnsafeMutablePointer(to: &sub) { s in
            let opened = signature.withOptionalCString { dbus_message_iter_open_container(it, type, $0, s) }
            check(opened)
            body(s)
            check(dbus_message_iter_close_container(it, s))
        }
    }

    static func append(_ value: DBusValue, to it: UnsafeMutablePointer<DBusMessageIter>) {
        switch value {
        case .byte(let v): basic(it, cdbus_type_byte, v)
        case .boolean(let v): basic(it, cdbus_type_boolean, dbus_bool_t(v ? 1 : 0))
        case .int16(let v): basic(it, cdbus_type_int16, v)
        case .uint16(let v): basic(it, cdbus_type_uint16, v)
        case .int32(let v): basic(it, cdbus_type_int32, v)
        case .uint32(let v): basic(it, cdbus_type_uint32, v)
        case .int64(let v): basic(it, cdbus_type_int64, v)
        case .uint64(let v): basic(it, cdbus_type_uint64, v)
        case .double(let v): basic(it, cdbus_type_double, v)
        case .string(let s): string(it, cdbus_type_string, s)
        case .objectPath(let p): string(it, cdbus_type_object_path, p.rawValue)
        case .signature(let g): string(it, cdbus_type_signature, g.rawValue)
        case .bytes(let bytes):
            container(it, cdbus_type_array, "y") { sub in
                guard !bytes.isEmpty else { return }
                bytes.withUnsafeBufferPointer { buf in
                    check(cdbus_iter_append_byte_array(sub, buf.baseAddress, Int32(buf.count)))
                }
            }
        case .secureBytes(let bytes):
            container(it, cdbus_type_array, "y") { sub in
                bytes.withUnsafeBytes { buf in
                    guard buf.count > 0 else { return }
                    check(cdbus_iter_append_byte_array(sub, buf.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(buf.count)))
                }
            }
        case .array(let element, let items):
            container(it, cdbus_type_array, element.rawValue) { sub in
                for item in items { append(item, to: sub) }
            }
        case .dictionary(let k, let v, let entries):
            container(it, cdbus_type_array, "{" + k.rawValue + v.rawValue + "}") { sub in
                for entry in entries {
                    container(sub, cdbus_type_dict_entry, nil) { e in
                        append(entry.key, to: e)
                        append(entry.value, to: e)
                    }
                }
            }
        case .structure(let fields):
            container(it, cdbus_type_struct, nil) { sub in
                for f in fields { append(f, to: sub) }
            }
        case .variant(let inner):
            container(it, cdbus_type_variant, inner.signatureString) { sub in
                append(inner, to: sub)
            }
        }
    }
}
