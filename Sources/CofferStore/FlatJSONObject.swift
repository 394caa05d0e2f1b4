import SystemKit

/// A reader for one flat JSON object: members whose values are strings, non-negative integers,
/// `true`, `false` or `null` (what an audit log line holds). Anything else (nested values,
/// fractions, text after the object, a string that is not valid UTF-8) makes the object
/// unreadable: nil, never a trap. A member named twice keeps its last value.
enum FlatJSONObject {
    enum Value: Equatable {
        case string(String)
        case number(UInt64)
        case bool(Bool)
        case null
    }

    /// The members of one object, in the order written.
    struct Members {
        fileprivate var entries: [(name: String, value: Value)] = []

        /// The value of the member `name` (its last, if named twice), or nil.
        subscript(name: String) -> Value? {
            entries.last { $0.name == name }?.value
        }
    }

    static func parse(_ bytes: ArraySlice<UInt8>) -> Members? {
        var reader = Reader(bytes: bytes)
        return reader.object()
    }

    private struct Reader {
        let bytes: ArraySlice<UInt8>
        var index: Int

        init(bytes: ArraySlice<UInt8>) {
            self.bytes = bytes
            index = bytes.startIndex
        }

        mutating func object() -> Members? {
            guard take(UInt8(ascii: "{")) else { return nil }
            var members = Members()
            members.entries.reserveCapacity(10)
            if !take(UInt8(ascii: "}")) {
                repeat {
                    skipSpace()
                    guard let name = string(), take(UInt8(ascii: ":")), let value = value() else { return nil }
                    members.entries.append((name, value))
                } while take(UInt8(ascii: ","))
                guard take(UInt8(ascii: "}")) else { return nil }
            }
            skipSpace()
            return index == bytes.endIndex ? members : nil
        }

        private mutating func value() -> Value? {
            skipSpace()
            guard index < bytes.endIndex else { return nil }
            switch bytes[index] {
            case UInt8(ascii: "\""): return string().map(Value.string)
            case UInt8(ascii: "0")...UInt8(ascii: "9"): return number().map(Value.number)
            default:
                for (word, value) in [("true", Value.bool(true)), ("false", .bool(false)), ("null", .null)]
                where bytes[index...].starts(with: word.utf8) {
                    index += word.utf8.count
                    return value
                }
                return nil
            }
        }

        private mutating func number() -> UInt64? {
            var result: UInt64 = 0
            let start = index
            while index < bytes.endIndex, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
                let (times10, overflow1) = result.multipliedReportingOverflow(by: 10)
                let (sum, overflow2) = times10.addingReportingOverflow(UInt64(bytes[index] - UInt8(ascii: "0")))
                guard !overflow1, !overflow2 else { return nil }
                result = sum
                index += 1
            }
            // JSON allows no leading zero; a fraction or exponent is not an integer.
            if index - start > 1 && bytes[start] == UInt8(ascii: "0") { return nil }
            if index < bytes.endIndex {
                switch bytes[index] {
                case UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"): return nil
                default: break
                }
            }
            return result
        }

        /// A string literal, its escapes resolved.
        private mutating func string() -> String? {
            guard index < bytes.endIndex, bytes[index] == UInt8(ascii: "\"") else { return nil }
            index += 1
            // Most strings have no escape: made straight from the bytes between the quotes.
            let start = index
            while index < bytes.endIndex {
                switch bytes[index] {
                case UInt8(ascii: "\""):
                    index += 1
                    return Self.text(bytes[start..<index - 1])
                case UInt8(ascii: "\\"), 0x00..<0x20:
                    index = start
                    return escapedString()
                default: index += 1
                }
            }
            return nil
        }

        /// `utf8` as a String, or nil when it is not well-formed UTF-8. ASCII (what a log holds
        /// but for some labels) is taken without the generic validation, which costs more than
        /// all the rest of reading a line.
        private static func text(_ utf8: ArraySlice<UInt8>) -> String? {
            utf8.allSatisfy({ $0 < 0x80 }) ? String(decoding: utf8, as: UTF8.self) : String(validating: utf8, as: UTF8.self)
        }

        /// The rest of a string literal with escapes (or a control character, refused).
        private mutating func escapedString() -> String? {
            var out: [UInt8] = []
            while index < bytes.endIndex {
                let byte = bytes[index]
                index += 1
                switch byte {
                case UInt8(ascii: "\""): return String(validating: out, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    guard escape(into: &out) else { return nil }
                case 0x00..<0x20: return nil
                default: out.append(byte)
                }
            }
            return nil
        }

        /// The escape after a backslash, appended to `out` as UTF-8.
        private mutating func escape(into out: inout [UInt8]) -> Bool {
            guard index < bytes.endIndex else { return false }
            let letter = bytes[index]
            index += 1
            switch letter {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(letter)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                guard let unit = hex4() else { return false }
                var scalarValue = UInt32(unit)
                if (0xD800...0xDBFF).contains(unit) {
                    // A surrogate pair: the low half must follow as another \u escape.
                    guard take(UInt8(ascii: "\\"), skippingSpace: false), take(UInt8(ascii: "u"), skippingSpace: false),
                          let low = hex4(), (0xDC00...0xDFFF).contains(low) else { return false }
                    scalarValue = 0x10000 + ((scalarValue - 0xD800) << 10) + (UInt32(low) - 0xDC00)
                }
                guard let scalar = Unicode.Scalar(scalarValue) else { return false }
                out.append(contentsOf: String(Character(scalar)).utf8)
            default: return false
            }
            return true
        }

        private mutating func hex4() -> UInt16? {
            guard bytes.endIndex - index >= 4 else { return nil }
            var value: UInt16 = 0
            for _ in 0..<4 {
                guard let digit = Hex.value(of: bytes[index]) else { return nil }
                value = value << 4 | UInt16(digit)
                index += 1
            }
            return value
        }

        /// Consumes `byte` (after white space, unless told not to) if it is next.
        private mutating func take(_ byte: UInt8, skippingSpace: Bool = true) -> Bool {
            if skippingSpace { skipSpace() }
            guard index < bytes.endIndex, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        private mutating func skipSpace() {
            while index < bytes.endIndex {
                switch bytes[index] {
                case 0x20, 0x09, 0x0A, 0x0D: index += 1
                default: return
                }
            }
        }
    }
}
