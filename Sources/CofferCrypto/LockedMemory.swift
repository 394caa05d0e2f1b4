#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The process's locked memory in KiB (`VmLck` of /proc/self/status), or nil if unreadable.
func lockedMemoryKiB() -> Int? {
    let fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
        let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n < 0 { if errno == EINTR { continue }; return nil }
        if n == 0 { break }
        bytes.append(contentsOf: chunk[0..<n])
    }
    let text = String(decoding: bytes, as: UTF8.self)
    for line in text.split(separator: "\n") where line.hasPrefix("VmLck:") {
        let digits = line.dropFirst("VmLck:".count).filter { $0.isNumber }
        return Int(digits)
    }
    return nil
}
