#if canImport(Glibc)
import Glibc
#endif

/// Times as people read them: local time (the TZ environment variable, else the system's
/// zone), in the layout secret-tool prints ("2026-11-23 14:05:09").
enum LocalTime {
    static func format(secondsSince1970 seconds: UInt64) -> String {
        var time = time_t(clamping: seconds)
        var parts = tm()
        tzset()
        guard localtime_r(&time, &parts) != nil else { return "\(seconds) seconds since 1970" }
        var buffer = [CChar](repeating: 0, count: 64)
        let length = strftime(&buffer, buffer.count, "%Y-%m-%d %H:%M:%S", &parts)
        return String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
