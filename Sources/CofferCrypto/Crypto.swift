import CGcrypt
import CProcess
import Synchronization

/// Process-wide set-up: libgcrypt initialisation (with its locked secure memory pool) and
/// process hardening helpers.
///
/// Secure memory policy: Coffer locks at most `secureMemoryBytes` (4 MiB unless asked
/// otherwise), in two shares (`lockedMemoryShares`). Keys, passwords and secrets live in pages
/// that `SecureAllocator` maps as they are needed and unmaps when they are released (locked,
/// left out of core dumps, wiped; see `LockedPages`), so what is locked follows what is kept.
/// libgcrypt's own secure allocations (cipher and hash handles, big numbers) come from its
/// pool, created once with `GCRYCTL_INIT_SECMEM` at its share's size and never auto-expanded
/// (`GCRYCTL_AUTO_EXPAND_SECMEM` would add pools that are not locked), so `gcry_malloc_secure`
/// fails (-> `CryptoError.secureMemoryExhausted`) rather than handing out unlocked memory.
/// Whether the pool really got locked is checked from the process's `VmLck` in
/// `/proc/self/status` (before/after the pool is created); only then are libgcrypt's "using
/// insecure memory" warnings disabled. If locking failed, the warnings stay on, so the
/// condition is visible on stderr. Each share has its budget (`SecureMemoryBudget`); the
/// pool's is kept below the pool's size, so libgcrypt always finds room for itself.
///
/// Random numbers: libgcrypt is asked for its "system" RNG (`GCRY_RNG_TYPE_SYSTEM`: the kernel's
/// getrandom, read directly). Its default CSPRNG mixes a "fast poll" (getrusage, clocks, pool
/// hashing: about 14 µs) into every `gcry_cipher_open`/`gcry_md_open` once it has been used,
/// which made each AES-GCM call cost ~15 µs; with the system RNG an open costs well under 1 µs.
public enum Crypto {
    /// Fast-path flag: set (release) once initialisation completed.
    private static let initialized = Atomic<Bool>(false)
    /// Serialises the slow path; holds whether the pool was found to be locked.
    private static let state = Mutex<Bool>(false)

    /// Version check, at most `secureMemoryBytes` of locked memory (default 4 MiB: libgcrypt's
    /// locked, fixed pool and the pages mapped for secrets as needed; insecure-memory warnings
    /// suppressed only if the pool really is locked), initialization finished. Idempotent, thread-safe. Later calls' argument is ignored.
    public static func initialize(secureMemoryBytes: Int = 4 << 20) {
        if initialized.load(ordering: .acquiring) { return }
        state.withLock { locked in
            if initialized.load(ordering: .acquiring) { return }
            locked = performInitialization(secureMemoryBytes: secureMemoryBytes)
            initialized.store(true, ordering: .releasing)
        }
    }

    /// True if the secure memory pool was observed to be locked into RAM (after `initialize`),
    /// the locked-memory limit leaves room for all of `secureMemoryBytes`, and every page mapped
    /// for secrets so far was locked. False if locking failed, could not be verified, or another
    /// component initialised libgcrypt first.
    public static var isSecureMemoryLocked: Bool {
        initialize()
        return state.withLock { $0 } && LockedPages.everyRegionLocked
    }

    /// Bytes of locked memory Coffer holds now for keys, passwords and secrets, and the most it
    /// may hold.
    public static var secureMemoryUse: (used: Int, limit: Int) {
        initialize()
        return (SecureMemoryBudget.lockedPages.used, SecureMemoryBudget.lockedPages.limit)
    }

    /// How `bytes` of locked memory are shared: libgcrypt's fixed pool takes an eighth (from
    /// 64 KiB to 512 KiB, where the half left after libgcrypt's reserve holds 64 cipher or hash
    /// handles: one per unlocked collection, and those a call opens), the pages mapped for
    /// secrets the rest (at least four 32 KiB slabs).
    static func lockedMemoryShares(_ bytes: Int) -> (pool: Int, pages: Int) {
        let pool = min(max(bytes / 8, 64 << 10), 512 << 10)
        return (pool, max(bytes - pool, 4 * SecureAllocator.slabSize))
    }

    /// No core dumps: RLIMIT_CORE 0 (soft and hard). The secure memory pool is also excluded
    /// from any dump (`MADV_DONTDUMP`, set when it is made). Unlike `PR_SET_DUMPABLE`, this
    /// leaves the process identifiable to the service (its /proc/PID/exe stays readable).
    /// Returns false if it failed.
    @discardableResult public static func disableCoreDumps() -> Bool {
        cprocess_disable_core_dumps() == 0
    }

    /// Unblock all signals in the calling thread (daemon start-up; see platform notes).
    public static func unblockAllSignals() {
        _ = cprocess_unblock_all_signals()
    }

    /// Internal entry used by every operation: cheap after the first call.
    @inline(__always)
    static func ensureInitialized() {
        if initialized.load(ordering: .acquiring) { return }
        initialize()
    }

    /// The one-time libgcrypt set-up. Returns whether the secure pool is locked and the
    /// locked-memory limit leaves room for the pages too.
    private static func performInitialization(secureMemoryBytes: Int) -> Bool {
        // Advisory and only effective before gcry_check_version; see the type's documentation.
        _ = coffer_gcry_prefer_system_rng()
        // gcry_check_version must be the first real libgcrypt call; it also sets up its locking.
        guard gcry_check_version("1.10.0") != nil else {
            fatalError("CofferCrypto needs libgcrypt >= 1.10.0")
        }
        if coffer_gcry_initialization_finished_p() != 0 {
            // Someone else owns the configuration; we cannot vouch for the pool.
            return false
        }
        let shares = lockedMemoryShares(secureMemoryBytes)
        SecureMemoryBudget.lockedPages.configure(limit: shares.pages)
        let size = UInt32(clamping: shares.pool)
        SecureMemoryBudget.libgcryptPool.configure(poolBytes: Int(size))
        let before = lockedMemoryKiB()
        _ = coffer_gcry_suspend_secmem_warn()
        _ = coffer_gcry_init_secmem(size)
        excludeSecureMemoryFromCoreDumps()
        let after = lockedMemoryKiB()
        var locked = false
        if let before, let after {
            // The pool is rounded up to whole pages; all of it must have become locked.
            locked = after - before >= Int(size) / 1024
        }
        if locked { _ = coffer_gcry_disable_secmem_warn() }
        _ = coffer_gcry_resume_secmem_warn()
        _ = coffer_gcry_initialization_finished()
        return locked && lockedMemoryLimitAllows(shares.pool + shares.pages)
    }
}
