import CofferCore
import SystemKit

/// One line of the audit log: an `AuditEvent` as a JSON object (JSON Lines), and back.
///
///     {"time":1795000000,"action":"read","outcome":"ok","app":"exe:/usr/bin/secret-tool","collection":"login","item":3,"sealed":"9f3c…","detail":"creator"}
///
/// `time` is in seconds since 1970 (UTC); `app` is `Application.encoded`; `action` and
/// `outcome` are the raw values of `AuditEvent.Action` and `.Outcome`; `sealed` is the sealed
/// label in hex (`label`, the label in clear, is only in lines older versions wrote and in
/// what `coffer log --json` prints). Strings are escaped as
/// JSON requires (quote, backslash, every control character), everything else is written as
/// UTF-8, so any label round-trips and no label can end a line early.
public enum AuditLogRecord {
    /// `event` as one line, ending in a newline; fields that are nil are left out.
    public static func line(for event: AuditEvent) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(expectedLength(of: event))
        append(event, absentAsNull: false, to: &out)
        out.append(0x0A)
        return out
    }

    /// Appends a line for each of `events`, as `line(for:)` makes it. The fields up to the
    /// collection are encoded once for a run of events that share them (the items of one read).
    public static func appendLines(for events: [AuditEvent], to out: inout [UInt8]) {
        var shared: (event: AuditEvent, prefix: [UInt8])?
        for event in events {
            if let known = shared, sharesPrefix(known.event, event) {
                out.append(contentsOf: known.prefix)
            } else {
                var prefix: [UInt8] = []
                appendPrefix(event, absentAsNull: false, to: &prefix)
                out.append(contentsOf: prefix)
                shared = (event, prefix)
            }
            appendRest(event, absentAsNull: false, to: &out)
            out.append(0x0A)
        }
    }

    /// Whether the fields `appendPrefix` writes are the same for `a` and `b`.
    private static func sharesPrefix(_ a: AuditEvent, _ b: AuditEvent) -> Bool {
        a.time == b.time && a.action == b.action && a.outcome == b.outcome && a.application == b.application && a.collection == b.collection
    }

    /// `event` as a JSON object without a newline. With `absentAsNull`, every field is there
    /// (`null` when the event has none), for readers that want a fixed shape.
    public static func json(_ event: AuditEvent, absentAsNull: Bool) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(expectedLength(of: event))
        append(event, absentAsNull: absentAsNull, to: &out)
        return out
    }

    /// Enough room for a line of `event` unless its strings need escapes.
    private static func expectedLength(of event: AuditEvent) -> Int {
        160 + (event.label?.utf8.count ?? 0) + 2 * (event.sealedLabel?.count ?? 0) + (event.application?.name.utf8.count ?? 0) + (event.detail?.utf8.count ?? 0)
    }

    private static func append(_ event: AuditEvent, absentAsNull: Bool, to out: inout [UInt8]) {
        appendPrefix(event, absentAsNull: absentAsNull, to: &out)
        appendRest(event, absentAsNull: absentAsNull, to: &out)
    }

    /// The line's opening and its fields up to the collection.
    private static func appendPrefix(_ event: AuditEvent, absentAsNull: Bool, to out: inout [UInt8]) {
        raw(#"{"time":"#, &out)
        appendDecimal(event.time, to: &out)
        field("action", event.action.rawValue, absentAsNull, &out)
        field("outcome", event.outcome.rawValue, absentAsNull, &out)
        if let application = event.application {
            // Application.encoded, without making the string.
            raw(#","app":""#, &out)
            raw(application.kind.rawValue, &out)
            out.append(UInt8(ascii: ":"))
            JSONString.appendContents(application.name.utf8, to: &out)
            out.append(UInt8(ascii: "\""))
        } else if absentAsNull {
            raw(#","app":null"#, &out)
        }
        field("collection", event.collection?.rawValue, absentAsNull, &out)
    }

    /// The line's fields after the collection, and its closing brace.
    private static func appendRest(_ event: AuditEvent, absentAsNull: Bool, to out: inout [UInt8]) {
        if let item = event.item {
            raw(#","item":"#, &out)
            appendDecimal(item, to: &out)
        } else if absentAsNull {
            raw(#","item":null"#, &out)
        }
        field("label", event.label, absentAsNull, &out)
        if let sealed = event.sealedLabel {
            raw(#","sealed":""#, &out)
            raw(Hex.encode(sealed), &out)
            out.append(UInt8(ascii: "\""))
        } else if absentAsNull {
            raw(#","sealed":null"#, &out)
        }
        field("detail", event.detail, absentAsNull, &out)
        if let repeated = event.repeated {
            raw(#","repeated":"#, &out)
            appendDecimal(repeated, to: &out)
        } else if absentAsNull {
            raw(#","repeated":null"#, &out)
        }
        out.append(UInt8(ascii: "}"))
    }

    /// The event one line holds (without its newline), or nil when the line is not a whole
    /// record: cut short, damaged, or naming an action, outcome, application or collection
    /// this version does not know. Fields it does not know are ignored.
    public static func event(fromLine line: ArraySlice<UInt8>) -> AuditEvent? {
        var reader = Reader()
        return reader.event(fromLine: line)
    }

    /// Reads the lines of one log: as `event(fromLine:)`, remembering the last application
    /// (a log's lines name few, over and over).
    public struct Reader {
        private var lastApplication: (encoded: String, value: Application)?

        public init() {}

        public mutating func event(fromLine line: ArraySlice<UInt8>) -> AuditEvent? {
            guard let fields = FlatJSONObject.parse(line),
                  case .number(let time) = fields["time"],
                  case .string(let actionName) = fields["action"], let action = AuditEvent.Action(rawValue: actionName),
                  case .string(let outcomeName) = fields["outcome"], let outcome = AuditEvent.Outcome(rawValue: outcomeName)
            else { return nil }
            var event = AuditEvent(time: time, action: action, outcome: outcome)
            switch fields["app"] {
            case nil, .null: break
            case .string(let encoded)?:
                if let last = lastApplication, last.encoded == encoded {
                    event.application = last.value
                } else {
                    guard let application = Application(encoded: encoded) else { return nil }
                    lastApplication = (encoded, application)
                    event.application = application
                }
            default: return nil
            }
            switch fields["collection"] {
            case nil, .null: break
            case .string(let name)?:
                guard let collection = CollectionID(name) else { return nil }
                event.collection = collection
            default: return nil
            }
            switch fields["item"] {
            case nil, .null: break
            case .number(let item)?: event.item = item
            default: return nil
            }
            guard let label = AuditLogRecord.optionalString(fields["label"]), let detail = AuditLogRecord.optionalString(fields["detail"]) else { return nil }
            event.label = label
            event.detail = detail
            switch fields["sealed"] {
            case nil, .null: break
            case .string(let digits)?:
                guard let sealed = Hex.decode(digits) else { return nil }
                event.sealedLabel = sealed
            default: return nil
            }
            switch fields["repeated"] {
            case nil, .null: break
            case .number(let count)?: event.repeated = count
            default: return nil
            }
            return event
        }
    }

    /// A string field (`.some(nil)` when absent or null; nil when it is something else).
    private static func optionalString(_ value: FlatJSONObject.Value?) -> String?? {
        switch value {
        case nil, .null?: .some(nil)
        case .string(let text)?: .some(text)
        default: nil
        }
    }

    /// Appends the UTF-8 of `text` (copied whole: faster than a byte at a time).
    private static func raw(_ text: String, _ out: inout [UInt8]) {
        var text = text
        text.withUTF8 { out.append(contentsOf: $0) }
    }

    /// Appends the decimal digits of `value`.
    private static func appendDecimal(_ value: UInt64, to out: inout [UInt8]) {
        var digits = 1
        var rest = value / 10
        while rest > 0 {
            digits += 1
            rest /= 10
        }
        let start = out.count
        out.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: digits))
        rest = value
        for index in (start..<start + digits).reversed() {
            out[index] = UInt8(ascii: "0") + UInt8(rest % 10)
            rest /= 10
        }
    }

    /// `,"name":"value"` (or `,"name":null`, or nothing).
    private static func field(_ name: String, _ value: String?, _ absentAsNull: Bool, _ out: inout [UInt8]) {
        guard value != nil || absentAsNull else { return }
        raw(#",""#, &out)
        raw(name, &out)
        raw(#"":"#, &out)
        if let value {
            JSONString.append(value.utf8, to: &out)
        } else {
            out.append(contentsOf: "null".utf8)
        }
    }
}
