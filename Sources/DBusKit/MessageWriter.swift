internal import CDBus
import CofferCrypto

/// Appends already validated `DBusValue`s to a message with libdbus's recursive iterators.
/// Running out of memory is fatal; the one failure thrown is a file descriptor that cannot be
/// put into the message (closed meanwhile, or none left to duplicate it into): the containers
/// opened so far are abandoned, and the message must be dropped.
enum MessageWriter {
    static func append(_ values: [DBusValue], to message: OpaquePointer) throws(DBusError) {
        var iter = DBusMessageIter()
        try withUnsafeMutablePointer(to: &iter) { (it) throws(DBusError) in
            dbus_message_iter_init_append(message, it)
            for v in values { try append(v, to: it) }
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
                        guard k.isOfType(key), v.isOfType(value) else {
                            throw .invalidArgs("dictionary a{\(key)\(value)} given an entry of types '\(k.signatureString)', '\(v.signatureString)'")
                        }
                        try k.validate(depth: 2)
                        try v.validate(depth: 2)
                        try container(s, cdbus_type_dict_entry, nil) { (e) throws(DBusError) in
                            try append(k, to: e)
                            try append(v, to: e)
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

    private static func container(_ it: UnsafeMutablePointer<DBusMessageIter>, _ type: Int32, _ signature: String?,
                                  _ body: (UnsafeMutablePointer<DBusMessageIter>) throws(DBusError) -> Void) throws(DBusError) {
        var sub = DBusMessageIter()
        try withUnsafeMutablePointer(to: &sub) { (s) throws(DBusError) in
            let opened = signature.withOptionalCString { dbus_message_iter_open_container(it, type, $0, s) }
            check(opened)
            do throws(DBusError) {
                try body(s)
            } catch {
                dbus_message_iter_abandon_container(it, s)
                throw error
            }
            check(dbus_message_iter_close_container(it, s))
        }
    }

    /// Appends a file descriptor: libdbus puts a duplicate into the message. It is held open
    /// meanwhile, so that a `close()` on another thread cannot slip in between.
    private static func fileDescriptor(_ it: UnsafeMutablePointer<DBusMessageIter>, _ descriptor: UnixFileDescriptor) throws(DBusError) {
        let appended = try? descriptor.withDescriptor { open in
            var raw = open.rawValue
            return dbus_message_iter_append_basic(it, cdbus_type_unix_fd, &raw) != 0
        }
        switch appended {
        case true?: return
        case false?: throw .failed("cannot put \(descriptor) into the message: no file descriptor (or memory) left to duplicate it")
        case nil: throw .invalidArgs("a file descriptor (type 'h') was closed while its message was being built")
        }
    }

    static func append(_ value: DBusValue, to it: UnsafeMutablePointer<DBusMessageIter>) throws(DBusError) {
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
            try container(it, cdbus_type_array, "y") { sub in
                guard !bytes.isEmpty else { return }
                bytes.withUnsafeBufferPointer { buf in
                    check(cdbus_iter_append_byte_array(sub, buf.baseAddress, Int32(buf.count)))
                }
            }
        case .secureBytes(let bytes):
            try container(it, cdbus_type_array, "y") { sub in
                bytes.withUnsafeBytes { buf in
                    guard buf.count > 0 else { return }
                    check(cdbus_iter_append_byte_array(sub, buf.baseAddress?.assumingMemoryBound(to: UInt8.self), Int32(buf.count)))
                }
            }
        case .array(let element, let items):
            try container(it, cdbus_type_array, element.rawValue) { (sub) throws(DBusError) in
                for item in items { try append(item, to: sub) }
            }
        case .dictionary(let k, let v, let entries):
            try container(it, cdbus_type_array, "{" + k.rawValue + v.rawValue + "}") { (sub) throws(DBusError) in
                for entry in entries {
                    try container(sub, cdbus_type_dict_entry, nil) { (e) throws(DBusError) in
                        try append(entry.key, to: e)
                        try append(entry.value, to: e)
                    }
                }
            }
        case .structure(let fields):
            try container(it, cdbus_type_struct, nil) { (sub) throws(DBusError) in
                for f in fields { try append(f, to: sub) }
            }
        case .variant(let inner):
            try container(it, cdbus_type_variant, inner.signatureString) { (sub) throws(DBusError) in
                try append(inner, to: sub)
            }
        case .unixFD(let descriptor):
            try fileDescriptor(it, descriptor)
        }
    }
}
