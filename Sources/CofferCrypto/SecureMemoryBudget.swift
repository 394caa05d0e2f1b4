import Synchronization

/// Accounts for the locked memory Coffer holds, so that no client can make it lock more than
/// its share and libgcrypt's fixed pool can never run dry under libgcrypt's own feet.
///
/// There are two budgets. `lockedPages` holds what `SecureAllocator` maps for keys, passwords
/// and secrets (whole pages). `libgcryptPool` holds libgcrypt's fixed secure pool, where
/// libgcrypt allocates for itself (cipher and hash handles, big-number temporaries, the digest
/// copy an HMAC makes when it finishes); several of those allocations end the process with
/// "Fatal error: Cannot allocate memory" when the pool is full instead of reporting an error,
/// so Coffer charges a fixed estimate for each handle or big-number computation it opens
/// (`SecureReservation`) and never lets those reach the pool's size: it may hold at most
/// `limit` bytes, the pool less a reserve (`reserve(forPool:)`) left for libgcrypt's
/// short-lived allocations inside one call. A request over a limit fails with
/// `CryptoError.secureMemoryExhausted` before anything is asked of libgcrypt or the kernel.
final class SecureMemoryBudget: Sendable {
    /// The process's budget for `SecureAllocator`'s pages (configured by `Crypto.initialize`).
    static let lockedPages = SecureMemoryBudget()
    /// The process's budget in libgcrypt's pool (configured by `Crypto.initialize`).
    static let libgcryptPool = SecureMemoryBudget()

    private struct State {
        var limit = Int.max
        var used = 0
    }
    private let state = Mutex(State())

    /// A budget of `limit` bytes (tests); the process's start unlimited until configured.
    init(limit: Int = .max) {
        state.withLock { $0.limit = limit }
    }

    /// What is kept free for libgcrypt's own short-lived allocations in a pool of `pool` bytes:
    /// an eighth, at least 256 KiB, at most half the pool.
    static func reserve(forPool pool: Int) -> Int {
        min(max(pool / 8, 256 << 10), pool / 2)
    }

    /// Sets the limit for a pool of `poolBytes` bytes.
    func configure(poolBytes: Int) {
        configure(limit: poolBytes - Self.reserve(forPool: poolBytes))
    }

    /// Sets the limit.
    func configure(limit: Int) {
        state.withLock { $0.limit = limit }
    }

    /// Charges `bytes`; false (and nothing charged) if that would pass the limit.
    func take(_ bytes: Int) -> Bool {
        state.withLock { s in
            guard bytes <= s.limit - s.used else { return false }
            s.used += bytes
            return true
        }
    }

    /// Gives back `bytes` charged earlier.
    func give(_ bytes: Int) {
        state.withLock { s in
            precondition(bytes <= s.used, "secure memory budget: more given back than taken")
            s.used -= bytes
        }
    }

    /// Bytes charged now.
    var used: Int { state.withLock { $0.used } }
    /// Most bytes that may be charged at once.
    var limit: Int { state.withLock { $0.limit } }
}

/// A charge on the secure-memory budget for something libgcrypt allocates in the pool (a
/// handle, the numbers of a Diffie-Hellman computation), held for as long as that lives.
final class SecureReservation: Sendable {
    /// What one cipher or hash handle is charged: more than libgcrypt's AES, GCM and SHA-256
    /// handles take (about 1 to 2 KiB each).
    static let handleBytes = 4 << 10
    /// What one Diffie-Hellman key pair and agreement is charged: its secure big numbers and
    /// the temporaries of modular exponentiation in the 1024-bit group.
    static let diffieHellmanBytes = 16 << 10

    private let bytes: Int
    private let budget: SecureMemoryBudget

    /// Charges `bytes`, or throws `secureMemoryExhausted` if the budget has no room.
    init(_ bytes: Int, budget: SecureMemoryBudget = .libgcryptPool) throws {
        guard budget.take(bytes) else { throw CryptoError.secureMemoryExhausted(requested: bytes) }
        self.bytes = bytes
        self.budget = budget
    }

    deinit { budget.give(bytes) }
}
