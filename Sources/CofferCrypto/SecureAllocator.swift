import CGcrypt
import Synchronization

/// One block of secure memory handed out by `SecureAllocator` (an address and its extent;
/// ownership is tracked by the holder, so passing it between threads is fine).
struct SecureAllocation: @unchecked Sendable {   // an address and a size; its holder owns the block
    /// Start of the block (never nil, at least `capacity` bytes).
    let pointer: UnsafeMutableRawPointer
    /// Usable size in bytes (the size class for slab slots).
    let capacity: Int
    /// Slab id and slot index for slab slots; nil for blocks taken from libgcrypt directly.
    let slab: (id: Int, slot: Int)?
}

/// Small-block allocator over libgcrypt secure memory (internal).
///
/// libgcrypt's secure pool is a first-fit list walked from its start on every allocation, so
/// with thousands of live blocks each `gcry_malloc_secure` (and every secure cipher or MAC
/// handle) costs tens of microseconds. This allocator takes 32 KiB slabs from the pool and cuts
/// them into power-of-two slots (32 ... 2048 bytes), keeping the number of libgcrypt blocks
/// small and small allocations O(1). Larger requests go to libgcrypt directly. Empty slabs are
/// returned to the pool (one spare per size class is kept). Slots are zeroed on release; the
/// caller wipes them too. Thread-safe (one mutex).
///
/// Every slab and direct block is charged to a `SecureMemoryBudget` before libgcrypt is asked
/// for it, so the pool always keeps the reserve libgcrypt needs for itself.
final class SecureAllocator: Sendable {
    static let shared = SecureAllocator()

    private let budget: SecureMemoryBudget

    /// An allocator charging `budget` (the process's pool budget unless a test gives another).
    init(budget: SecureMemoryBudget = .shared) {
        self.budget = budget
    }

    static let slabSize = 32 << 10
    static let sizeClasses = [32, 64, 128, 256, 512, 1024, 2048]

    private struct Slab {
        let base: UnsafeMutableRawPointer
        let sizeClass: Int        // index into sizeClasses
        var freeSlots: [Int32]    // stack of free slot indices
        var live: Int
    }

    private struct State: @unchecked Sendable {  // raw pointers are only touched under the lock
        var slabs: [Slab?] = []
        var unusedIDs: [Int] = []
        /// Per size class: ids of slabs that have at least one free slot.
        var partial: [[Int]] = Array(repeating: [], count: SecureAllocator.sizeClasses.count)
    }

    private let state = Mutex(State())
    /// Blocks handed out by `allocate` and not yet released.
    private let live = Atomic<Int>(0)

    /// How many blocks are in use: what tests watch to see that a buffer was released (and so
    /// wiped, since `release` zeroes every block first).
    package var liveAllocations: Int { live.load(ordering: .relaxed) }

    private static func sizeClass(for bytes: Int) -> Int? {
        sizeClasses.firstIndex { $0 >= bytes }
    }

    /// At least `bytes` (>= 1) of secure memory, or nil if the pool is exhausted.
    func allocate(_ bytes: Int) -> SecureAllocation? {
        guard let block = allocateBlock(max(bytes, 1)) else { return nil }
        live.add(1, ordering: .relaxed)
        return block
    }

    private func allocateBlock(_ bytes: Int) -> SecureAllocation? {
        guard let c = Self.sizeClass(for: bytes) else { return direct(bytes) }
        let slot: SecureAllocation? = state.withLock { s in
            if s.partial[c].isEmpty {
                guard let base = Self.poolBlock(Self.slabSize, budget: budget) else { return nil }
                let slotSize = Self.sizeClasses[c], count = Self.slabSize / slotSize
                let slab = Slab(base: base, sizeClass: c,
                                freeSlots: (0..<Int32(count)).reversed(), live: 0)
                let id: Int
                if let reused = s.unusedIDs.popLast() { id = reused; s.slabs[id] = slab }
                else { id = s.slabs.count; s.slabs.append(slab) }
                s.partial[c].append(id)
            }
            let id = s.partial[c][s.partial[c].count - 1]
            let index = Int(s.slabs[id]!.freeSlots.removeLast())
            s.slabs[id]!.live += 1
            if s.slabs[id]!.freeSlots.isEmpty { s.partial[c].removeLast() }
            let size = Self.sizeClasses[c]
            return SecureAllocation(pointer: s.slabs[id]!.base + index * size, capacity: size,
                                    slab: (id, index))
        }
        // No room for a new slab: a smaller direct block may still fit.
        return slot ?? direct(bytes)
    }

    private func direct(_ bytes: Int) -> SecureAllocation? {
        guard let pointer = Self.poolBlock(bytes, budget: budget) else { return nil }
        return SecureAllocation(pointer: pointer, capacity: bytes, slab: nil)
    }

    /// `bytes` from libgcrypt's pool, charged to `budget`; nil if either has no room.
    private static func poolBlock(_ bytes: Int, budget: SecureMemoryBudget) -> UnsafeMutableRawPointer? {
        let charge = bytes + SecureMemoryBudget.blockOverhead
        guard budget.take(charge) else { return nil }
        guard let pointer = gcry_malloc_secure(bytes) else {
            budget.give(charge)
            return nil
        }
        return pointer
    }

    /// Returns a block from `poolBlock` to libgcrypt and its charge to the budget.
    private func freePoolBlock(_ pointer: UnsafeMutableRawPointer, bytes: Int) {
        gcry_free(pointer)
        budget.give(bytes + SecureMemoryBudget.blockOverhead)
    }

    /// Zeroes and releases a block from `allocate`.
    func release(_ allocation: SecureAllocation) {
        wipe(allocation.pointer, allocation.capacity)
        live.subtract(1, ordering: .relaxed)
        guard let (id, index) = allocation.slab else {
            freePoolBlock(allocation.pointer, bytes: allocation.capacity)
            return
        }
        let emptied: UnsafeMutableRawPointer? = state.withLock { s in
            let c = s.slabs[id]!.sizeClass
            if s.slabs[id]!.freeSlots.isEmpty { s.partial[c].append(id) }
            s.slabs[id]!.freeSlots.append(Int32(index))
            s.slabs[id]!.live -= 1
            // Return an empty slab to the pool unless it is the last one of its class.
            guard s.slabs[id]!.live == 0, s.partial[c].count > 1 else { return nil }
            let base = s.slabs[id]!.base
            s.partial[c].removeAll { $0 == id }
            s.slabs[id] = nil
            s.unusedIDs.append(id)
            return base
        }
        if let emptied { freePoolBlock(emptied, bytes: Self.slabSize) }
    }

    /// Number of slabs currently held (tests and diagnostics).
    var slabCount: Int { state.withLock { s in s.slabs.count - s.unusedIDs.count } }
}
