import CofferCrypto
import Foundation
import Testing

/// The secure memory pool never goes into a core dump: its mapping carries `MADV_DONTDUMP`
/// (`dd` in /proc/self/smaps), whatever the core size limit or the dump handler.
@Suite struct CoreDumpTests {
    @Test func theSecurePoolIsExcludedFromCoreDumps() throws {
        Crypto.initialize()
        try #require(Crypto.isSecureMemoryLocked, "the pool is not locked here (ulimit -l), so it cannot be told from other mappings")
        // Read to the end (a /proc file says it is empty, so Foundation's String(contentsOfFile:)
        // would stop early).
        let file = try #require(FileHandle(forReadingAtPath: "/proc/self/smaps"))
        defer { try? file.close() }
        let smaps = String(decoding: try #require(try file.readToEnd()), as: UTF8.self)
        // Each mapping: a header line, its fields, and last its VmFlags.
        var size = 0
        var locked: [(size: Int, flags: [Substring])] = []
        for line in smaps.split(separator: "\n") {
            if line.hasPrefix("Size:") {
                size = Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
            } else if line.hasPrefix("VmFlags:") {
                let flags = line.split(separator: " ").dropFirst()
                if flags.contains("lo") { locked.append((size, Array(flags))) }
            }
        }
        let pools = locked.filter { $0.size >= 512 }   // kB: the pool is 512 KiB of the default 4 MiB
        try #require(!pools.isEmpty, "no locked mapping of 512 KiB or more in /proc/self/smaps")
        for pool in pools { #expect(pool.flags.contains("dd"), "the locked pool's flags: \(pool.flags)") }
    }
}
