/// Spans of time as people type them: number-unit pairs with units `s`, `m`, `h`, `d`, `w`
/// (`90s`, `15m`, `1h30m`, `30d`), as the CLI's options and the settings file take them.
public enum DurationText {
    private static let units: [(Character, UInt64)] = [("w", 604_800), ("d", 86_400), ("h", 3600), ("m", 60), ("s", 1)]

    /// `1h30m` as seconds (nil unless it is number-unit pairs and nothing else).
    public static func seconds(_ text: String) -> UInt64? {
        var total: UInt64 = 0, digits = ""
        for character in text {
            if character.isASCII && character.isNumber {
                digits.append(character)
            } else if let unit = units.first(where: { $0.0 == character })?.1, let value = UInt64(digits) {
                let (product, overflow1) = value.multipliedReportingOverflow(by: unit)
                let (sum, overflow2) = total.addingReportingOverflow(product)
                guard !overflow1, !overflow2 else { return nil }
                total = sum
                digits = ""
            } else {
                return nil
            }
        }
        return digits.isEmpty && !text.isEmpty ? total : nil
    }

    /// The shortest text `seconds(_:)` reads back as `seconds`: `15m`, `4h`, `1h30m`, `0s`.
    public static func describe(_ seconds: UInt64) -> String {
        guard seconds > 0 else { return "0s" }
        var rest = seconds, text = ""
        for (unit, size) in units where rest >= size {
            text += "\(rest / size)\(unit)"
            rest %= size
        }
        return text
    }
}
