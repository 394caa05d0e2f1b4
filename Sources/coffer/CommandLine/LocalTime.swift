import CofferCore
#if canImport(Glibc)
import Glibc
#endif

/// Times as people read them: local time (the TZ environment variable, else the system's
/// zone), in the layout secret-tool prints ("2026-11-23 14:05:09").
enum LocalTime {
    static func format(secondsSince1970 seconds: UInt64) -> String {
        var time = time_t(clamping: seconds)
        var parts = tm()
        _ = zoneRead
        guard localtime_r(&time, &parts) != nil else { return "\(seconds) seconds since 1970" }
        var buffer = [CChar](repeating: 0, count: 64)
        let length = strftime(&buffer, buffer.count, "%Y-%m-%d %H:%M:%S", &parts)
        return String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The time zone, read once per process (each `tzset` looks at /etc/localtime again).
    private static let zoneRead: Void = tzset()
}

extension LocalTime {
    /// What `--since` takes, in words.
    static let sinceRule = "a duration back from now (90s, 30m, 2h, 7d, 2w, or 1h30m) or a date in local time (2026-11-23, 2026-11-23T14:05 or '2026-11-23 14:05:09'; a final Z: UTC)"

    /// The time `text` names, in seconds since 1970: `now` minus a duration (`30m`, `1h30m`;
    /// units s, m, h, d, w), or a date with an optional time of day, in local time unless it
    /// ends in `Z`. Nil when it is neither.
    static func moment(_ text: String, now: UInt64) -> UInt64? {
        if let duration = DurationText.seconds(text) { return now >= duration ? now - duration : 0 }
        return date(text)
    }

    /// `YYYY-MM-DD[(T| )HH:MM[:SS]][Z]`.
    private static func date(_ text: String) -> UInt64? {
        var rest = Substring(text)
        let utc = rest.hasSuffix("Z")
        if utc { rest = rest.dropLast() }
        let parts = rest.split(maxSplits: 1, whereSeparator: { $0 == "T" || $0 == " " })
        guard let day = parts.first else { return nil }
        let date = day.split(separator: "-", omittingEmptySubsequences: false)
        let clock = parts.count == 2 ? parts[1].split(separator: ":", omittingEmptySubsequences: false) : []
        guard date.count == 3, date[0].count == 4, date[1].count == 2, date[2].count == 2,
              parts.count == 1 || (2...3).contains(clock.count), clock.allSatisfy({ $0.count == 2 }) else { return nil }
        let numbers = (date + clock).map { $0.allSatisfy(\.isASCII) ? Int32($0) : nil }
        guard numbers.allSatisfy({ $0 != nil }) else { return nil }
        let n = numbers.map { $0! } + [0, 0, 0]
        guard (1...12).contains(n[1]), (1...31).contains(n[2]), (0...23).contains(n[3]), (0...59).contains(n[4]),
              (0...60).contains(n[5]) else { return nil }
        var broken = tm()
        broken.tm_year = n[0] - 1900
        broken.tm_mon = n[1] - 1
        broken.tm_mday = n[2]
        broken.tm_hour = n[3]
        broken.tm_min = n[4]
        broken.tm_sec = n[5]
        broken.tm_isdst = -1
        tzset()
        let seconds = utc ? timegm(&broken) : mktime(&broken)
        // mktime normalizes (February 30 is March 2): a date that did not exist is refused.
        guard seconds >= 0, broken.tm_mday == n[2], broken.tm_mon == n[1] - 1 else { return nil }
        return UInt64(seconds)
    }
}
