#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Whole pages of anonymous memory for `SecureAllocator`, mapped when asked for and given back
/// to the kernel when released, so the locked memory cofferd holds follows what it keeps
/// (gnome-keyring's secure memory grows the same way) instead of a fixed pool.
///
/// Every region is locked into RAM (`mlock`: never written to swap), left out of core dumps
/// (`MADV_DONTDUMP`) and reads as zeros in a forked child (`MADV_WIPEONFORK`). A region is
/// wiped before it is unmapped. If the locked-memory limit refuses a lock, the region is used
/// all the same (as libgcrypt does with its pool) and `everyRegionLocked` turns false;
/// `Crypto.isSecureMemoryLocked` reports it.
enum LockedPages {
    /// The size of a page.
    static let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))

    /// False once a region could not be locked.
    private static let locked = Atomic<Bool>(true)

    /// Whether every region mapped so far was locked into RAM.
    static var everyRegionLocked: Bool { locked.load(ordering: .relaxed) }

    /// `bytes` rounded up to whole pages; the largest whole number of pages for a size that
    /// has none above it (which no budget then has room for).
    static func rounded(_ bytes: Int) -> Int {
        let (sum, overflow) = bytes.addingReportingOverflow(pageSize - 1)
        return (overflow ? Int.max : sum) / pageSize * pageSize
    }

    /// A zero-filled region of `rounded(bytes)` bytes, or nil if the kernel has no memory for it.
    static func map(_ bytes: Int) -> UnsafeMutableRawPointer? {
        let size = rounded(bytes)
        let region = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
        guard let region, region != MAP_FAILED else { return nil }
        if mlock(region, size) != 0 { locked.store(false, ordering: .relaxed) }
        _ = madvise(region, size, MADV_DONTDUMP)
        _ = madvise(region, size, MADV_WIPEONFORK)
        return region
    }

    /// Wipes and unmaps a region from `map(bytes)`.
    static func unmap(_ region: UnsafeMutableRawPointer, _ bytes: Int) {
        let size = rounded(bytes)
        wipe(region, size)
        _ = munlock(region, size)
        _ = munmap(region, size)
    }
}
