import DBusKit

/// Runs one fuzz input through what the daemon does with every message it receives: libdbus
/// reads it from the wire, the object server reads its headers and checks its signature,
/// DBusKit decodes its arguments, the handlers take them apart with the typed accessors, and
/// the answer is built as `MethodCall` builds it (a reply carrying values, or an error reply).
///
/// Besides crashes, it traps when DBusKit breaks a promise the daemon relies on: the decoded
/// arguments have exactly the message's signature (the handlers force-unwrap accessors once
/// the object server matched it), every decoded value passes DBusKit's own validation and
/// comes back unchanged through a reply, and strings escape into valid path elements.
public enum DBusMessageHarness {
    public static func run(_ bytes: [UInt8]) {
        for message in DBusMessage.messages(inWireFormat: bytes) { exercise(message) }
    }

    private static func exercise(_ message: DBusMessage) {
        // The headers, as the dispatcher, signal rules and object server read them.
        let header = SignalHeader(message)
        _ = SignalRule(interface: header.interface, member: header.member, path: header.path).matches(header)
        _ = (message.kind, message.errorName, message.destination, message.serial, message.replySerial,
             message.noReplyExpected, message.error)
        if let path = header.path { expect(ObjectPath.isValid(path.rawValue), "libdbus passed the path '\(path)'") }
        let signature = message.signature
        expect(Signature.isValid(signature.rawValue), "libdbus passed the signature '\(signature)'")

        let arguments: [DBusValue]
        do {
            arguments = try message.arguments()
        } catch {
            // A Unix file descriptor (`h`, also inside variants) that did not come with the
            // message (bytes from the wire carry none) is the only thing DBusKit refuses.
            expect(error.name == DBusError.Name.invalidArgs && error.message.contains("file descriptor"),
                   "arguments of type '\(signature)' failed to decode: \(error)")
            answer(message, with: .failure(.invalidArgs("cannot decode arguments: \(error.message)")))
            return
        }
        let decoded = arguments.map(\.signatureString).joined()
        expect(decoded == signature.rawValue, "message of type '\(signature)' decoded as '\(decoded)'")
        for value in arguments {
            do {
                try value.validate()
            } catch {
                expect(false, "decoded value of type '\(value.signatureString)' fails validation: \(error)")
            }
            takeApart(value)
        }
        answer(message, with: .success(arguments))
        answer(message, with: .failure(DBusError(name: "\(header.interface ?? "").Error.\(header.member ?? "")",
                                                 message: arguments.first?.string ?? "")))
    }

    /// Every accessor, on every value: none may trap, and those the Secret Service handlers
    /// force-unwrap for a signature must succeed on a value of that signature.
    private static func takeApart(_ value: DBusValue) {
        _ = (value.string, value.objectPath, value.bool, value.uint32, value.int32, value.uint64, value.int64,
             value.bytes, value.arrayElements, value.stringArray, value.objectPathArray)
        switch value.signatureString {
        case "s", "o", "g", "b", "v", "ao", "ay", "a{ss}", "a{sv}", "(oayays)":
            expect(unwrapsAsTheHandlersDo(value), "an accessor failed on a value of type '\(value.signatureString)'")
        default:
            break
        }
        switch value {
        case .string(let text):
            let element = ObjectPath.escapeElement(text)
            expect(ObjectPath.isValid("/" + element), "'\(text)' escapes into the invalid element '\(element)'")
            expect(ObjectPath.unescapeElement(element) == text, "'\(text)' does not survive escaping")
        case .objectPath(let path):
            expect(ObjectPath.isValid(path.rawValue), "libdbus passed the path '\(path)'")
            _ = (path.elements, path.parent, path.lastElement.map(ObjectPath.unescapeElement))
        case .signature(let signature):
            expect(Signature.isValid(signature.rawValue), "libdbus passed the signature '\(signature)'")
        case .array(_, let items), .structure(let items):
            items.forEach(takeApart)
        case .dictionary(_, _, let entries):
            _ = (value.stringDictionary, value.variantDictionary)
            for entry in entries {
                takeApart(entry.key)
                takeApart(entry.value)
            }
        case .variant(let inner):
            takeApart(inner)
        default:
            break
        }
    }

    /// Whether the accessor a handler force-unwraps for a value of this type gives a result
    /// (`ServiceObject`, `CollectionObject`, `ItemObject`, `SecretServer.secret(from:)`).
    private static func unwrapsAsTheHandlersDo(_ value: DBusValue) -> Bool {
        switch value.signatureString {
        case "s": return value.string != nil
        case "o": return value.objectPath != nil
        case "b": return value.bool != nil
        case "v": return value.variantValue != nil
        case "ay": return value.bytes != nil
        case "ao": return value.objectPathArray?.count == value.arrayElements?.count
        case "a{ss}": return value.stringDictionary != nil
        case "a{sv}": return value.variantDictionary != nil
        case "(oayays)":
            guard let fields = value.structureFields else { return false }
            return fields[0].objectPath != nil && fields[1].bytes != nil && fields[2].bytes != nil
                && fields[3].string != nil
        default: return true
        }
    }

    /// Builds the answer as `MethodCall` does; a reply must carry the values back unchanged.
    private static func answer(_ call: DBusMessage, with result: Result<[DBusValue], DBusError>) {
        guard call.kind == .methodCall, !call.noReplyExpected else { return }
        switch result {
        case .success(let values):
            guard let reply = try? call.makeReply(values) else { return }
            let echoed = try? reply.arguments()
            expect(echoed.map { same($0, values) } ?? false, "a reply does not carry back the values it was built from")
        case .failure(let error):
            _ = try? call.makeErrorReply(error)
        }
    }

    /// Equal, or equal but for NaN doubles (which are never `==`).
    private static func same(_ a: [DBusValue], _ b: [DBusValue]) -> Bool {
        a == b || String(describing: a) == String(describing: b)
    }
}

/// Traps with `message` when `condition` fails: how the harnesses report a broken promise to
/// the fuzzer (as a crash) and to the replay tests.
func expect(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) {
    if !condition() { preconditionFailure(message()) }
}
