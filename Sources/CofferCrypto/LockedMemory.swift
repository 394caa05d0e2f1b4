import SystemKit

/// The process's locked memory in KiB (`VmLck` of /proc/self/status), or nil if unreadable.
func lockedMemoryKiB() -> Int? {
    guard let status = try? FileDescriptor.open("/proc/self/status", .readOnly) else { return nil }
    defer { status.close() }
    guard let bytes = try? status.readAll() else { return nil }
    let text = String(decoding: bytes, as: UTF8.self)
    for line in text.split(separator: "\n") where line.hasPrefix("VmLck:") {
        let digits = line.dropFirst("VmLck:".count).filter { $0.isNumber }
        return Int(digits)
    }
    return nil
}
