import CGcrypt
#if canImport(Glibc)
import Glibc
#endif
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

/// Whether the process may lock `bytes` in all (its `RLIMIT_MEMLOCK`, which the secure pages
/// count against as they are mapped; unlimited is `RLIM_INFINITY`, all ones).
func lockedMemoryLimitAllows(_ bytes: Int) -> Bool {
    var limit = rlimit()
    guard getrlimit(__rlimit_resource_t(__RLIMIT_MEMLOCK.rawValue), &limit) == 0 else { return false }
    return limit.rlim_cur == rlim_t.max || limit.rlim_cur >= rlim_t(bytes)
}

/// Marks the mapping that holds libgcrypt's secure memory pool `MADV_DONTDUMP`, so that no core
/// dump (whatever the core size limit, and through any dump handler) contains it. The pool is
/// found as the mapping of `/proc/self/maps` that holds a block just allocated from it.
func excludeSecureMemoryFromCoreDumps() {
    guard let probe = gcry_malloc_secure(1) else { return }
    let address = UInt(bitPattern: probe)
    gcry_free(probe)
    guard let maps = try? FileDescriptor.open("/proc/self/maps", .readOnly) else { return }
    defer { maps.close() }
    guard let bytes = try? maps.readAll() else { return }
    for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
        let range = line.prefix { $0 != " " }.split(separator: "-").compactMap { UInt($0, radix: 16) }
        guard range.count == 2, range[0] <= address, address < range[1],
              let start = UnsafeMutableRawPointer(bitPattern: range[0]) else { continue }
        _ = madvise(start, Int(range[1] - range[0]), MADV_DONTDUMP)
        return
    }
}
